import { EventLogUnavailableError } from '../event-log.errors';

/**
 * The longest a `markSeenOnce` key is remembered (the JetStream stream's `max_age`): a key may count
 * against the capacity until then, even when its own ttl is shorter.
 */
export const MAX_SEEN_ONCE_TTL_MS = 10 * 60 * 1000;
/**
 * Keys `markSeenOnce` remembers at once by default. Callers count each key against a rate limit
 * before storing it and keep it minutes, so this bound is far above honest use; each key costs
 * about 150 bytes on disk.
 */
export const DEFAULT_SEEN_ONCE_CAPACITY = 100_000;

/** One-time keys remembered for a while by every process sharing the log. */
export interface SeenOnce {
  /**
   * Records `key` as seen for `ttlMs`, durably and for every process sharing this log (a restart or
   * another replica sees it too): resolves true when no live record of the key existed and this call
   * made one, false when one exists (nothing is changed). Of concurrent calls for one key, exactly
   * one resolves true. Used to refuse a replayed one-time value (an OAuth assertion's `jti`).
   *
   * Keys are 1-128 characters of A-Z a-z 0-9 _ - (pass a hash of what is remembered, so its size
   * never depends on a caller's input); `ttlMs` is 1..`MAX_SEEN_ONCE_TTL_MS`. Rejects with
   * `SeenOnceCapacityError` when `seenOnceCapacity` live keys are remembered already: refusing is
   * safe, forgetting a live key to make room would not be.
   */
  markSeenOnce(key: string, ttlMs: number): Promise<boolean>;
}

/** DI token of the seen-once keys: the process's event log, which keeps them. */
export const SEEN_ONCE = Symbol('SeenOnce');

/** `markSeenOnce` holds `seenOnceCapacity` live keys: try again once some have expired. */
export class SeenOnceCapacityError extends EventLogUnavailableError {
  constructor(capacity: number) {
    super(`the event log already remembers ${capacity} seen-once keys (its capacity); retry later`);
    this.name = 'SeenOnceCapacityError';
  }
}
