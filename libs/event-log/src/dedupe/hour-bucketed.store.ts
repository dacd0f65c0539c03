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
import { GrowingBloomFilter, type SharedFilterBits } from './split-block-bloom.filter';

/** Ids buffered before a group commit: a fixed few MB of RAM, re-read from the log after a crash. */
const WRITE_BUFFER_IDS = 32_768;
/** A quiet buffer is written after this long, so the checkpoint on disk stays recent. */
const WRITE_BUFFER_MAX_AGE_MS = 1_000;
/** A new bucket's first filter; the chain doubles from there (see GrowingBloomFilter). */
const INITIAL_FILTER_CAPACITY = 16_384;
/** Keys per INSERT statement of a group commit: one statement step for many rows. */
const ROWS_PER_INSERT = 64;
/** Above any write buffer position: a sort number is key prefix × this + position (under 2^53). */
const POSITION_RANGE = 2 ** 20;

/** The start of the error message of a store whose file another index holds open. */
export const INDEX_LOCKED = 'the dedupe index file is in use by another process';

/**
 * The filters of the live buckets, in memory shared with other threads: enough for a thread that does
 * not own the store to rule out ids never seen without asking it (see worker-dedupe-index.adapter.ts).
 */
export interface SharedFilterLayout {
  bucketMs: number;
  windowBuckets: number;
  /** Oldest first. */
  buckets: Array<{ number: number; filters: SharedFilterBits[] }>;
}

interface Bucket {
  number: number;
  ids: number;
  filter: GrowingBloomFilter;
  find: Statement<[Buffer], number>;
  insert: Statement<[Buffer, number]>;
  insertMany: Statement<Array<Buffer | number>>;
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
  private readonly buffer = new WriteBuffer(WRITE_BUFFER_IDS);
  /** The highest checkpoint recorded (or on disk at open): a lower one never replaces it. */
  private highestCheckpoint: DedupeCheckpoint;
  /** Counts the changes of the buckets and filters (not their bits): see `filterLayout`. */
  private layoutChanges = 0;

  constructor(file: string, settings: DedupeIndexSettings) {
    this.bucketMs = settings.bucketMs ?? DEFAULT_DEDUPE_BUCKET_MS;
    if (!(this.bucketMs > 0) || !(settings.windowMs > 0)) {
      throw new RangeError('the dedupe window and bucket width must be positive');
    }
    this.windowBuckets = Math.ceil(settings.windowMs / this.bucketMs);
    this.maxBytes = settings.maxBytes ?? 0;
    mkdirSync(dirname(file), { recursive: true });
    // One process at a time: another replica's index in the same file would hold ids this one's
    // filters never saw. The exclusive lock is held until close (or the process's death), and a second
    // opener fails at once (no busy wait) with `INDEX_LOCKED`.
    this.database = new BetterSqlite3(file, { timeout: 0 });
    this.database.pragma('locking_mode = EXCLUSIVE');
    try {
      this.database.pragma('journal_mode = WAL');
      // Takes the lock now, even for a store that only reads for a while.
      this.database.exec('BEGIN EXCLUSIVE; COMMIT');
    } catch (error) {
      this.database.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') throw new Error(`${INDEX_LOCKED}: ${file}`);
      throw error;
    }
    this.database.pragma('synchronous = NORMAL');
    // SQLite's default 2 MB page cache: lookups are rare (the filters answer most) and writes come
    // in sorted groups; the OS page cache does the rest, outside this process's resident memory.
    this.database.pragma('cache_size = -2048');
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
    this.highestCheckpoint = this.storedCheckpoint();
  }

  lookup(messageIds: readonly string[], now: number): Float64Array {
    return this.lookupKeys(messageIdKeys(messageIds), messageIds.length, now);
  }

  /** `lookup` of ids already turned into keys (`message-id.key.ts`), `count` keys packed in `keys`. */
  lookupKeys(keys: Uint8Array, count: number, now: number): Float64Array {
    const keyBuffer = Buffer.from(keys.buffer, keys.byteOffset, count * KEY_BYTES);
    const sequences = new Float64Array(count);
    const oldestLive = this.bucketOf(now) - this.windowBuckets;
    for (let index = 0; index < count; index += 1) {
      const sequence = this.find(keyBuffer, index * KEY_BYTES, oldestLive);
      sequences[index] = sequence;
      if (sequence > 0) this.counters.hits += 1;
    }
    this.counters.lookups += count;
    return sequences;
  }

  /** How many times the buckets or their filter chains changed: a new value means a new `filterLayout`. */
  get filterLayoutVersion(): number {
    return this.layoutChanges;
  }

  /** The live buckets' filters, shared (not copied): their bits stay current as ids are added. */
  filterLayout(): SharedFilterLayout {
    return {
      bucketMs: this.bucketMs,
      windowBuckets: this.windowBuckets,
      buckets: this.buckets.map((bucket) => ({ number: bucket.number, filters: bucket.filter.shared })),
    };
  }

