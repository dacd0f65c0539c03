import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DedupeIndex, DedupeIndexSettings } from './dedupe-index.port';
import { INDEX_LOCKED } from './hour-bucketed.store';
import { messageIdKeys } from './message-id.key';

/**
 * The one contract every `DedupeIndex` adapter must pass. Time is passed explicitly, so buckets of
 * one "hour" and a window of several are crossed without waiting.
 */
export interface DedupeIndexContractFactory {
  /** Opens (or reopens) the index stored in `file`. */
  open(file: string, settings: DedupeIndexSettings): Promise<DedupeIndex>;
}

const HOUR = 1_000;
const SETTINGS: DedupeIndexSettings = { windowMs: 24 * HOUR, bucketMs: HOUR };
/** A time well inside a bucket, so tests that add whole hours stay clear of bucket edges. */
const START = 1_000_000 * HOUR + 100;

function ids(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${index}-${'x'.repeat(index % 40)}`);
}

function checkpointAt(sequence: number) {
  return { sequence, logIdentity: 'log-1' };
}

export function describeDedupeIndexContract(adapterName: string, factory: DedupeIndexContractFactory): void {
  describe(`DedupeIndex contract: ${adapterName}`, () => {
    let directory: string;
    const opened: DedupeIndex[] = [];

    async function open(settings: DedupeIndexSettings = SETTINGS): Promise<DedupeIndex> {
      const index = await factory.open(join(directory, 'dedupe-index.sqlite'), settings);
      opened.push(index);
      return index;
    }

    beforeEach(() => {
      directory = mkdtempSync(join(tmpdir(), 'dedupe-index-contract-'));
    });

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((index) => index.close().catch(() => undefined)));
      rmSync(directory, { recursive: true, force: true });
    });

    it('finds nothing in a new index, and a checkpoint of 0', async () => {
      const index = await open();
      expect([...(await index.lookup(ids('new', 5), START))]).toEqual([0, 0, 0, 0, 0]);
      expect(await index.checkpoint()).toEqual({ sequence: 0, logIdentity: '' });
      expect([...(await index.lookup([], START))]).toEqual([]);
    });

    it('finds recorded ids with their sequence, and only those', async () => {
      const index = await open();
      const recorded = ids('rec', 300);
      await index.record(
        { messageIds: recorded, sequences: recorded.map((_, position) => position + 1) },
        checkpointAt(300),
        START,
      );
      const found = await index.lookup([...recorded, ...ids('other', 300)], START + 10);
      expect([...found.subarray(0, 300)]).toEqual(recorded.map((_, position) => position + 1));
      expect([...found.subarray(300)].every((sequence) => sequence === 0)).toBe(true);
      expect(await index.checkpoint()).toEqual(checkpointAt(300));
    });

    it('keeps an id for the whole window across bucket edges, and forgets it one bucket after', async () => {
      const index = await open();
      await index.record({ messageIds: ['kept'], sequences: [7] }, checkpointAt(7), START);
      // Fill later buckets too, so lookups go through several filters and tables.
      for (let hour = 1; hour <= 23; hour += 1) {
        await index.record(
          { messageIds: ids(`hour-${hour}`, 20), sequences: ids('', 20).map((_, n) => 100 * hour + n) },
          checkpointAt(100 * hour + 19),
          START + hour * HOUR,
        );
      }
      expect((await index.lookup(['kept'], START + 24 * HOUR - 200))[0]).toBe(7);
      expect((await index.lookup(['kept'], START + 24 * HOUR + 50))[0]).toBe(7);
      expect((await index.lookup(['kept'], START + 25 * HOUR + 10))[0]).toBe(0);
      expect((await index.lookup(['hour-23-3-xxx'], START + 25 * HOUR + 10))[0]).toBe(2303);
    });

    it('keeps the first sequence of an id recorded twice, within one record and across records', async () => {
      const index = await open();
      await index.record({ messageIds: ['a', 'b', 'a'], sequences: [1, 2, 3] }, checkpointAt(3), START);
      await index.record({ messageIds: ['b', 'c'], sequences: [9, 10] }, checkpointAt(10), START + 2 * HOUR);
      expect([...(await index.lookup(['a', 'b', 'c'], START + 2 * HOUR))]).toEqual([1, 2, 10]);
      expect((await index.stats()).buckets.map((bucket) => bucket.ids)).toEqual([2, 1]);
    });

    it('answers a lookup sent right after a record (not awaited) with the recorded ids', async () => {
      const index = await open();
      const recording = index.record({ messageIds: ['early'], sequences: [5] }, checkpointAt(5), START);
      const looking = index.lookup(['early'], START);
      await recording;
      expect((await looking)[0]).toBe(5);
    });

    it('keeps ids and checkpoint across a reopen, with the filters rebuilt', async () => {
      const first = await open();
      const recorded = ids('durable', 2_000);
      await first.record(
        { messageIds: recorded, sequences: recorded.map((_, position) => position + 1) },
        checkpointAt(2_000),
        START,
      );
      await first.record(
        { messageIds: ['later'], sequences: [2_001] },
        checkpointAt(2_001),
        START + 3 * HOUR,
      );
      await first.close();
      const second = await open();
      expect(await second.checkpoint()).toEqual(checkpointAt(2_001));
      const found = await second.lookup([...recorded, 'later', 'never'], START + 3 * HOUR);
      expect([...found]).toEqual([...recorded.map((_, position) => position + 1), 2_001, 0]);
      const stats = await second.stats();
      expect(stats.buckets).toEqual([
        { startsAt: Math.floor(START / HOUR) * HOUR, ids: 2_000, runs: expect.any(Number) },
        { startsAt: (Math.floor(START / HOUR) + 3) * HOUR, ids: 1, runs: 1 },
      ]);
    });

    it('drops whole buckets as they leave the window, so memory stays flat over many windows', async () => {
      const index = await open({ windowMs: 4 * HOUR, bucketMs: HOUR });
      const filterBytes: number[] = [];
      let sequence = 0;
      for (let hour = 0; hour < 20; hour += 1) {
        const batch = ids(`flat-${hour}`, 500);
        await index.record(
          { messageIds: batch, sequences: batch.map(() => ++sequence) },
          checkpointAt(sequence),
          START + hour * HOUR,
        );
        const stats = await index.stats();
        expect(stats.buckets.length).toBeLessThanOrEqual(5);
        filterBytes.push(stats.filterBytes);
      }
      // From the first full window on, the filters weigh the same: old buckets leave as new ones come.
      expect(new Set(filterBytes.slice(5)).size).toBe(1);
      await index.expire(START + 40 * HOUR);
      expect((await index.stats()).buckets).toEqual([]);
    });

    it('counts lookups, hits and store reads', async () => {
      const index = await open();
      await index.record({ messageIds: ['seen'], sequences: [1] }, checkpointAt(1), START);
      await index.lookup(['seen', ...ids('unseen', 99)], START);
      const stats = await index.stats();
      expect(stats.lookups).toBe(100);
      expect(stats.hits).toBe(1);
      // The filters rule out nearly every unseen id without reading the store.
      expect(stats.storeReads).toBeLessThan(5);
    });

    it('drops the oldest buckets early when the store outgrows its cap, counting them, and never fails a record', async () => {
      const index = await open({ windowMs: 24 * HOUR, bucketMs: HOUR, maxBytes: 400_000 });
      let sequence = 0;
      for (let hour = 0; hour < 12; hour += 1) {
        const batch = ids(`capped-${hour}`, 2_000);
        await index.record(
          { messageIds: batch, sequences: batch.map(() => ++sequence) },
          checkpointAt(sequence),
          START + hour * HOUR,
        );
      }
      const stats = await index.stats();
      expect(stats.storeBytes).toBeLessThanOrEqual(400_000);
      expect(stats.droppedEarlyBuckets).toBeGreaterThan(0);
      expect(stats.buckets[stats.buckets.length - 1]).toMatchObject({
        startsAt: (Math.floor(START / HOUR) + 11) * HOUR,
        ids: 2_000,
      });
      // The newest hour is still answered exactly; the dropped oldest is forgotten.
      expect(
        (await index.lookup(['capped-11-5-xxxxx', 'capped-0-5-xxxxx'], START + 11 * HOUR))[0],
      ).toBeGreaterThan(0);
      expect((await index.lookup(['capped-0-5-xxxxx'], START + 11 * HOUR))[0]).toBe(0);
    });

    it('forgets everything on reset, keeping the new checkpoint', async () => {
      const index = await open();
      await index.record({ messageIds: ['gone'], sequences: [1] }, checkpointAt(1), START);
      await index.reset({ sequence: 0, logIdentity: 'log-2' });
      expect((await index.lookup(['gone'], START))[0]).toBe(0);
      expect(await index.checkpoint()).toEqual({ sequence: 0, logIdentity: 'log-2' });
      expect((await index.stats()).buckets).toEqual([]);
    });

    it('keeps the highest checkpoint when a lower one comes later, and takes keys made by the caller', async () => {
      const index = await open();
      await index.record({ messageIds: ['high'], sequences: [9] }, checkpointAt(9), START);
      const keys = messageIdKeys(['low']);
      await index.record({ messageIds: ['low'], sequences: [4], keys }, checkpointAt(4), START);
      expect(await index.checkpoint()).toEqual(checkpointAt(9));
      expect([...(await index.lookup(['high', 'low'], START, messageIdKeys(['high', 'low'])))]).toEqual([
        9, 4,
      ]);
    });

    it('refuses a second index on the same file while the first is open, and opens it once closed', async () => {
      const first = await open();
      await first.record({ messageIds: ['held'], sequences: [1] }, checkpointAt(1), START);
      await expect(open()).rejects.toThrow(INDEX_LOCKED);
      await first.close();
      const second = await open();
      expect((await second.lookup(['held'], START))[0]).toBe(1);
    });

    it('refuses calls once closed', async () => {
      const index = await open();
      await index.close();
      await expect(index.lookup(['x'], START)).rejects.toThrow(/closed/);
    });
  });
}
