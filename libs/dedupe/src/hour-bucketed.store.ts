import { Database, type Statement } from '@tributary/sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DEFAULT_DEDUPE_BUCKET_MS,
  type DedupeCheckpoint,
  type DedupeIndexSettings,
  type DedupeIndexStats,
} from './dedupe-index.port';
import { KEY_BYTES, messageIdKeys } from './message-id.key';
import {
  levelOfSize,
  MERGE_FANOUT,
  planMerge,
  type PlannedMerge,
  type PlannedRun,
} from './run-merge.planner';
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
/**
 * Rows a merge copies per step, each step its own transaction: small enough that a lookup or a commit
 * queued behind a step waits tens of milliseconds, not the seconds a merge of millions of rows takes.
 */
export const MERGE_STEP_ROWS = 32_768;
/**
 * Runs a bucket may hold before its writer helps merging (see `catchUpMerges`): above what background
 * merging leaves when it keeps up (about 30 for 144M ids an hour, see run-merge.planner.ts), low
 * enough that a lookup the filter cannot rule out, which probes every run, stays cheap.
 */
export const MAX_RUNS_PER_BUCKET = 48;
/**
 * Rows a catching-up writer copies per id it wrote: more than the one copy per level that each id
 * needs (four at most, see run-merge.planner.ts), so the runs come back under MAX_RUNS_PER_BUCKET.
 */
const CATCH_UP_ROWS_PER_FLUSHED_ID = MERGE_FANOUT;
/** Below every key (SQLite orders blobs byte by byte, then by length): where a new merge starts. */
const BEFORE_EVERY_KEY = Buffer.alloc(0);

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

/** A bucket's runs, for tests and tools: what a lookup the filter lets through probes. */
export interface BucketRuns {
  startsAt: number;
  /** Oldest first. */
  runs: Array<{ level: number; ids: number }>;
  mergesUnderWay: number;
}

/** One sorted run: a table `run_<number>` of keys and their sequences, written once, never updated. */
interface Run {
  number: number;
  level: number;
  ids: number;
  /** The output of the merge under way that reads this run; lookups read the run until it completes. */
  mergingInto: number | undefined;
  find: Statement<[Buffer], number>;
}

interface Bucket {
  number: number;
  ids: number;
  filter: GrowingBloomFilter;
  /** The runs lookups read, oldest first: highest level first, then by number. */
  runs: Run[];
}

/** A merge under way: its output is filled step by step, and no lookup reads it before it is complete. */
interface Merge {
  bucket: Bucket;
  output: number;
  level: number;
  /** Oldest first, the order the copy reads them in: a key in two of them keeps the older sequence. */
  inputs: Run[];
  copied: number;
  copyStep: Statement<{ after: Buffer; limit: number }>;
  lastCopied: Statement<[], Buffer>;
}

interface RunRow {
  run: number;
  bucket: number;
  level: number;
  ids: number;
  building: number;
  merging_into: number | null;
}

