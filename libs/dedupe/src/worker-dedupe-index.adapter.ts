import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FeedSubscription } from './message-id.feed';
import type {
  DedupeCheckpoint,
  DedupeIndexEntries,
  DedupeIndexProgress,
  DedupeIndexSettings,
  DedupeIndexStats,
  SelfFollowingDedupeIndex,
} from './dedupe-index.port';
import {
  FILTERS_REPORT_ID,
  FOLLOWER_REPORT_ID,
  ID_SEPARATOR,
  type DedupeWorkerAnswer,
  type DedupeWorkerData,
  type DedupeWorkerReady,
  type DedupeWorkerRequest,
} from './dedupe-index.worker';
import type { SharedFilterLayout } from './hour-bucketed.store';
import { KEY_BYTES, messageIdKeys } from './message-id.key';
import { GrowingBloomFilter } from './split-block-bloom.filter';

type RequestWithoutId = DedupeWorkerRequest extends infer Request
  ? Request extends { id: number }
    ? Omit<Request, 'id'>
    : never
  : never;

/**
 * The dedupe index on a worker thread: SQLite reads and writes stay off the event loop that serves
 * HTTP. A lookup first tests the ids against the buckets' filters right here (their bits are memory
 * shared with the worker, which adds to them): a new id, almost every id, is answered without a message
 * to the worker, so a publish never waits behind the worker's group commits. Only the keys the filters
 * cannot rule out (duplicates, rare false positives) go to the worker, in one message. Other calls are
 * one message each, answered in order.
 *
 * Started with the log's NATS servers, it also follows the log itself (`follow`): the worker reads
 * the ids back on its own connection and commits them, and this thread only hears of its progress.
 */
export class WorkerDedupeIndex implements SelfFollowingDedupeIndex {
  private onProgress: ((progress: DedupeIndexProgress) => void) | undefined;
  private rejectFollowing: ((error: Error) => void) | undefined;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private nextId = 1;
  private failure: Error | undefined;
  private closed = false;
  private filters: SharedFilters;
  /** Lookups the filters answered here (the worker counts the others). */
  private screenedLookups = 0;
  /**
   * Resets, and records of ids not made into keys here, sent and not answered yet: meanwhile lookups
   * go to the worker whole, queued behind them, so a lookup sent after a record sees it even before
   * the record resolved.
   */
  private changesInFlight = 0;
  /**
   * The keys of records sent with their keys and not answered yet: a lookup sends the keys that may
   * be among them to the worker, queued behind the record, for the same guarantee at the cost of a
   * few candidates instead of the whole lookup (records come after every append).
   */
  private readonly keysInFlight = new KeysInFlight();

