import type { FeedSubscription } from './message-id.feed';

/**
 * The dedupe index: which message ids the log stored in the last `DEDUPE_WINDOW`, and at which
 * sequence. It is a checkpointed cache of the log, never a second truth: ids enter it only from the
 * log (after their message is stored), and the checkpoint, written in the same commit as the ids,
 * says up to which log sequence it is complete. After a crash it is caught up from the log.
 *
 * Memory does not grow with the window: ids live on disk in buckets of `bucketMs` (an hour), each
 * with a compact filter in RAM (about 4 bytes per id) that screens out ids never seen; a whole bucket
 * expires at once.
 *
 * Guarantees every adapter gives (checked by `dedupe-index.contract.ts`):
 * - an id recorded at time t is found by lookups until at least t + windowMs, and is forgotten by
 *   t + windowMs + bucketMs;
 * - a lookup issued after a record resolved sees it;
 * - an id recorded twice keeps its first sequence;
 * - the checkpoint reaches the disk with (or after) the ids it covers, never before; both survive a
 *   reopen;
 * - when the store outgrows `maxBytes`, the oldest buckets are dropped early (counted in
 *   `droppedEarlyBuckets`), never a failed record.
 */
export interface DedupeIndex {
  /**
   * For each id, the log sequence of its stored copy if it was recorded inside the window, else 0.
   * `now` is the caller's clock (ms). `keys`: the ids' keys (`messageIdKeys`), when the caller made
   * them already, so they are not hashed twice.
   */
  lookup(messageIds: readonly string[], now: number, keys?: Buffer): Promise<Float64Array>;
  /**
   * Records that the log stored these ids at these sequences, and that every log message up to
   * `checkpoint` is now indexed (a checkpoint lower than one recorded before changes nothing: the
   * replica's own appends and the log follower report in no common order). Ids already inside the
   * window keep their first sequence.
   */
  record(entries: DedupeIndexEntries, checkpoint: DedupeCheckpoint, now: number): Promise<void>;
  /**
   * The checkpoint a restart would resume from (ids may be buffered in RAM before they reach the disk
   * with their checkpoint; this writes them first); `{ sequence: 0, logIdentity: '' }` for a new index.
   */
  checkpoint(): Promise<DedupeCheckpoint>;
  /** Forgets everything (the log it followed was replaced). */
  reset(checkpoint: DedupeCheckpoint): Promise<void>;
  /** Drops the buckets that left the window; `record` does it too, this is for quiet periods. */
  expire(now: number): Promise<void>;
  stats(): Promise<DedupeIndexStats>;
  close(): Promise<void>;
}

export interface DedupeIndexEntries {
  messageIds: string[];
  sequences: ArrayLike<number>;
  /** The ids' keys (`messageIdKeys`), when the caller made them already. */
  keys?: Buffer;
}

export interface DedupeCheckpoint {
  /** Every log message at or below this sequence is indexed. */
  sequence: number;
  /**
   * Which log the sequence belongs to (the stream's creation time): a log deleted and created again
   * starts its sequences over, and the index must then start over too.
   */
  logIdentity: string;
}

export interface DedupeIndexSettings {
  /** `DEDUPE_WINDOW`. */
  windowMs: number;
  /** Width of a bucket; one hour in production, shorter in tests. Default one hour. */
  bucketMs?: number;
  /** `DEDUPE_INDEX_MAX_BYTES`: the store's size cap; 0 or absent means none. */
  maxBytes?: number;
}

export interface DedupeIndexStats {
  /** Bytes the store uses on disk (pages in use, free pages excluded). */
  storeBytes: number;
  /** Bytes of the in-memory filters. */
  filterBytes: number;
  /**
   * Ids held, per bucket start time (ms since epoch), oldest first, with the sorted runs they are
   * kept in (a lookup the filter cannot rule out reads each run of its bucket).
   */
  buckets: Array<{ startsAt: number; ids: number; runs: number }>;
  lookups: number;
  /** Lookups that found the id (duplicates). */
  hits: number;
  /** Lookups the filters could not rule out and that read the store. */
  storeReads: number;
  /** Buckets dropped before the end of the window because the store reached `maxBytes`. */
  droppedEarlyBuckets: number;
}

export const DEFAULT_DEDUPE_BUCKET_MS = 3_600_000;

/** How far an index that follows the log itself has got: every message up to `sequence` is indexed. */
export interface DedupeIndexProgress {
  sequence: number;
  /** Messages the log held beyond `sequence` when that batch was read. */
  remaining: number;
}

/**
 * An index that reads the log back and records its ids on its own (the worker adapter, with its own
 * connection on its own thread), so the caller's event loop sees one progress report per batch
 * instead of every message. It commits each batch with its checkpoint, as the caller's follower would.
 */
export interface SelfFollowingDedupeIndex extends DedupeIndex {
  /** False when the adapter was started without a way to reach the log. */
  readonly followsLog: boolean;
  follow(
    fromSequence: number,
    logIdentity: string,
    onProgress: (progress: DedupeIndexProgress) => void,
  ): Promise<FeedSubscription>;
}

export function followsTheLogItself(index: DedupeIndex): index is SelfFollowingDedupeIndex {
  const candidate = index as Partial<SelfFollowingDedupeIndex>;
  return typeof candidate.follow === 'function' && candidate.followsLog === true;
}
