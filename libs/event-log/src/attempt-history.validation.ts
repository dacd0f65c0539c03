import {
  UNSETTLED_ATTEMPT_OUTCOME,
  type DeliveryAttempt,
  type FailedAttempts,
  type StartedAttempt,
} from './event-log.port';
import { assertConsumerName, assertPositiveInteger } from './event-log.validation';

/** Longest outcome text kept per attempt: enough for any status line or error message. */
export const MAX_ATTEMPT_OUTCOME_LENGTH = 500;

export function assertAttemptKey(consumerName: string, sequence: number): void {
  assertConsumerName(consumerName);
  assertPositiveInteger('sequence', sequence);
}

export function assertAttempt(attempt: DeliveryAttempt): void {
  if (!(attempt?.at instanceof Date) || Number.isNaN(attempt.at.getTime())) {
    throw new TypeError('attempt.at must be a valid Date');
  }
  if (typeof attempt.outcome !== 'string') throw new TypeError('attempt.outcome must be a string');
  if (attempt.deliveryCount !== undefined)
    assertPositiveInteger('attempt.deliveryCount', attempt.deliveryCount);
}

export function assertStartedAttempt(started: StartedAttempt): void {
  if (!(started?.at instanceof Date) || Number.isNaN(started.at.getTime())) {
    throw new TypeError('started.at must be a valid Date');
  }
  assertPositiveInteger('started.deliveryCount', started.deliveryCount);
}

/**
 * The stored form of one attempt (JSON on both adapters). `delivery` and `unsettled` are absent from
 * histories written before attempts were recorded as started; such attempts read as settled failures.
 */
export interface StoredAttempt {
  at: string;
  outcome: string;
  delivery?: number;
  unsettled?: true;
}

/**
 * The stored history with a failed attempt added: over the unsettled start of its delivery, or appended.
 * Unchanged (null) when that delivery's failure is recorded already: a delivery fails once, so a write
 * repeated because its answer was lost (an election of the store's leader) adds nothing.
 */
export function withFailedAttempt(
  stored: readonly StoredAttempt[],
  attempt: DeliveryAttempt,
): StoredAttempt[] | null {
  const failure: StoredAttempt = {
    at: attempt.at.toISOString(),
    outcome: attempt.outcome.slice(0, MAX_ATTEMPT_OUTCOME_LENGTH),
  };
  if (attempt.deliveryCount === undefined) return [...stored, failure];
  failure.delivery = attempt.deliveryCount;
  if (stored.some((entry) => entry.delivery === attempt.deliveryCount && entry.unsettled !== true))
    return null;
  const started = stored.findIndex(
    (entry) => entry.unsettled === true && entry.delivery === attempt.deliveryCount,
  );
  if (started < 0) return [...stored, failure];
  // In the start's place: the history stays in the order attempts began.
  return stored.map((entry, index) => (index === started ? failure : entry));
}

/**
 * The stored history with an unsettled attempt of the started delivery appended; unchanged (null)
 * when that delivery's attempt is recorded already, started or failed.
 */
export function withStartedAttempt(
  stored: readonly StoredAttempt[],
  started: StartedAttempt,
): StoredAttempt[] | null {
  if (stored.some((entry) => entry.delivery === started.deliveryCount)) return null;
  return [
    ...stored,
    {
      at: started.at.toISOString(),
      outcome: UNSETTLED_ATTEMPT_OUTCOME,
      delivery: started.deliveryCount,
      unsettled: true,
    },
  ];
}

export function fromStoredAttempts(stored: readonly StoredAttempt[]): FailedAttempts {
  const attempts = stored.map((entry) => {
    const attempt: DeliveryAttempt = { at: new Date(entry.at), outcome: entry.outcome };
    if (entry.delivery !== undefined) attempt.deliveryCount = entry.delivery;
    if (entry.unsettled === true) attempt.unsettled = true;
    return attempt;
  });
  return { firstFailedAt: attempts[0].at, attempts };
}
