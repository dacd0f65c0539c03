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
  FOLLOWER_REPORT_ID,
  ID_SEPARATOR,
  type DedupeWorkerAnswer,
  type DedupeWorkerData,
  type DedupeWorkerRequest,
} from './dedupe-index.worker';

type RequestWithoutId = DedupeWorkerRequest extends infer Request
  ? Request extends { id: number }
    ? Omit<Request, 'id'>
    : never
  : never;

/**
 * The dedupe index on a worker thread: hashing, filter tests and SQLite writes stay off the event
 * loop that serves HTTP. One message per call (a whole batch of ids), answered in order; lookups come
 * back as a transferred `Float64Array`, so no per-id objects cross the thread boundary.
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

  private constructor(
    private readonly worker: Worker,
    readonly followsLog: boolean,
  ) {
    worker.on('message', (answer: DedupeWorkerAnswer) => {
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
    await new Promise<void>((resolve, reject) => {
      const onFirst = (answer: DedupeWorkerAnswer) => {
        if (answer.id !== 0) return;
        worker.off('message', onFirst);
        if ('error' in answer && answer.error !== undefined) {
          void worker.terminate();
          reject(new Error(`dedupe index: ${answer.error}`));
        } else resolve();
      };
      worker.on('message', onFirst);
      worker.once('error', reject);
    });
    return new WorkerDedupeIndex(worker, natsServers !== undefined);
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

  lookup(messageIds: readonly string[], now: number): Promise<Float64Array> {
    return this.call({
      operation: 'lookup',
      messageIds: messageIds.join(ID_SEPARATOR),
      now,
    }) as Promise<Float64Array>;
  }

  async record(entries: DedupeIndexEntries, checkpoint: DedupeCheckpoint, now: number): Promise<void> {
    const sequences = Float64Array.from(entries.sequences);
    await this.call(
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

  checkpoint(): Promise<DedupeCheckpoint> {
    return this.call({ operation: 'checkpoint' }) as Promise<DedupeCheckpoint>;
  }

  async reset(checkpoint: DedupeCheckpoint): Promise<void> {
    await this.call({
      operation: 'reset',
      checkpointSequence: checkpoint.sequence,
      logIdentity: checkpoint.logIdentity,
    });
  }

  async expire(now: number): Promise<void> {
    await this.call({ operation: 'expire', now });
  }

  stats(): Promise<DedupeIndexStats> {
    return this.call({ operation: 'stats' }) as Promise<DedupeIndexStats>;
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
 * The worker's script beside this file: `.js` once built; under the TypeScript sources (tests, the
 * bench) the `.ts` file with the repository's swc require hook, as the parent process runs.
 */
function workerScript(): { path: string; execArgv: string[] } {
  const extension = extname(__filename);
  const path = join(__dirname, `dedupe-index.worker${extension}`);
  if (extension !== '.ts') return { path, execArgv: [] };
  const hook = join(__dirname, '..', '..', '..', '..', 'test', 'support', 'swc-register.js');
  if (!existsSync(hook)) throw new Error(`cannot run the dedupe index worker from sources without ${hook}`);
  return { path, execArgv: ['--require', hook] };
}
