import type { Database } from '@tributary/sqlite';
import { EventLogUnavailableError } from '../../event-log.port';

/** Runs a unit of work inside the adapter's batched write transaction, with the commit's clock. */
export type EnqueueWrite = <T>(work: (now: number) => T) => Promise<T>;

interface QueuedWrite {
  run: (now: number) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Micro-batching: every write asked for during one turn of the event loop (publishes from many
 * concurrent requests, acks, consumer claims) runs in ONE transaction, so one fsync makes all of them
 * durable. Each caller's promise resolves only after that transaction has committed.
 */
export class SqliteWriteBatcher {
  private queue: QueuedWrite[] = [];
  private flushScheduled = false;
  private closed = false;

  constructor(
    private readonly database: Database,
    /** Called after each commit, outside the transaction (wakes consumers). */
    private readonly afterCommit: () => void,
    /** Writes per transaction: bounds how long one commit holds the event loop. */
    private readonly maxWritesPerTransaction = 5000,
  ) {}

  enqueue<T>(run: (now: number) => T): Promise<T> {
    if (this.closed) {
      return Promise.reject(new EventLogUnavailableError('the sqlite event log is closed'));
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued, then refuses new writes. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private flush(): void {
    this.flushScheduled = false;
    while (this.queue.length > 0) {
      const writes = this.queue.splice(0, this.maxWritesPerTransaction);
      const now = Date.now();
      let results: unknown[];
      try {
        // IMMEDIATE: the write lock is taken first, so a read-then-write (a claim, an attempt appended)
        // never fails to upgrade its lock while another process on the same file writes.
        results = this.database.transaction(() => writes.map((write) => write.run(now))).immediate();
      } catch (error) {
        // Disk full, I/O error, database locked by another process for longer than busy_timeout...:
        // nothing of this batch is stored, and the client should retry later.
        const unavailable = new EventLogUnavailableError('the sqlite event log could not commit', {
          cause: error,
        });
        writes.forEach((write) => write.reject(unavailable));
        continue;
      }
      writes.forEach((write, index) => write.resolve(results[index]));
    }
    this.afterCommit();
  }
}
