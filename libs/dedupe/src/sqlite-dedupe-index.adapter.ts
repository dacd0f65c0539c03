import { BackgroundMergeScheduler } from './background-merge.scheduler';
import type {
  DedupeCheckpoint,
  DedupeIndex,
  DedupeIndexEntries,
  DedupeIndexSettings,
  DedupeIndexStats,
} from './dedupe-index.port';
import { HourBucketedStore } from './hour-bucketed.store';
import { messageIdKeys } from './message-id.key';

/**
 * The dedupe index on the calling thread. Simple and exact, but its hashing and SQLite calls take
 * the caller's event loop; the tracking API uses `WorkerDedupeIndex`, which runs the same store on a
 * worker thread. This one serves tests with an injected clock and tools.
 */
export class SqliteDedupeIndex implements DedupeIndex {
  private readonly store: HourBucketedStore;
  private readonly merges: BackgroundMergeScheduler;
  private closed = false;

  constructor(file: string, settings: DedupeIndexSettings) {
    this.store = new HourBucketedStore(file, settings);
    this.merges = new BackgroundMergeScheduler(this.store);
    // Merges a crash or a close interrupted go on from where they stopped.
    this.merges.schedule();
  }

  async lookup(messageIds: readonly string[], now: number, keys?: Buffer): Promise<Float64Array> {
    this.assertOpen();
    return this.store.lookupKeys(keys ?? messageIdKeys(messageIds), messageIds.length, now);
  }

  async record(entries: DedupeIndexEntries, checkpoint: DedupeCheckpoint, now: number): Promise<void> {
    this.assertOpen();
    const { messageIds, sequences } = entries;
    this.store.recordKeys(
      entries.keys ?? messageIdKeys(messageIds),
      messageIds.length,
      sequences,
      checkpoint,
      now,
    );
    this.merges.schedule();
  }

  async checkpoint(): Promise<DedupeCheckpoint> {
    this.assertOpen();
    const checkpoint = this.store.checkpoint();
    this.merges.schedule();
    return checkpoint;
  }

  async reset(checkpoint: DedupeCheckpoint): Promise<void> {
    this.assertOpen();
    this.store.reset(checkpoint);
    this.merges.schedule();
  }

  async expire(now: number): Promise<void> {
    this.assertOpen();
    this.store.expire(now);
    this.merges.schedule();
  }

  async stats(): Promise<DedupeIndexStats> {
    this.assertOpen();
    return this.store.stats();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.merges.stop();
    this.store.close();
  }

  /** Closes without writing the buffered ids: what a crash leaves behind (tests). */
  async abandon(): Promise<void> {
    this.closed = true;
    this.merges.stop();
    this.store.abandon();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the dedupe index is closed');
  }
}