  private constructor(
    private readonly worker: Worker,
    readonly followsLog: boolean,
    ready: DedupeWorkerReady,
  ) {
    this.filters = new SharedFilters(ready.filters);
    worker.on('message', (answer: DedupeWorkerAnswer) => {
      if (answer.id === FILTERS_REPORT_ID && 'filters' in answer) {
        this.filters = new SharedFilters(answer.filters);
        return;
      }
      if (answer.id === FOLLOWER_REPORT_ID) {
        if ('progress' in answer && answer.progress)
          this.onProgress?.({ sequence: answer.progress[0], remaining: answer.progress[1] });
        if ('followError' in answer && answer.followError !== undefined)
          this.rejectFollowing?.(new Error(`dedupe index follower: ${answer.followError}`));
        return;
      }
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if ('error' in answer && answer.error !== undefined)
        waiting.reject(new Error(`dedupe index: ${answer.error}`));
      else waiting.resolve('result' in answer ? answer.result : undefined);
    });
    const failAll = (error: Error) => {
      this.failure = error;
      this.rejectFollowing?.(error);
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', failAll);
    worker.on('exit', (code) => {
      if (!this.closed) failAll(new Error(`the dedupe index worker exited (${code})`));
    });
  }

  /** `natsServers`: the log's servers, so the worker can follow the log itself (see `follow`). */
  static async start(
    file: string,
    settings: DedupeIndexSettings,
    natsServers?: string,
  ): Promise<WorkerDedupeIndex> {
    const script = workerScript();
    const data: DedupeWorkerData = { file, settings, natsServers };
    const worker = new Worker(script.path, { workerData: data, execArgv: script.execArgv });
    const ready = await new Promise<DedupeWorkerReady>((resolve, reject) => {
      const onFirst = (answer: DedupeWorkerAnswer) => {
        if (answer.id !== 0) return;
        worker.off('message', onFirst);
        if ('error' in answer && answer.error !== undefined) {
          void worker.terminate();
          reject(new Error(`dedupe index: ${answer.error}`));
        } else resolve((answer as { result: DedupeWorkerReady }).result);
      };
      worker.on('message', onFirst);
      worker.once('error', reject);
    });
    return new WorkerDedupeIndex(worker, natsServers !== undefined, ready);
  }

  async follow(
    fromSequence: number,
    logIdentity: string,
    onProgress: (progress: DedupeIndexProgress) => void,
  ): Promise<FeedSubscription> {
    if (!this.followsLog) throw new Error('this dedupe index was started without the log to follow');
    const failed = new Promise<never>((_, reject) => (this.rejectFollowing = reject));
    failed.catch(() => undefined);
    this.onProgress = onProgress;
    await this.call({ operation: 'follow', fromSequence, logIdentity });
    return {
      failed,
      stop: async () => {
        this.onProgress = undefined;
        if (!this.closed && !this.failure) await this.call({ operation: 'unfollow' });
      },
    };
  }

  async lookup(messageIds: readonly string[], now: number, keys?: Buffer): Promise<Float64Array> {
    if (this.closed) throw new Error('the dedupe index is closed');
    if (this.failure) throw this.failure;
    keys ??= messageIdKeys(messageIds);
    const candidates =
      this.changesInFlight > 0
        ? Array.from({ length: messageIds.length }, (_, position) => position)
        : this.filters.candidates(keys, messageIds.length, now, this.keysInFlight);
    this.screenedLookups += messageIds.length - candidates.length;
    const sequences = new Float64Array(messageIds.length);
    if (candidates.length === 0) return sequences;
    const candidateKeys = new Uint8Array(candidates.length * KEY_BYTES);
    for (let position = 0; position < candidates.length; position += 1) {
      const offset = candidates[position] * KEY_BYTES;
      candidateKeys.set(keys.subarray(offset, offset + KEY_BYTES), position * KEY_BYTES);
    }
    const found = (await this.call(
      { operation: 'lookupKeys', keys: candidateKeys, count: candidates.length, now },
      [candidateKeys.buffer],
    )) as Float64Array;
    for (let position = 0; position < candidates.length; position += 1)
      sequences[candidates[position]] = found[position];
    return sequences;
  }

  async record(entries: DedupeIndexEntries, checkpoint: DedupeCheckpoint, now: number): Promise<void> {
    const sequences = Float64Array.from(entries.sequences);
    if (entries.keys) {
      await this.recordKeys(entries.keys, entries.messageIds.length, sequences, checkpoint, now);
      return;
    }
    await this.change(
      {
        operation: 'record',
        messageIds: entries.messageIds.join(ID_SEPARATOR),
        sequences,
        checkpointSequence: checkpoint.sequence,
        logIdentity: checkpoint.logIdentity,
        now,
      },
      [sequences.buffer],
    );
  }

  private async recordKeys(
    keys: Uint8Array,
    count: number,
    sequences: Float64Array,
    checkpoint: DedupeCheckpoint,
    now: number,
  ): Promise<void> {
    // A copy crosses to the worker; these stay here until it answered, for the lookups meanwhile. A
    // view is cloned with its whole buffer (Buffer's pool is 8 KiB): clone exactly the keys.
    const length = count * KEY_BYTES;
    const kept =
      keys.byteOffset === 0 && keys.buffer.byteLength === length
        ? keys
        : new Uint8Array(keys.subarray(0, length));
    this.keysInFlight.add(kept, count);
    try {
      await this.call(
        {
          operation: 'recordKeys',
          keys: kept,
          count,
          sequences,
          checkpointSequence: checkpoint.sequence,
          logIdentity: checkpoint.logIdentity,
          now,
        },
        [sequences.buffer as ArrayBuffer],
      );
    } finally {
      this.keysInFlight.remove(kept, count);
    }
  }

  checkpoint(): Promise<DedupeCheckpoint> {
    return this.call({ operation: 'checkpoint' }) as Promise<DedupeCheckpoint>;
  }

  async reset(checkpoint: DedupeCheckpoint): Promise<void> {
    await this.change({
      operation: 'reset',
      checkpointSequence: checkpoint.sequence,
      logIdentity: checkpoint.logIdentity,
    });
  }

  async expire(now: number): Promise<void> {
    await this.call({ operation: 'expire', now });
  }

  async stats(): Promise<DedupeIndexStats> {
    const stats = (await this.call({ operation: 'stats' })) as DedupeIndexStats;
    return { ...stats, lookups: stats.lookups + this.screenedLookups };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.failure) await this.call({ operation: 'close' });
    } finally {
      this.closed = true;
      await this.worker.terminate();
    }
  }

  /** Stops the worker at once, committing nothing further: what a crash does (tests). */
  async abandon(): Promise<void> {
    this.closed = true;
    await this.worker.terminate();
  }

  private async change(request: RequestWithoutId, transfer: ArrayBuffer[] = []): Promise<void> {
    this.changesInFlight += 1;
    try {
      await this.call(request, transfer);
    } finally {
      this.changesInFlight -= 1;
    }
  }

  private call(request: RequestWithoutId, transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the dedupe index is closed'));
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id }, transfer);
    });
  }
}

