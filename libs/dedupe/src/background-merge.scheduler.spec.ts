// The store's merges run in the idle turns of the thread that owns it, on the calling thread and on
// the worker alike, and a step that fails is reported rather than lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { BackgroundMergeScheduler } from './background-merge.scheduler';
import type { DedupeIndex, DedupeIndexSettings } from './dedupe-index.port';
import { HourBucketedStore } from './hour-bucketed.store';
import { MERGE_FANOUT } from './run-merge.planner';
import { SqliteDedupeIndex } from './sqlite-dedupe-index.adapter';
import { WorkerDedupeIndex } from './worker-dedupe-index.adapter';

const HOUR = 1_000;
const SETTINGS: DedupeIndexSettings = { windowMs: 24 * HOUR, bucketMs: HOUR };
const START = 1_000_000 * HOUR + 100;
const IDS_PER_GROUP = 100;

function ids(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}`);
}

describe('background merging', () => {
  let directory: string;
  let file: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'background-merge-'));
    file = join(directory, 'dedupe-index.sqlite');
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  /** The runs lookups read, per bucket, as the index reports them. */
  async function runsPerBucket(index: DedupeIndex): Promise<number[]> {
    return (await index.stats()).buckets.map((bucket) => bucket.runs);
  }

  const adapters: Array<[string, (file: string) => Promise<DedupeIndex>]> = [
    ['on the calling thread', async (path) => new SqliteDedupeIndex(path, SETTINGS)],
    ['on a worker thread', (path) => WorkerDedupeIndex.start(path, SETTINGS)],
  ];

  it.each(adapters)('merges a full level of runs between calls, unasked, %s', async (_, open) => {
    const index = await open(file);
    const recorded: string[] = [];
    try {
      for (let group = 0; group < MERGE_FANOUT; group += 1) {
        const batch = ids(`group-${group}`, IDS_PER_GROUP);
        const first = recorded.length + 1;
        recorded.push(...batch);
        await index.record(
          { messageIds: batch, sequences: batch.map((_id, position) => first + position) },
          { sequence: recorded.length, logIdentity: 'log-1' },
          START,
        );
        // Writes the group as a run of its own.
        await index.checkpoint();
      }
      for (let waited = 0; (await runsPerBucket(index))[0] > 1 && waited < 5_000; waited += 20)
        await sleep(20);
      expect((await index.stats()).buckets).toEqual([
        { startsAt: expect.any(Number), ids: MERGE_FANOUT * IDS_PER_GROUP, runs: 1 },
      ]);
      expect([...(await index.lookup(recorded, START))]).toEqual(
        recorded.map((_id, position) => position + 1),
      );
    } finally {
      await index.close();
    }
  });

  it('reports a step that failed on the next write, then tries again', async () => {
    const store = new HourBucketedStore(file, SETTINGS);
    for (let group = 0; group < MERGE_FANOUT; group += 1) {
      const batch = ids(`failing-${group}`, IDS_PER_GROUP);
      store.record(
        batch,
        batch.map(() => 1),
        { sequence: 1, logIdentity: 'log-1' },
        START,
      );
      store.flush();
    }
    const merges = new BackgroundMergeScheduler(store);
    // The database closes under the scheduler, with a merge due.
    store.abandon();
    merges.schedule();
    await nextTurn();
    expect(() => merges.schedule()).toThrow(/^merging the dedupe index's runs failed: .*not open/);
    expect(() => merges.schedule()).not.toThrow();
    merges.stop();
  });
});
