import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DEFAULT_DEDUPE_BUCKET_MS,
  type DedupeCheckpoint,
  type DedupeIndexSettings,
  type DedupeIndexStats,
} from './dedupe-index.port';
import { KEY_BYTES, messageIdKeys } from './message-id.key';
import { GrowingBloomFilter } from './split-block-bloom.filter';

/** A new bucket's first filter; the chain doubles from there (see GrowingBloomFilter). */
const INITIAL_FILTER_CAPACITY = 16_384;

interface Bucket {
  number: number;
  ids: number;
  filter: GrowingBloomFilter;
  find: Statement<[Buffer], number>;
  insert: Statement<[Buffer, number]>;
}

/**
 * The dedupe index's storage, synchronous: one SQLite file, one table per bucket (`bucket_<n>`, keys
 * of 16 bytes), one filter per bucket in RAM, the checkpoint in the same file. It runs inside
 * whichever thread owns it (the worker thread in production, see dedupe-index.worker.ts).
 *
 * Why SQLite: it is already the embedded log's engine, well kept, and installs everywhere; with the
 * filters in front it is read only for real duplicates and rare false positives, and a bucket is
 * dropped with one DROP TABLE. WAL with `synchronous = NORMAL`: a process crash loses nothing
 * committed, a power loss may lose the last commits, but the checkpoint goes with them, so catch-up
 * from the log re-indexes them.
 */
export class HourBucketedStore {
  private readonly database: Database;
  private readonly bucketMs: number;
  private readonly windowBuckets: number;
  private readonly maxBytes: number;
  /** Live buckets, oldest first. */
  private buckets: Bucket[] = [];
  private readonly pageSize: number;
  private readonly statements: {
    readCheckpoint: Statement<[], { sequence: number; log_identity: string }>;
    writeCheckpoint: Statement<[number, string]>;
    listBuckets: Statement<[], { bucket: number; ids: number }>;
    addBucket: Statement<[number]>;
    countBucket: Statement<[number, number]>;
    removeBucket: Statement<[number]>;
    pageCount: Statement<[], number>;
    freePages: Statement<[], number>;
  };
  private counters = { lookups: 0, hits: 0, storeReads: 0, droppedEarlyBuckets: 0 };

  constructor(file: string, settings: DedupeIndexSettings) {
    this.bucketMs = settings.bucketMs ?? DEFAULT_DEDUPE_BUCKET_MS;
    if (!(this.bucketMs > 0) || !(settings.windowMs > 0)) {
      throw new RangeError('the dedupe window and bucket width must be positive');
    }
    this.windowBuckets = Math.ceil(settings.windowMs / this.bucketMs);
    this.maxBytes = settings.maxBytes ?? 0;
    mkdirSync(dirname(file), { recursive: true });
    this.database = new BetterSqlite3(file);
    this.database.pragma('journal_mode = WAL');
    this.database.pragma('synchronous = NORMAL');
    // A small page cache: lookups are rare (the filters answer most), inserts append to the newest
    // bucket. The OS page cache does the rest, outside this process's resident memory.
    this.database.pragma('cache_size = -8192');
    this.database.exec(`
      CREATE TABLE IF NOT EXISTS dedupe_checkpoint (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        sequence INTEGER NOT NULL,
        log_identity TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS dedupe_buckets (bucket INTEGER PRIMARY KEY, ids INTEGER NOT NULL);
    `);
    this.pageSize = this.database.pragma('page_size', { simple: true }) as number;
    this.statements = {
      readCheckpoint: this.database.prepare(
        'SELECT sequence, log_identity FROM dedupe_checkpoint WHERE id = 1',
      ),
      writeCheckpoint: this.database.prepare(
        `INSERT INTO dedupe_checkpoint (id, sequence, log_identity) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET sequence = excluded.sequence, log_identity = excluded.log_identity`,
      ),
      listBuckets: this.database.prepare('SELECT bucket, ids FROM dedupe_buckets ORDER BY bucket'),
      addBucket: this.database.prepare('INSERT INTO dedupe_buckets (bucket, ids) VALUES (?, 0)'),
      countBucket: this.database.prepare('UPDATE dedupe_buckets SET ids = ? WHERE bucket = ?'),
      removeBucket: this.database.prepare('DELETE FROM dedupe_buckets WHERE bucket = ?'),
      pageCount: this.database.prepare('PRAGMA page_count').pluck() as Statement<[], number>,
      freePages: this.database.prepare('PRAGMA freelist_count').pluck() as Statement<[], number>,
    };
    this.loadBuckets();
  }

  lookup(messageIds: readonly string[], now: number): Float64Array {
    const keys = messageIdKeys(messageIds);
    const sequences = new Float64Array(messageIds.length);
    const oldestLive = this.bucketOf(now) - this.windowBuckets;
    for (let index = 0; index < messageIds.length; index += 1) {
      const sequence = this.find(keys, index * KEY_BYTES, oldestLive);
      sequences[index] = sequence;
      if (sequence > 0) this.counters.hits += 1;
    }
    this.counters.lookups += messageIds.length;
    return sequences;
  }

