// The store's sorted runs and their merges, on real SQLite files: what the port's contract cannot see
// (how many runs a bucket holds, merges cut short by a crash, files written before runs existed).
import { Database } from '@tributary/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DedupeIndexSettings } from './dedupe-index.port';
import { HourBucketedStore, MAX_RUNS_PER_BUCKET, MERGE_STEP_ROWS } from './hour-bucketed.store';
import { KEY_BYTES, messageIdKeys } from './message-id.key';
import { MERGE_FANOUT, TOP_LEVEL } from './run-merge.planner';

const HOUR = 1_000;
const SETTINGS: DedupeIndexSettings = { windowMs: 24 * HOUR, bucketMs: HOUR };
/** A time well inside a bucket. */
const START = 1_000_000 * HOUR + 100;
const START_BUCKET = Math.floor(START / HOUR);

function ids(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
}

function checkpointAt(sequence: number) {
  return { sequence, logIdentity: 'log-1' };
}

describe('HourBucketedStore runs', () => {
  let directory: string;
  let file: string;
  const opened: HourBucketedStore[] = [];
  /** The ids recorded, in order: the n-th has sequence n + 1. */
  let recorded: string[];

  function open(settings: DedupeIndexSettings = SETTINGS): HourBucketedStore {
    const store = new HourBucketedStore(file, settings);
    opened.push(store);
    return store;
  }

  /** One group commit of `count` new ids: one new run. */
  function commit(store: HourBucketedStore, prefix: string, count: number, now = START): void {
    const batch = ids(prefix, count);
    const first = recorded.length + 1;
    recorded.push(...batch);
    store.record(
      batch,
      batch.map((_, position) => first + position),
      checkpointAt(recorded.length),
      now,
    );
    store.flush();
  }

  function mergeAll(store: HourBucketedStore): void {
    while (store.mergeStep());
  }

  function expectEveryIdFound(store: HourBucketedStore, now = START): void {
    expect([...store.lookup(recorded, now)]).toEqual(recorded.map((_, position) => position + 1));
  }

  /** What the file holds: its tables named like `glob` (the store holds the file's only connection). */
  function tablesOnDisk(store: HourBucketedStore, glob: string): string[] {
    return store.describeFile().tables.filter((name) => globMatches(glob, name));
  }

  function globMatches(glob: string, name: string): boolean {
    return name.startsWith(glob.replace(/\*$/, ''));
  }

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'hour-bucketed-store-'));
    file = join(directory, 'dedupe-index.sqlite');
    recorded = [];
  });

  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('merges the runs of many group commits level by level, every id keeping its first sequence', () => {
    const store = open();
    let mostRuns = 0;
    for (let commitNumber = 0; commitNumber < 80; commitNumber += 1) {
      commit(store, `commit-${commitNumber}`, 100);
      mergeAll(store);
      mostRuns = Math.max(mostRuns, store.runLayout()[0].runs.length);
    }
    expect(mostRuns).toBeLessThanOrEqual((MERGE_FANOUT - 1) * TOP_LEVEL);
    // 80 commits: 64 merged twice into one run of level 2, 16 once into two runs of level 1.
    expect(store.runLayout()).toEqual([
      {
        startsAt: START_BUCKET * HOUR,
        runs: [
          { level: 2, ids: 6_400 },
          { level: 1, ids: 800 },
          { level: 1, ids: 800 },
        ],
        mergesUnderWay: 0,
      },
    ]);
    expectEveryIdFound(store);
    store.record(recorded.slice(0, 3), [90_001, 90_002, 90_003], checkpointAt(90_003), START);
    expect([...store.lookup(recorded.slice(0, 3), START)]).toEqual([1, 2, 3]);
    expect(store.stats().buckets).toEqual([
      { startsAt: START_BUCKET * HOUR, ids: 8_000, runs: expect.any(Number) },
    ]);
    store.close();

    const reopened = open();
    expectEveryIdFound(reopened);
    expect(reopened.runLayout()[0].runs.map((run) => run.level)).toEqual([2, 1, 1]);
  });

  it('has the writer merge when nothing merges in the background, keeping the runs under the bound', () => {
    const store = open();
    for (let commitNumber = 0; commitNumber < 3 * MAX_RUNS_PER_BUCKET; commitNumber += 1) {
      commit(store, `unhelped-${commitNumber}`, 50);
      expect(store.runLayout()[0].runs.length).toBeLessThanOrEqual(MAX_RUNS_PER_BUCKET);
    }
    expect(store.runLayout()[0].runs.some((run) => run.level > 0)).toBe(true);
    expectEveryIdFound(store);
  });

  it('resumes a merge that a crash cut short, and drops the tables it replaced, losing and duplicating nothing', () => {
    const store = open();
    const idsPerRun = Math.ceil((MERGE_STEP_ROWS * 1.25) / MERGE_FANOUT);
    for (let commitNumber = 0; commitNumber < MERGE_FANOUT; commitNumber += 1) {
      commit(store, `crash-${commitNumber}`, idsPerRun);
    }
    // Starts the merge and copies one step, not all of it.
    expect(store.mergeStep()).toBe(true);
    expect(store.runLayout()[0]).toMatchObject({ mergesUnderWay: 1 });
    store.abandon();

    const reopened = open();
    const layout = reopened.runLayout()[0];
    expect(layout.mergesUnderWay).toBe(1);
    expect(layout.runs).toEqual(Array.from({ length: MERGE_FANOUT }, () => ({ level: 0, ids: idsPerRun })));
    expectEveryIdFound(reopened);
    // Up to the step that swaps the output in; then a crash before the inputs' tables are dropped.
    while (reopened.runLayout()[0].mergesUnderWay > 0) reopened.mergeStep();
    expect(tablesOnDisk(reopened, 'run_*')).toHaveLength(MERGE_FANOUT + 1);
    reopened.abandon();

    const again = open();
    expect(again.runLayout()[0].runs).toEqual([{ level: 1, ids: MERGE_FANOUT * idsPerRun }]);
    expectEveryIdFound(again);
    mergeAll(again);
    expectEveryIdFound(again);
    expect(again.stats().buckets).toEqual([
      { startsAt: START_BUCKET * HOUR, ids: MERGE_FANOUT * idsPerRun, runs: 1 },
    ]);
    expect(tablesOnDisk(again, 'run_*')).toHaveLength(1);
  });

  it('drops every run of an expired bucket, and the output of its merge under way', () => {
    const store = open({ windowMs: 2 * HOUR, bucketMs: HOUR });
    for (let commitNumber = 0; commitNumber <= MERGE_FANOUT; commitNumber += 1) {
      commit(store, `expiring-${commitNumber}`, 5_000);
    }
    store.mergeStep();
    expect(store.runLayout()[0]).toMatchObject({ mergesUnderWay: 1 });
    const expiring = [...recorded];
    commit(store, 'kept', 10, START + HOUR);
    // The bucket's runs, its merge's output, and the next bucket's run.
    expect(tablesOnDisk(store, 'run_*')).toHaveLength(MERGE_FANOUT + 1 + 1 + 1);

    store.expire(START + 3 * HOUR);
    expect(store.runLayout()).toEqual([
      { startsAt: (START_BUCKET + 1) * HOUR, runs: [{ level: 0, ids: 10 }], mergesUnderWay: 0 },
    ]);
    expect(store.describeFile().listedRunBuckets).toEqual([START_BUCKET + 1]);
    expect([...store.lookup(expiring.slice(0, 3), START + 3 * HOUR)]).toEqual([0, 0, 0]);
    // The bucket's runs and its merge's output, unlisted, are dropped by the next steps, one each.
    const unlisted = MERGE_FANOUT + 1 + 1;
    for (let step = 1; step <= unlisted; step += 1) expect(store.mergeStep()).toBe(step < unlisted);
    expect(tablesOnDisk(store, 'run_*')).toHaveLength(1);

    store.reset(checkpointAt(0));
    expect(store.describeFile().listedRunBuckets).toEqual([]);
    mergeAll(store);
    expect(tablesOnDisk(store, 'run_*')).toEqual([]);
  });

  it('reopens after a reset whose tables a crash left undropped, and writes new runs beside them', () => {
    const store = open();
    commit(store, 'before-reset', 100);
    store.reset(checkpointAt(0));
    store.abandon();

    recorded = [];
    const reopened = open();
    expect(reopened.runLayout()).toEqual([]);
    commit(reopened, 'after-reset', 100);
    expectEveryIdFound(reopened);
    mergeAll(reopened);
    expect(tablesOnDisk(reopened, 'run_*')).toHaveLength(1);
    expect([...reopened.lookup(['before-reset-1'], START)]).toEqual([0]);
  });

  it('opens a store written with one table per bucket, each table becoming its bucket run', () => {
    const legacy = new Database(file);
    legacy.exec(`
      CREATE TABLE dedupe_checkpoint (
        id INTEGER PRIMARY KEY CHECK (id = 1), sequence INTEGER NOT NULL, log_identity TEXT NOT NULL
      );
      CREATE TABLE dedupe_buckets (bucket INTEGER PRIMARY KEY, ids INTEGER NOT NULL);
      INSERT INTO dedupe_checkpoint VALUES (1, 500, 'log-1');
    `);
    const writeBucket = (bucket: number, batch: string[]) => {
      legacy.exec(
        `CREATE TABLE bucket_${bucket} (key BLOB PRIMARY KEY, sequence INTEGER NOT NULL) WITHOUT ROWID`,
      );
      const insert = legacy.prepare(`INSERT INTO bucket_${bucket} (key, sequence) VALUES (?, ?)`);
      const keys = messageIdKeys(batch);
      const first = recorded.length + 1;
      batch.forEach((_, position) =>
        insert.run(keys.subarray(position * KEY_BYTES, (position + 1) * KEY_BYTES), first + position),
      );
      legacy.prepare('INSERT INTO dedupe_buckets (bucket, ids) VALUES (?, ?)').run(bucket, batch.length);
      recorded.push(...batch);
    };
    writeBucket(START_BUCKET, ids('old-first', 300));
    writeBucket(START_BUCKET + 1, ids('old-second', 200));
    legacy.close();

    const store = open();
    expect(store.checkpoint()).toEqual(checkpointAt(500));
    expectEveryIdFound(store, START + HOUR);
    expect(store.runLayout().map((bucket) => bucket.runs)).toEqual([
      [{ level: 0, ids: 300 }],
      [{ level: 0, ids: 200 }],
    ]);
    commit(store, 'new', 100, START + HOUR);
    expectEveryIdFound(store, START + HOUR);
    store.close();

    const reopened = open();
    expectEveryIdFound(reopened, START + HOUR);
    expect(reopened.stats().buckets.map((bucket) => bucket.ids)).toEqual([300, 300]);
    expect(tablesOnDisk(reopened, 'bucket_*')).toEqual([]);
    expect(tablesOnDisk(reopened, 'run_*')).toHaveLength(3);
  });
});