  /**
   * Adds the ids to the newest bucket. They are answered by lookups at once, from a write buffer in
   * RAM, and written to disk in groups (group commit): sorted by key, so one page write carries many
   * keys instead of one random B-tree insert each. The checkpoint goes to disk with its group, so
   * what is on disk is always consistent; a crash loses only the buffer, which catch-up reads again.
   */
  record(
    messageIds: readonly string[],
    sequences: ArrayLike<number>,
    checkpoint: DedupeCheckpoint,
    now: number,
  ): void {
    this.recordKeys(messageIdKeys(messageIds), messageIds.length, sequences, checkpoint, now);
  }

  /**
   * `record` of ids already turned into keys, `count` keys packed in `keys`. The checkpoint only ever
   * moves forward: the replica's own appends and the log follower report in no common order, and each
   * checkpoint is true when given, so the highest one is.
   */
  recordKeys(
    keys: Buffer,
    count: number,
    sequences: ArrayLike<number>,
    checkpoint: DedupeCheckpoint,
    now: number,
  ): void {
    const current = this.bucketOf(now);
    this.expire(now);
    const oldestLive = current - this.windowBuckets;
    const bucket = this.bucketNumbered(current);
    if (this.buffer.bucket !== bucket) {
      this.flush();
      this.buffer.bucket = bucket;
      this.buffer.since = Date.now();
    }
    for (let index = 0; index < count; index += 1) {
      const offset = index * KEY_BYTES;
      if (this.find(keys, offset, oldestLive, false) > 0) continue;
      if (this.buffer.full) {
        this.buffer.checkpoint = undefined;
        this.flush();
      }
      this.buffer.add(keys, offset, sequences[index]);
      if (bucket.filter.add(keys, offset)) this.layoutChanges += 1;
      bucket.ids += 1;
    }
    if (
      checkpoint.logIdentity !== this.highestCheckpoint.logIdentity ||
      checkpoint.sequence > this.highestCheckpoint.sequence
    )
      this.highestCheckpoint = checkpoint;
    this.buffer.checkpoint = this.highestCheckpoint;
    if (this.buffer.count >= WRITE_BUFFER_IDS || Date.now() - this.buffer.since >= WRITE_BUFFER_MAX_AGE_MS) {
      this.flush();
    }
  }

  /** Writes the buffer, sorted by key, with its checkpoint, in one transaction. */
  flush(): void {
    const { bucket, checkpoint } = this.buffer;
    if (!bucket || this.buffer.count === 0) return;
    const order = this.buffer.sortedPositions();
    const keys = this.buffer.keys;
    const rows = new Array<Buffer | number>(ROWS_PER_INSERT * 2);
    this.database.transaction(() => {
      let next = 0;
      for (; next + ROWS_PER_INSERT <= order.length; next += ROWS_PER_INSERT) {
        for (let row = 0; row < ROWS_PER_INSERT; row += 1) {
          const position = order[next + row];
          const offset = position * KEY_BYTES;
          rows[row * 2] = keys.subarray(offset, offset + KEY_BYTES);
          rows[row * 2 + 1] = this.buffer.sequences[position];
        }
        bucket.insertMany.run(...rows);
      }
      for (; next < order.length; next += 1) {
        const offset = order[next] * KEY_BYTES;
        bucket.insert.run(keys.subarray(offset, offset + KEY_BYTES), this.buffer.sequences[order[next]]);
      }
      this.statements.countBucket.run(bucket.ids, bucket.number);
      // A buffer flushed because it filled up mid-record has no checkpoint of its own yet: the disk
      // keeps the previous one, and catch-up adds the ids again (idempotently) after a crash.
      if (checkpoint) this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
    })();
    this.buffer.clear();
    this.buffer.since = Date.now();
    this.enforceMaxBytes();
  }

  /** The checkpoint on disk, after writing the buffer: what a restart would resume from. */
  checkpoint(): DedupeCheckpoint {
    this.flush();
    return this.storedCheckpoint();
  }

  reset(checkpoint: DedupeCheckpoint): void {
    this.buffer.clear();
    this.buffer.bucket = undefined;
    this.database.transaction(() => {
      for (const bucket of this.buckets) this.dropTable(bucket.number);
      this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
    })();
    this.buckets = [];
    this.highestCheckpoint = checkpoint;
    this.layoutChanges += 1;
  }

  /** Drops every bucket older than the window: one DROP TABLE each. */
  expire(now: number): void {
    const oldestLive = this.bucketOf(now) - this.windowBuckets;
    while (this.buckets.length > 0 && this.buckets[0].number < oldestLive) {
      // The buffer's checkpoint must reach the disk even when its bucket is dropped.
      if (this.buckets[0] === this.buffer.bucket) this.flush();
      this.dropOldest();
    }
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
    if (!this.database.open) return;
    this.flush();
    this.database.close();
  }

  /** Closes without writing the buffer: what a crash leaves (tests). */
  abandon(): void {
    if (this.database.open) this.database.close();
  }

  // ------------------------------------------------------------------------------------------------