  record(
    messageIds: readonly string[],
    sequences: readonly number[],
    checkpoint: DedupeCheckpoint,
    now: number,
  ): void {
    const keys = messageIdKeys(messageIds);
    const current = this.bucketOf(now);
    this.expire(now);
    const oldestLive = current - this.windowBuckets;
    const added: number[] = [];
    const bucket = this.bucketNumbered(current);
    this.database.transaction(() => {
      for (let index = 0; index < messageIds.length; index += 1) {
        const offset = index * KEY_BYTES;
        if (this.find(keys, offset, oldestLive, false) > 0) continue;
        const key = keys.subarray(offset, offset + KEY_BYTES);
        if (bucket.insert.run(key, sequences[index]).changes > 0) added.push(offset);
      }
      if (added.length > 0) this.statements.countBucket.run(bucket.ids + added.length, bucket.number);
      this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
    })();
    // Filters change only once the commit is done, so a failed commit leaves them matching the disk.
    for (const offset of added) bucket.filter.add(keys, offset);
    bucket.ids += added.length;
    this.enforceMaxBytes();
  }

  checkpoint(): DedupeCheckpoint {
    const row = this.statements.readCheckpoint.get();
    return row ? { sequence: row.sequence, logIdentity: row.log_identity } : { sequence: 0, logIdentity: '' };
  }

  reset(checkpoint: DedupeCheckpoint): void {
    this.database.transaction(() => {
      for (const bucket of this.buckets) this.dropTable(bucket.number);
      this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
    })();
    this.buckets = [];
  }

  /** Drops every bucket older than the window: one DROP TABLE each. */
  expire(now: number): void {
    const oldestLive = this.bucketOf(now) - this.windowBuckets;
    while (this.buckets.length > 0 && this.buckets[0].number < oldestLive) this.dropOldest();
  }

  stats(): DedupeIndexStats {
    return {
      storeBytes: this.storeBytes(),
      filterBytes: this.buckets.reduce((sum, bucket) => sum + bucket.filter.bytes, 0),
      buckets: this.buckets.map((bucket) => ({ startsAt: bucket.number * this.bucketMs, ids: bucket.ids })),
      ...this.counters,
    };
  }

  close(): void {
    if (this.database.open) this.database.close();
  }

  // ------------------------------------------------------------------------------------------------

  private bucketOf(time: number): number {
    return Math.floor(time / this.bucketMs);
  }

  /** The sequence recorded for the key at `offset`, 0 if none in a live bucket; newest bucket first. */
  private find(keys: Buffer, offset: number, oldestLive: number, count = true): number {
    for (let index = this.buckets.length - 1; index >= 0; index -= 1) {
      const bucket = this.buckets[index];
      if (bucket.number < oldestLive) break;
      if (!bucket.filter.mayContain(keys, offset)) continue;
      if (count) this.counters.storeReads += 1;
      const sequence = bucket.find.get(keys.subarray(offset, offset + KEY_BYTES));
      if (sequence !== undefined) return sequence;
    }
    return 0;
  }

  private bucketNumbered(number: number): Bucket {
    const newest = this.buckets[this.buckets.length - 1];
    if (newest && newest.number >= number) return newest;
    this.database.exec(
      `CREATE TABLE IF NOT EXISTS bucket_${number} (key BLOB PRIMARY KEY, sequence INTEGER NOT NULL) WITHOUT ROWID`,
    );
    this.statements.addBucket.run(number);
    // Sized for as many ids as the previous hour held: with steady traffic one filter per hour.
    const bucket = this.openBucket(number, 0, newest?.ids ?? 0);
    this.buckets.push(bucket);
    return bucket;
  }

  private openBucket(number: number, ids: number, expectedIds = ids): Bucket {
    return {
      number,
      ids,
      filter: new GrowingBloomFilter(Math.max(INITIAL_FILTER_CAPACITY, expectedIds)),
      find: this.database.prepare(`SELECT sequence FROM bucket_${number} WHERE key = ?`).pluck() as Statement<
        [Buffer],
        number
      >,
      insert: this.database.prepare(`INSERT OR IGNORE INTO bucket_${number} (key, sequence) VALUES (?, ?)`),
    };
  }

  /** Rebuilds every bucket's filter from its keys: one sequential scan per bucket at start. */
  private loadBuckets(): void {
    for (const row of this.statements.listBuckets.all()) {
      const bucket = this.openBucket(row.bucket, row.ids);
      for (const key of this.database
        .prepare(`SELECT key FROM bucket_${row.bucket}`)
        .pluck()
        .iterate() as IterableIterator<Buffer>) {
        bucket.filter.add(key, 0);
      }
      this.buckets.push(bucket);
    }
  }

  private dropOldest(): void {
    const oldest = this.buckets.shift();
    if (!oldest) return;
    this.database.transaction(() => this.dropTable(oldest.number))();
  }

  private dropTable(number: number): void {
    this.database.exec(`DROP TABLE IF EXISTS bucket_${number}`);
    this.statements.removeBucket.run(number);
  }

  private storeBytes(): number {
    return (this.statements.pageCount.get()! - this.statements.freePages.get()!) * this.pageSize;
  }

  /** Over the cap: drop the oldest buckets early (never the newest), and count each. */
  private enforceMaxBytes(): void {
    if (this.maxBytes <= 0) return;
    while (this.buckets.length > 1 && this.storeBytes() > this.maxBytes) {
      this.dropOldest();
      this.counters.droppedEarlyBuckets += 1;
    }
  }
}