/**
 * The worker's filters as this thread sees them: which keys may be in a live bucket. Rebuilt from each
 * report of the worker (new buckets and filters are rare: one bucket an hour, a chain growing by
 * doubling); the bits themselves are shared, so they are current without a report.
 */
class SharedFilters {
  /** Newest first. */
  private readonly buckets: Array<{ number: number; filter: GrowingBloomFilter }>;
  private readonly bucketMs: number;
  private readonly windowBuckets: number;

  constructor(layout: SharedFilterLayout) {
    this.bucketMs = layout.bucketMs;
    this.windowBuckets = layout.windowBuckets;
    this.buckets = layout.buckets
      .map((bucket) => ({ number: bucket.number, filter: GrowingBloomFilter.fromShared(bucket.filters) }))
      .reverse();
  }

  /**
   * Positions of the `count` keys in `keys` that some live bucket's filter may hold, or that may be
   * in a record on its way to the worker.
   */
  candidates(keys: Buffer, count: number, now: number, inFlight: KeysInFlight): number[] {
    const oldestLive = Math.floor(now / this.bucketMs) - this.windowBuckets;
    const positions: number[] = [];
    const anyInFlight = inFlight.size > 0;
    for (let position = 0; position < count; position += 1) {
      const offset = position * KEY_BYTES;
      if (anyInFlight && inFlight.mayContain(keys, offset)) {
        positions.push(position);
        continue;
      }
      for (const bucket of this.buckets) {
        if (bucket.number < oldestLive) break;
        if (bucket.filter.mayContain(keys, offset)) {
          positions.push(position);
          break;
        }
      }
    }
    return positions;
  }
}

/**
 * The keys of records on their way to the worker, as a counting filter: keys are added and removed
 * in any order, a test may answer "maybe" for a key never added (it then goes to the worker, which is
 * only slower), never "no" for one still in flight. Keys are uniform hashes, so three 16-bit slices of
 * a key are its three positions. Fixed size: records in flight are bounded by the publishes in flight.
 */
class KeysInFlight {
  private readonly counts = new Uint16Array(1 << 16);
  /** Keys in flight. */
  size = 0;

  add(keys: Uint8Array, count: number): void {
    this.change(keys, count, 1);
  }

  remove(keys: Uint8Array, count: number): void {
    this.change(keys, count, -1);
  }

  mayContain(keys: Uint8Array, offset: number): boolean {
    const counts = this.counts;
    return (
      counts[keys[offset] | (keys[offset + 1] << 8)] > 0 &&
      counts[keys[offset + 2] | (keys[offset + 3] << 8)] > 0 &&
      counts[keys[offset + 4] | (keys[offset + 5] << 8)] > 0
    );
  }

  private change(keys: Uint8Array, count: number, by: 1 | -1): void {
    const counts = this.counts;
    for (let offset = 0; offset < count * KEY_BYTES; offset += KEY_BYTES) {
      counts[keys[offset] | (keys[offset + 1] << 8)] += by;
      counts[keys[offset + 2] | (keys[offset + 3] << 8)] += by;
      counts[keys[offset + 4] | (keys[offset + 5] << 8)] += by;
    }
    this.size += by * count;
  }
}

/**
 * The worker's script beside this file: `.js` once built; under the TypeScript sources (tests, the
 * bench) the `.ts` file with the repository's swc require hook, as the parent process runs.
 */
function workerScript(): { path: string; execArgv: string[] } {
  const extension = extname(__filename);
  const path = join(__dirname, `dedupe-index.worker${extension}`);
  if (extension !== '.ts') return { path, execArgv: [] };
  const hook = join(__dirname, '..', '..', '..', 'test', 'support', 'swc-register.js');
  if (!existsSync(hook)) throw new Error(`cannot run the dedupe index worker from sources without ${hook}`);
  return { path, execArgv: ['--require', hook] };
}