/**
 * The dedupe index's storage, synchronous: one SQLite file, one filter per bucket in RAM, the
 * checkpoint in the same file. It runs inside whichever thread owns it (the worker thread in
 * production, see dedupe-index.worker.ts).
 *
 * Each bucket is a small log-structured merge tree of sorted runs. A group commit writes its sorted
 * keys as a new run (a fresh table filled in key order, so each page is written once, full), and runs
 * are merged in the background, in key order too. A single table per bucket took random inserts
 * instead: once its B-tree outgrew SQLite's page cache, nearly every key read and wrote a page of its
 * own, and the cost per id grew with the bucket; sorted runs keep it flat with a small cache. The runs
 * and merges under way are listed in `dedupe_runs`, changed in the same transactions as the tables
 * they list; a table no longer listed is dropped by a later step (or after the next open).
 *
 * Why SQLite: it is already the embedded log's engine, well kept, and installs everywhere; with the
 * filters in front it is read only for real duplicates and rare false positives, and a bucket is
 * dropped with one DROP TABLE per run. WAL with `synchronous = NORMAL`: a process crash loses nothing
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
  private merges: Merge[] = [];
  /**
   * Run tables that lookups no longer read and `dedupe_runs` no longer lists (the inputs of completed
   * merges, the runs of dropped buckets), dropped one per step: a DROP TABLE reads every page of its
   * table, a second or more for the biggest runs, too long to hold the thread in one call.
   */
  private tablesToDrop: number[] = [];
  private nextRunNumber: number;
  private readonly pageSize: number;
  private readonly statements: {
    readCheckpoint: Statement<[], { sequence: number; log_identity: string }>;
    writeCheckpoint: Statement<[number, string]>;
    listBuckets: Statement<[], { bucket: number; ids: number }>;
    addBucket: Statement<[number]>;
    countBucket: Statement<[number, number]>;
    removeBucket: Statement<[number]>;
    listRuns: Statement<[], RunRow>;
    addRun: Statement<{ run: number; bucket: number; level: number; ids: number; building: number }>;
    countRun: Statement<[number, number]>;
    markMergeInput: Statement<[number, number]>;
    completeRun: Statement<[number]>;
    removeRun: Statement<[number]>;
    removeBucketRuns: Statement<[number]>;
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
    this.database = new Database(file, { timeout: 0 });
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
    // SQLite's default 2 MB page cache: lookups are rare (the filters answer most), and runs are
    // written and merged in key order, which touches each page once; the OS page cache does the rest,
    // outside this process's resident memory.
    this.database.pragma('cache_size = -2048');
    // `building`: a merge output not complete yet, read by no lookup; `merging_into`: the merge output
    // a run is being copied into.
    this.database.exec(`
      CREATE TABLE IF NOT EXISTS dedupe_checkpoint (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        sequence INTEGER NOT NULL,
        log_identity TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS dedupe_buckets (bucket INTEGER PRIMARY KEY, ids INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS dedupe_runs (
        run INTEGER PRIMARY KEY,
        bucket INTEGER NOT NULL,
        level INTEGER NOT NULL,
        ids INTEGER NOT NULL,
        building INTEGER NOT NULL,
        merging_into INTEGER
      );
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
      listRuns: this.database.prepare(
        'SELECT run, bucket, level, ids, building, merging_into FROM dedupe_runs ORDER BY level DESC, run',
      ),
      addRun: this.database.prepare(
        `INSERT INTO dedupe_runs (run, bucket, level, ids, building)
         VALUES (@run, @bucket, @level, @ids, @building)`,
      ),
      countRun: this.database.prepare('UPDATE dedupe_runs SET ids = ? WHERE run = ?'),
      markMergeInput: this.database.prepare('UPDATE dedupe_runs SET merging_into = ? WHERE run = ?'),
      completeRun: this.database.prepare('UPDATE dedupe_runs SET building = 0 WHERE run = ?'),
      removeRun: this.database.prepare('DELETE FROM dedupe_runs WHERE run = ?'),
      removeBucketRuns: this.database.prepare('DELETE FROM dedupe_runs WHERE bucket = ?'),
      pageCount: this.database.prepare('PRAGMA page_count').pluck() as Statement<[], number>,
      freePages: this.database.prepare('PRAGMA freelist_count').pluck() as Statement<[], number>,
    };
    // Above every run table, listed or still waiting to be dropped.
    this.nextRunNumber =
      (this.database
        .prepare(
          `SELECT coalesce(max(CAST(substr(name, 5) AS INTEGER)), 0) FROM sqlite_schema
           WHERE type = 'table' AND name GLOB 'run_*'`,
        )
        .pluck()
        .get() as number) + 1;
    this.adoptSingleTableBuckets();
    this.loadBuckets();
    this.highestCheckpoint = this.storedCheckpoint();
    this.tablesToDrop = this.unlistedRunTables();
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
   * RAM, and written to disk in groups (group commit): sorted by key, as a new run of the bucket. The
   * checkpoint goes to disk with its group, so what is on disk is always consistent; a crash loses
   * only the buffer, which catch-up reads again.
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

  /** Writes the buffer, sorted by key, as a new run of its bucket, with its checkpoint, in one transaction. */
  flush(): void {
    const { bucket, checkpoint } = this.buffer;
    if (!bucket || this.buffer.count === 0) return;
    const order = this.buffer.sortedPositions();
    const keys = this.buffer.keys;
    const rows = new Array<Buffer | number>(ROWS_PER_INSERT * 2);
    const run = this.nextRunNumber++;
    this.database.transaction(() => {
      this.createRunTable(run);
      const insertMany = this.database.prepare(insertIntoRun(run, ROWS_PER_INSERT));
      const insertOne = this.database.prepare(insertIntoRun(run, 1));
      let next = 0;
      for (; next + ROWS_PER_INSERT <= order.length; next += ROWS_PER_INSERT) {
        for (let row = 0; row < ROWS_PER_INSERT; row += 1) {
          const position = order[next + row];
          const offset = position * KEY_BYTES;
          rows[row * 2] = keys.subarray(offset, offset + KEY_BYTES);
          rows[row * 2 + 1] = this.buffer.sequences[position];
        }
        insertMany.run(...rows);
      }
      for (; next < order.length; next += 1) {
        const offset = order[next] * KEY_BYTES;
        insertOne.run(keys.subarray(offset, offset + KEY_BYTES), this.buffer.sequences[order[next]]);
      }
      this.statements.addRun.run({ run, bucket: bucket.number, level: 0, ids: order.length, building: 0 });
      this.statements.countBucket.run(bucket.ids, bucket.number);
      // A buffer flushed because it filled up mid-record has no checkpoint of its own yet: the disk
      // keeps the previous one, and catch-up adds the ids again (idempotently) after a crash.
      if (checkpoint) this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
    })();
    addInOrder(bucket, this.openRun(run, 0, order.length, undefined));
    this.buffer.clear();
    this.buffer.since = Date.now();
    this.catchUpMerges(bucket, order.length);
    this.enforceMaxBytes();
  }

  /**
   * Whether merges are due or under way, or tables wait to be dropped: the owner of the store then
   * calls `mergeStep` when idle.
   */
  get hasMergeWork(): boolean {
    return (
      this.tablesToDrop.length > 0 ||
      this.merges.length > 0 ||
      this.buckets.some((bucket) => planMerge(plannedRuns(bucket)))
    );
  }

  /**
   * Does one bounded step of background work (one transaction); true while work remains. Tables
   * waiting to be dropped go first, one per step. Merges start when a level of a bucket fills up (see
   * run-merge.planner.ts), and of those under way the one of the lowest level goes first: small
   * merges are quick and bring the run count down most.
   */
  mergeStep(): boolean {
    this.advanceMerges();
    return this.hasMergeWork;
  }

  /** The checkpoint on disk, after writing the buffer: what a restart would resume from. */
  checkpoint(): DedupeCheckpoint {
    this.flush();
    return this.storedCheckpoint();
  }

  reset(checkpoint: DedupeCheckpoint): void {
    this.buffer.clear();
    this.buffer.bucket = undefined;
    const tables = this.database.transaction(() => {
      this.statements.writeCheckpoint.run(checkpoint.sequence, checkpoint.logIdentity);
      return this.buckets.flatMap((bucket) => this.unlistBucket(bucket));
    })();
    this.tablesToDrop.push(...tables);
    this.buckets = [];
    this.highestCheckpoint = checkpoint;
    this.merges = [];
    this.layoutChanges += 1;
  }

  /**
   * Drops every bucket older than the window: its runs are unlisted at once (lookups stop reading
   * them), and their tables dropped by the next steps.
   */
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
      buckets: this.buckets.map((bucket) => ({
        startsAt: bucket.number * this.bucketMs,
        ids: bucket.ids,
        runs: bucket.runs.length,
      })),
      ...this.counters,
    };
  }

  /**
   * What the file holds: its tables (runs listed or waiting to be dropped, old per-bucket tables) and
   * the bucket of each listed run. The store holds the file's only connection (the exclusive lock), so
   * diagnostics and tests read it here.
   */
  describeFile(): { tables: string[]; listedRunBuckets: number[] } {
    return {
      tables: this.database
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .pluck()
        .all() as string[],
      listedRunBuckets: this.database.prepare('SELECT bucket FROM dedupe_runs').pluck().all() as number[],
    };
  }

  runLayout(): BucketRuns[] {
    return this.buckets.map((bucket) => ({
      startsAt: bucket.number * this.bucketMs,
      runs: bucket.runs.map((run) => ({ level: run.level, ids: run.ids })),
      mergesUnderWay: this.merges.filter((merge) => merge.bucket === bucket).length,
    }));
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

  /**
   * The sequence recorded for the key at `offset`, 0 if none in a live bucket; newest bucket first,
   * and in a bucket the newest run first (a duplicate is most often a recent retry).
   */
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
      const key = keys.subarray(offset, offset + KEY_BYTES);
      for (let run = bucket.runs.length - 1; run >= 0; run -= 1) {
        const sequence = bucket.runs[run].find.get(key);
        if (sequence !== undefined) return sequence;
      }
    }
    return 0;
  }

  private bucketNumbered(number: number): Bucket {
    const newest = this.buckets[this.buckets.length - 1];
    if (newest && newest.number >= number) return newest;
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
      runs: [],
    };
  }

  private createRunTable(number: number): void {
    this.database.exec(
      `CREATE TABLE run_${number} (key BLOB PRIMARY KEY, sequence INTEGER NOT NULL) WITHOUT ROWID`,
    );
  }

  private openRun(number: number, level: number, ids: number, mergingInto: number | undefined): Run {
    return {
      number,
      level,
      ids,
      mergingInto,
      find: this.database.prepare(`SELECT sequence FROM run_${number} WHERE key = ?`).pluck() as Statement<
        [Buffer],
        number
      >,
    };
  }

  /**
   * A store written before buckets were split into runs holds each bucket in one table, `bucket_<n>`:
   * renamed, that table becomes the bucket's only run, at the level its size would have reached.
   */
  private adoptSingleTableBuckets(): void {
    const singleTableBuckets = this.database
      .prepare(
        `SELECT bucket, ids FROM dedupe_buckets
         WHERE NOT EXISTS (SELECT 1 FROM dedupe_runs WHERE dedupe_runs.bucket = dedupe_buckets.bucket)
           AND EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'bucket_' || dedupe_buckets.bucket)`,
      )
      .all() as Array<{ bucket: number; ids: number }>;
    this.database.transaction(() => {
      for (const { bucket, ids } of singleTableBuckets) {
        const run = this.nextRunNumber++;
        this.database.exec(`ALTER TABLE bucket_${bucket} RENAME TO run_${run}`);
        this.statements.addRun.run({
          run,
          bucket,
          level: levelOfSize(ids, WRITE_BUFFER_IDS),
          ids,
          building: 0,
        });
      }
    })();
  }

  /**
   * Rebuilds every bucket's filter from the keys of its runs (one sequential scan each), and takes up
   * the merges a crash or a close interrupted where their outputs end.
   */
  private loadBuckets(): void {
    const runRows = this.statements.listRuns.all();
    for (const row of this.statements.listBuckets.all()) {
      const bucket = this.openBucket(row.bucket, row.ids);
      const rowsOfBucket = runRows.filter((run) => run.bucket === row.bucket);
      for (const run of rowsOfBucket) {
        if (run.building) continue;
        bucket.runs.push(this.openRun(run.run, run.level, run.ids, run.merging_into ?? undefined));
        for (const key of this.database
          .prepare(`SELECT key FROM run_${run.run}`)
          .pluck()
          .iterate() as IterableIterator<Buffer>) {
          bucket.filter.add(key, 0);
        }
      }
      for (const output of rowsOfBucket) {
        if (!output.building) continue;
        const inputs = bucket.runs.filter((run) => run.mergingInto === output.run);
        this.merges.push(this.openMerge(bucket, output.run, output.level, inputs, output.ids));
      }
      this.buckets.push(bucket);
    }
  }

  /**
   * The background merges fell behind (their owner had no idle time to run them): the writer helps,
   * copying up to CATCH_UP_ROWS_PER_FLUSHED_ID rows per id it wrote.
   */
  private catchUpMerges(bucket: Bucket, flushedIds: number): void {
    let budget = flushedIds * CATCH_UP_ROWS_PER_FLUSHED_ID;
    // A step that copies nothing (it completes a merge, or drops a table) costs no budget, so a spent
    // budget still swaps in the output its last copy finished.
    while (budget >= 0 && bucket.runs.length > MAX_RUNS_PER_BUCKET) {
      const copied = this.advanceMerges();
      if (copied === undefined) return;
      budget -= copied;
    }
  }

  /**
   * One step: drops a table waiting to be dropped, or else starts the merges that are due and advances the
   * lowest one; the rows it copied, undefined when there was nothing to do.
   */
  private advanceMerges(): number | undefined {
    if (this.tablesToDrop.length > 0) {
      this.dropOneTable();
      return 0;
    }
    for (const bucket of this.buckets) {
      for (let plan = planMerge(plannedRuns(bucket)); plan; plan = planMerge(plannedRuns(bucket))) {
        this.startMerge(bucket, plan);
      }
    }
    let lowest: Merge | undefined;
    for (const merge of this.merges) {
      if (!lowest || merge.level < lowest.level) lowest = merge;
    }
    if (!lowest) return undefined;
    const copied = this.copyStep(lowest);
    if (copied === 0) this.completeMerge(lowest);
    return copied;
  }

  private startMerge(bucket: Bucket, plan: PlannedMerge): void {
    const output = this.nextRunNumber++;
    const inputs = plan.inputs.map((number) => bucket.runs.find((run) => run.number === number)!);
    this.database.transaction(() => {
      this.createRunTable(output);
      this.statements.addRun.run({
        run: output,
        bucket: bucket.number,
        level: plan.level,
        ids: 0,
        building: 1,
      });
      for (const input of inputs) this.statements.markMergeInput.run(output, input.number);
    })();
    for (const input of inputs) input.mergingInto = output;
    this.merges.push(this.openMerge(bucket, output, plan.level, inputs, 0));
  }

  private openMerge(bucket: Bucket, output: number, level: number, inputs: Run[], copied: number): Merge {
    // SQLite merges the inputs' key orders (a co-routine per input, no sort) and stops at the limit;
    // on equal keys the left input comes first, so INSERT OR IGNORE keeps the oldest run's sequence.
    const union = inputs
      .map((input) => `SELECT key, sequence FROM run_${input.number} WHERE key > @after`)
      .join(' UNION ALL ');
    return {
      bucket,
      output,
      level,
      inputs,
      copied,
      copyStep: this.database.prepare(
        `INSERT OR IGNORE INTO run_${output} (key, sequence) ${union} ORDER BY key LIMIT @limit`,
      ),
      lastCopied: this.database
        .prepare(`SELECT key FROM run_${output} ORDER BY key DESC LIMIT 1`)
        .pluck() as Statement<[], Buffer>,
    };
  }

  /**
   * Copies the next keys after the last one the output holds: the output itself is the merge's
   * position, so a merge resumes after a crash from what its committed steps wrote.
   */
  private copyStep(merge: Merge): number {
    const copied = this.database.transaction(() => {
      const after = merge.lastCopied.get() ?? BEFORE_EVERY_KEY;
      const inserted = merge.copyStep.run({ after, limit: MERGE_STEP_ROWS }).changes;
      this.statements.countRun.run(merge.copied + inserted, merge.output);
      return inserted;
    })();
    merge.copied += copied;
    return copied;
  }

  /**
   * Swaps the complete output in for its inputs, in one transaction: lookups never miss a key. The
   * inputs' tables are dropped by the next steps (a crash before leaves them unlisted: see
   * `unlistedRunTables`).
   */
  private completeMerge(merge: Merge): void {
    this.database.transaction(() => {
      for (const input of merge.inputs) this.statements.removeRun.run(input.number);
      this.statements.completeRun.run(merge.output);
    })();
    const { bucket } = merge;
    bucket.runs = bucket.runs.filter((run) => run.mergingInto !== merge.output);
    addInOrder(bucket, this.openRun(merge.output, merge.level, merge.copied, undefined));
    this.merges.splice(this.merges.indexOf(merge), 1);
    this.tablesToDrop.push(...merge.inputs.map((input) => input.number));
  }

  private dropOneTable(): void {
    this.database.exec(`DROP TABLE run_${this.tablesToDrop.shift()!}`);
  }

  /** Run tables no longer listed that a crash or a close left undropped. */
  private unlistedRunTables(): number[] {
    return this.database
      .prepare(
        `SELECT CAST(substr(name, 5) AS INTEGER) FROM sqlite_schema WHERE type = 'table' AND name GLOB 'run_*'
         EXCEPT SELECT run FROM dedupe_runs`,
      )
      .pluck()
      .all() as number[];
  }

  private dropOldest(): void {
    const oldest = this.buckets.shift();
    if (!oldest) return;
    this.layoutChanges += 1;
    if (oldest === this.buffer.bucket) {
      this.buffer.clear();
      this.buffer.bucket = undefined;
    }
    this.tablesToDrop.push(...this.database.transaction(() => this.unlistBucket(oldest))());
    this.merges = this.merges.filter((merge) => merge.bucket !== oldest);
  }

  /**
   * Removes the bucket and its runs (those of its merges under way included) from the lists, inside
   * the caller's transaction: the tables to drop once it commits.
   */
  private unlistBucket(bucket: Bucket): number[] {
    this.statements.removeBucketRuns.run(bucket.number);
    this.statements.removeBucket.run(bucket.number);
    return [
      ...bucket.runs.map((run) => run.number),
      ...this.merges.filter((merge) => merge.bucket === bucket).map((merge) => merge.output),
    ];
  }

  private storeBytes(): number {
    return (this.statements.pageCount.get()! - this.statements.freePages.get()!) * this.pageSize;
  }

  /**
   * Over the cap: drop the oldest buckets early (never the newest), and count each. A merge holds its
   * inputs and its output on disk until it completes, so a cap must leave room for that.
   */
  private enforceMaxBytes(): void {
    if (this.maxBytes <= 0) return;
    while (this.storeBytes() > this.maxBytes) {
      // The tables waiting to be dropped go first: no lookup reads them.
      if (this.tablesToDrop.length > 0) {
        this.dropOneTable();
      } else if (this.buckets.length > 1) {
        this.dropOldest();
        this.counters.droppedEarlyBuckets += 1;
      } else {
        return;
      }
    }
  }
}

function insertIntoRun(run: number, rows: number): string {
  return `INSERT OR IGNORE INTO run_${run} (key, sequence) VALUES ${Array.from({ length: rows }, () => '(?, ?)').join(', ')}`;
}

/** Puts the run where it belongs among the bucket's runs: highest level first, then by number. */
function addInOrder(bucket: Bucket, run: Run): void {
  const position = bucket.runs.findIndex(
    (other) => other.level < run.level || (other.level === run.level && other.number > run.number),
  );
  bucket.runs.splice(position === -1 ? bucket.runs.length : position, 0, run);
}

function plannedRuns(bucket: Bucket): PlannedRun[] {
  return bucket.runs.map((run) => ({
    number: run.number,
    level: run.level,
    merging: run.mergingInto !== undefined,
  }));
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
