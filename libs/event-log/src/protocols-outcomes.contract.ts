import type { EventLog, EventLogSettings } from './event-log.port';
import { sleep, type EventLogContractFactory } from './event-log.contract';
import type { ProtocolsOutcomeToRecord } from './ports/protocols-outcomes.port';

/**
 * The contract of `ProtocolsOutcomeStore` (part of `EventLog`), run against every adapter with the
 * same factory as the event-log contract.
 */
export function describeProtocolsOutcomesContract(
  adapterName: string,
  factory: () => EventLogContractFactory,
): void {
  describe(`ProtocolsOutcomeStore contract (${adapterName})`, () => {
    const settings: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };
    let log: EventLog;
    let dispose: () => Promise<void>;
    let counter = 0;

    beforeEach(async () => {
      const store = await factory().newStore(settings);
      log = await store.open();
      dispose = async () => {
        await log.close();
        await store.dispose();
      };
    });

    afterEach(async () => {
      await dispose();
    });

    function outcome(
      sourceId: string,
      messageId: string,
      extra: Record<string, unknown> = {},
    ): ProtocolsOutcomeToRecord {
      counter += 1;
      return {
        workspaceId: 'ws1',
        sourceId,
        messageId,
        outcome: { n: counter, violations: [{ type: 'Required', field: 'properties.a' }], ...extra },
      };
    }

    it('records outcomes once per source and messageId, and says which were first-seen', async () => {
      const first = await log.recordProtocolsOutcomes([outcome('src-a', 'm1'), outcome('src-a', 'm2')]);
      expect(first).toEqual([{ duplicate: false }, { duplicate: false }]);
      const again = await log.recordProtocolsOutcomes([
        outcome('src-a', 'm1', { changed: true }),
        outcome('src-b', 'm1'),
        outcome('src-a', 'm3'),
      ]);
      expect(again).toEqual([{ duplicate: true }, { duplicate: false }, { duplicate: false }]);
      const ofA = await log.readProtocolsOutcomes('src-a', new Date(Date.now() - 60_000));
      expect(ofA.map((recorded) => recorded.messageId)).toEqual(['m1', 'm2', 'm3']);
      // The duplicate stored nothing: the first body is the one kept.
      expect(ofA[0].outcome).not.toHaveProperty('changed');
      expect(ofA[0]).toMatchObject({
        workspaceId: 'ws1',
        sourceId: 'src-a',
        outcome: { violations: [{ type: 'Required', field: 'properties.a' }] },
      });
      expect(ofA[0].recordedAt).toBeInstanceOf(Date);
      const ofB = await log.readProtocolsOutcomes('src-b', new Date(0));
      expect(ofB.map((recorded) => recorded.messageId)).toEqual(['m1']);
    });

    it('reads only what was recorded at or after `since`, oldest first', async () => {
      await log.recordProtocolsOutcomes([outcome('src-t', 'early')]);
      await sleep(50);
      const between = new Date();
      await sleep(50);
      await log.recordProtocolsOutcomes([outcome('src-t', 'late-1')]);
      await log.recordProtocolsOutcomes([outcome('src-t', 'late-2')]);
      const recent = await log.readProtocolsOutcomes('src-t', between);
      expect(recent.map((recorded) => recorded.messageId)).toEqual(['late-1', 'late-2']);
      expect(recent[0].recordedAt.getTime()).toBeGreaterThanOrEqual(between.getTime());
      expect(await log.readProtocolsOutcomes('src-t', new Date(Date.now() + 60_000))).toEqual([]);
      expect(await log.readProtocolsOutcomes('src-never', new Date(0))).toEqual([]);
    });

    it('reads at most `limit` outcomes: the newest of the window, oldest first', async () => {
      for (let batch = 0; batch < 3; batch += 1) {
        await log.recordProtocolsOutcomes(
          Array.from({ length: 4 }, (_, index) => outcome('src-l', `m${batch * 4 + index}`)),
        );
      }
      const newest = await log.readProtocolsOutcomes('src-l', new Date(0), 5);
      expect(newest.map((recorded) => recorded.messageId)).toEqual(['m7', 'm8', 'm9', 'm10', 'm11']);
      expect(newest[4].outcome).toMatchObject({ violations: [{ type: 'Required' }] });
      const all = await log.readProtocolsOutcomes('src-l', new Date(0), 50);
      expect(all).toHaveLength(12);
      expect(await log.readProtocolsOutcomes('src-l', new Date(0), 12)).toEqual(all);
    });

    it('keeps what it recorded across a reopen of the same storage', async () => {
      const store = await factory().newStore(settings);
      const first = await store.open();
      try {
        await first.recordProtocolsOutcomes([outcome('src-r', 'kept')]);
      } finally {
        await first.close();
      }
      const second = await store.open();
      try {
        expect((await second.readProtocolsOutcomes('src-r', new Date(0))).map((r) => r.messageId)).toEqual([
          'kept',
        ]);
        expect(await second.recordProtocolsOutcomes([outcome('src-r', 'kept')])).toEqual([
          { duplicate: true },
        ]);
      } finally {
        await second.close();
        await store.dispose();
      }
    });

    it('refuses a source id that is not a subject token, storing nothing', async () => {
      await expect(log.recordProtocolsOutcomes([outcome('bad.source', 'x')])).rejects.toThrow();
      await expect(log.readProtocolsOutcomes('bad.source', new Date(0))).rejects.toThrow();
    });

    it('records an empty list as nothing', async () => {
      expect(await log.recordProtocolsOutcomes([])).toEqual([]);
    });
  });
}