  private storedCheckpoint(): DedupeCheckpoint {
    const row = this.statements.readCheckpoint.get();
    return row ? { sequence: row.sequence, logIdentity: row.log_identity } : { sequence: 0, logIdentity: '' };
  }

  private bucketOf(time: number): number {
    return Math.floor(time / this.bucketMs);
  }

  /** The sequence recorded for the key at `offset`, 0 if none in a live bucket; newest bucket first. */
  private find(keys: Buffer, offset: number, oldestLive: number, count = true): number {
    for (let index = this.buckets.length - 1; index >= 0; index -= 1) {
      const bucket = this.buckets[index];
      if (bucket.number < oldestLive) break;
      if (!bucket.filter.mayContain(keys, offset)) continue;
      if (bucket === this.buffer.bucket) {
        const buffered = this.buffer.find(keys, offset);
        if (buffered !== undefined) return buffered;
      }
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
    this.layoutChanges += 1;
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
      insertMany: this.database.prepare(
        `INSERT OR IGNORE INTO bucket_${number} (key, sequence) VALUES ${Array.from(
          { length: ROWS_PER_INSERT },
          () => '(?, ?)',
        ).join(', ')}`,
      ),
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
    this.layoutChanges += 1;
    if (oldest === this.buffer.bucket) {
      this.buffer.clear();
      this.buffer.bucket = undefined;
    }
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

/**
 * The newest bucket's ids not yet on disk; reused, so a group commit allocates nothing per id. Its
 * positions are found through an open-addressing table indexed by the key's first bytes (the keys are
 * uniform hashes already), with no string per key.
 */
class WriteBuffer {
  readonly keys: Buffer;
  readonly sequences: Float64Array;
  /** Position + 1 of the key in each slot, 0 for an empty slot; twice the capacity, so probes stay short. */
  private readonly slots: Int32Array;
  private readonly slotMask: number;
  count = 0;
  bucket: Bucket | undefined;
  checkpoint: DedupeCheckpoint | undefined;
  since = 0;

  constructor(private readonly capacity: number) {
    this.keys = Buffer.alloc(capacity * KEY_BYTES);
    this.sequences = new Float64Array(capacity);
    let slotCount = 1;
    while (slotCount < capacity * 2) slotCount *= 2;
    this.slots = new Int32Array(slotCount);
    this.slotMask = slotCount - 1;
  }

  get full(): boolean {
    return this.count === this.capacity;
  }

  add(keys: Buffer, offset: number, sequence: number): void {
    if (this.count === this.capacity) throw new Error('the dedupe write buffer is full; flush first');
    const slot = this.slotOf(keys, offset);
    if (this.slots[slot] !== 0) return;
    keys.copy(this.keys, this.count * KEY_BYTES, offset, offset + KEY_BYTES);
    this.sequences[this.count] = sequence;
    this.count += 1;
    this.slots[slot] = this.count;
  }

  find(keys: Buffer, offset: number): number | undefined {
    if (this.count === 0) return undefined;
    const position = this.slots[this.slotOf(keys, offset)];
    return position === 0 ? undefined : this.sequences[position - 1];
  }

  /**
   * Positions in key order, or nearly: a B-tree takes sorted keys page by page. Sorted on each key's
   * first 4 bytes (as SQLite compares blobs, most significant first) with the position in the low
   * bits, one number each, by the typed array's own sort instead of a comparison callback per pair;
   * keys that share those 4 bytes (rare, they are uniform hashes) stay in arrival order.
   */
  sortedPositions(): Float64Array {
    const keys = this.keys;
    const order = new Float64Array(this.count);
    for (let position = 0; position < this.count; position += 1) {
      const offset = position * KEY_BYTES;
      const prefix =
        ((keys[offset] << 24) | (keys[offset + 1] << 16) | (keys[offset + 2] << 8) | keys[offset + 3]) >>> 0;
      order[position] = prefix * POSITION_RANGE + position;
    }
    order.sort();
    for (let index = 0; index < order.length; index += 1) order[index] = order[index] % POSITION_RANGE;
    return order;
  }

  clear(): void {
    if (this.count > 0) this.slots.fill(0);
    this.count = 0;
    this.checkpoint = undefined;
  }

  /** The slot holding the key at `offset`, or the empty slot where it would go (linear probing). */
  private slotOf(keys: Buffer, offset: number): number {
    let slot =
      (keys[offset] | (keys[offset + 1] << 8) | (keys[offset + 2] << 16) | (keys[offset + 3] << 24)) &
      this.slotMask;
    for (;;) {
      const position = this.slots[slot];
      if (position === 0 || this.sameKey(keys, offset, (position - 1) * KEY_BYTES)) return slot;
      slot = (slot + 1) & this.slotMask;
    }
  }

  private sameKey(keys: Buffer, offset: number, ownOffset: number): boolean {
    for (let byte = 0; byte < KEY_BYTES; byte += 1) {
      if (keys[offset + byte] !== this.keys[ownOffset + byte]) return false;
    }
    return true;
  }
}
