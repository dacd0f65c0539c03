import { EventLogUnavailableError, MAX_SEEN_ONCE_TTL_MS, SeenOnceCapacityError } from '../event-log.port';
import {
  ROOMY_SETTINGS,
  message,
  sleep,
  unique,
  eventLogHarness,
  type EventLogContractFactory,
} from './event-log-harness.contract';

/** What every engine's `SeenOnce` must do (see the port's documentation). */
export function describeSeenOnceContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`SeenOnce contract: ${adapterName}`, () => {
    const { newStore, open, openFresh } = eventLogHarness(getFactory);

    describe('seen once', () => {
      const key = () => unique('seen').replace(/[^A-Za-z0-9_-]/g, '_');

      it('records a key once: true the first time, false while it lives, keys apart', async () => {
        const log = await openFresh();
        const [a, b] = [key(), key()];
        expect(await log.markSeenOnce(a, 60_000)).toBe(true);
        expect(await log.markSeenOnce(a, 60_000)).toBe(false);
        expect(await log.markSeenOnce(b, 60_000)).toBe(true);
        expect(await log.markSeenOnce(a, 60_000)).toBe(false);
      });

      it('lets exactly one of several concurrent callers record a key', async () => {
        const log = await openFresh();
        const contended = key();
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, () => log.markSeenOnce(contended, 60_000)),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      });

      it('forgets a key once its ttl has passed, and records it again', async () => {
        const log = await openFresh();
        const shortLived = key();
        expect(await log.markSeenOnce(shortLived, 300)).toBe(true);
        expect(await log.markSeenOnce(shortLived, 300)).toBe(false);
        await sleep(500);
        expect(await log.markSeenOnce(shortLived, 60_000)).toBe(true);
        expect(await log.markSeenOnce(shortLived, 60_000)).toBe(false);
      });

      it('remembers across a reopen (a restart) and for a second instance on the same storage (a replica)', async () => {
        const store = await newStore();
        const first = await open(store);
        const [beforeRestart, fromReplica] = [key(), key()];
        expect(await first.markSeenOnce(beforeRestart, 60_000)).toBe(true);
        const replica = await open(store);
        expect(await replica.markSeenOnce(beforeRestart, 60_000)).toBe(false);
        expect(await replica.markSeenOnce(fromReplica, 60_000)).toBe(true);
        expect(await first.markSeenOnce(fromReplica, 60_000)).toBe(false);
        await first.close();
        await replica.close();
        const restarted = await open(store);
        expect(await restarted.markSeenOnce(beforeRestart, 60_000)).toBe(false);
        expect(await restarted.markSeenOnce(fromReplica, 60_000)).toBe(false);
      });

      it('refuses a new key past its capacity instead of forgetting a live one', async () => {
        const log = await openFresh({ ...ROOMY_SETTINGS, seenOnceCapacity: 3 });
        const kept = [key(), key(), key()];
        for (const each of kept) expect(await log.markSeenOnce(each, 60_000)).toBe(true);
        const refusal = log.markSeenOnce(key(), 60_000);
        await expect(refusal).rejects.toThrow(SeenOnceCapacityError);
        await expect(refusal).rejects.toThrow(EventLogUnavailableError);
        // Every live key is still refused: none was evicted to make room.
        for (const each of kept)
          expect(await log.markSeenOnce(each, 60_000).catch(() => 'refused')).not.toBe(true);
        // A refusal does not disturb the other writes of the log.
        const [stored] = await log.publishBatch([message('src-seen')]);
        expect(stored.duplicate).toBe(false);
      });

      it('refuses invalid keys and ttls', async () => {
        const log = await openFresh();
        await expect(log.markSeenOnce('', 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('a.b', 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('x'.repeat(129), 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('ok', 0)).rejects.toThrow(RangeError);
        await expect(log.markSeenOnce('ok', 1.5)).rejects.toThrow(RangeError);
        await expect(log.markSeenOnce('ok', MAX_SEEN_ONCE_TTL_MS + 1)).rejects.toThrow(RangeError);
        expect(await log.markSeenOnce('ok', MAX_SEEN_ONCE_TTL_MS)).toBe(true);
      });
    });
  });
}
