/**
 * What the router does with a message after one delivery attempt, decided from facts the event log
 * keeps (its delivery count, the time it was stored, the time of its first failed attempt) and the
 * attempt's outcome, so that every replica, and the same replica after a restart, decides alike.
 */

/** The first retry waits about this long; each further one doubles it, up to the cap. */
export const BASE_RETRY_DELAY_MS = 1_000;
export const MAX_RETRY_DELAY_MS = 10 * 60_000;

/** What one attempt came to, as the delivery adapter reported it. */
export type AttemptResult =
  | { outcome: 'delivered' }
  /** Refused for good (a 4xx other than 429, a message the destination can never take). */
  | { outcome: 'discard'; reason: string }
  /** Failed in a way that may pass later (5xx, 429, timeout, connection refused). */
  | { outcome: 'retry'; reason: string; retryAfterMs?: number };

export interface SettlementFacts {
  attempt: AttemptResult;
  /** The log's delivery count of this message for this consumer: 1 on the first delivery. */
  deliveryCount: number;
  /** When the log stored the message. */
  storedAt: Date;
  /**
   * When the first failed attempt of this message for this consumer was made, as the log remembers
   * it; for a failed attempt, the log has recorded it before deciding, so this is never later than now.
   */
  firstFailedAt: Date | null;
  now: Date;
  /** How long a failing message is retried, counted from its first failed attempt. */
  retryWindowMs: number;
  /** A number in [0, 1) that spreads retries (jitter); the caller draws it, so this stays pure. */
  jitter: number;
}

export type Settlement =
  | { action: 'delivered' }
  | { action: 'discard'; reason: string }
  | { action: 'retry'; delayMs: number }
  | { action: 'dead-letter'; reason: string };

export function decideSettlement(facts: SettlementFacts): Settlement {
  const { attempt } = facts;
  if (attempt.outcome === 'delivered') return { action: 'delivered' };
  if (attempt.outcome === 'discard') return { action: 'discard', reason: attempt.reason };

  const now = validTime(facts.now, 'now');
  // A replica with a clock behind the one that stored the message must not date the failure before it.
  const firstFailedAt = Math.max(
    validTime(facts.firstFailedAt ?? facts.now, 'firstFailedAt'),
    validTime(facts.storedAt, 'storedAt'),
  );
  const windowEndsAt = firstFailedAt + facts.retryWindowMs;
  if (now >= windowEndsAt) {
    return {
      action: 'dead-letter',
      reason: `retry window of ${facts.retryWindowMs} ms exhausted: ${attempt.reason}`,
    };
  }
  // The last retry is made when the window ends, so the message is dead-lettered one window after
  // its first failure, not up to a whole backoff step later.
  const delayMs = Math.min(
    retryDelayMs(facts.deliveryCount, attempt.retryAfterMs, facts.jitter),
    windowEndsAt - now,
  );
  return { action: 'retry', delayMs };
}

/**
 * Randomized exponential backoff: a delay between half and all of `base * 2^(attempt-1)`, so that
 * many messages failing together do not retry together. A destination's `Retry-After` is honoured
 * when it asks for longer, up to the cap.
 */
export function retryDelayMs(
  deliveryCount: number,
  retryAfterMs: number | undefined,
  jitter: number,
): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, BASE_RETRY_DELAY_MS * 2 ** Math.max(0, deliveryCount - 1));
  const spread = Math.min(1, Math.max(0, jitter));
  const jittered = Math.round(exponential / 2 + spread * (exponential / 2));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_DELAY_MS));
}

function validTime(date: Date, name: string): number {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new RangeError(`${name} is an invalid Date`);
  return time;
}
