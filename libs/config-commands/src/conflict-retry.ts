/**
 * How often a command is decided again when its append lost a race (`WrongExpectedRevisionError`):
 * each new attempt reads the stream the winner wrote to and decides on it, after a short pause
 * drawn at random so that writers who collided once do not collide again in step.
 */
export interface ConflictRetry {
  /** Attempts in all, the first included: 1 never retries. */
  attempts: number;
  /** The pause before the second attempt; it doubles before each one after, up to `maxDelayMs`. */
  minDelayMs: number;
  maxDelayMs: number;
}

/**
 * The Config API's operators' commands: a lost race answers 409 code 10 and the client decides
 * whether to send its change again (docs/config-api.md, errors), so the handler does not.
 */
export const RUN_ONCE: ConflictRetry = { attempts: 1, minDelayMs: 0, maxDelayMs: 0 };

/**
 * Writers whose command stays right on whatever state the winner left: the router recording what a
 * job did, and the checks that hold an invariant across streams (a source's tracking plan).
 */
export const RETRY_ON_CONFLICT: ConflictRetry = { attempts: 5, minDelayMs: 5, maxDelayMs: 200 };

/** The pause before attempt `attempt + 1`: half to all of the doubled step (`random` in [0, 1)). */
export function conflictRetryDelayMs(retry: ConflictRetry, attempt: number, random: number): number {
  const step = Math.min(retry.maxDelayMs, retry.minDelayMs * 2 ** (attempt - 1));
  return Math.round(step / 2 + (step / 2) * random);
}
