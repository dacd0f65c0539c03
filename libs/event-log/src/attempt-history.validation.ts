import type { DeliveryAttempt } from './event-log.port';
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
}

/** The stored form of one attempt (JSON on both adapters). */
export interface StoredAttempt {
  at: string;
  outcome: string;
}

export function toStoredAttempt(attempt: DeliveryAttempt): StoredAttempt {
  return { at: attempt.at.toISOString(), outcome: attempt.outcome.slice(0, MAX_ATTEMPT_OUTCOME_LENGTH) };
}

export function fromStoredAttempts(stored: StoredAttempt[]): {
  firstFailedAt: Date;
  attempts: DeliveryAttempt[];
} {
  const attempts = stored.map((attempt) => ({ at: new Date(attempt.at), outcome: attempt.outcome }));
  return { firstFailedAt: attempts[0].at, attempts };
}
