import { eventLogHarness, type EventLogContractFactory } from './event-log-harness.contract';

/** What every engine's `Leases` must do (see the port's documentation). */
export function describeLeasesContract(adapterName: string, getFactory: () => EventLogContractFactory): void {
  describe(`Leases contract: ${adapterName}`, () => {
    const { newStore, open, openFresh } = eventLogHarness(getFactory);

    describe('leases', () => {
      it('answers null for a lease never written, and creates one only once', async () => {
        const log = await openFresh();
        expect(await log.readLease('replay_rp_1')).toBeNull();
        const revision = await log.writeLease('replay_rp_1', { holder: 'a', data: { step: 1 } }, 0);
        expect(revision).toEqual(expect.any(Number));
        expect(revision).toBeGreaterThan(0);
        // A second "create" loses: the lease exists.
        expect(await log.writeLease('replay_rp_1', { holder: 'b', data: {} }, 0)).toBeNull();
        expect(await log.readLease('replay_rp_1')).toEqual({ holder: 'a', data: { step: 1 }, revision });
      });

      it('writes over the revision it read and refuses a stale one', async () => {
        const log = await openFresh();
        const first = (await log.writeLease('job', { holder: 'a', data: { n: 1 } }, 0))!;
        const second = await log.writeLease('job', { holder: 'a', data: { n: 2, list: [1, 2] } }, first);
        expect(second).not.toBeNull();
        expect(second).not.toBe(first);
        expect(await log.writeLease('job', { holder: 'b', data: {} }, first)).toBeNull();
        expect(await log.readLease('job')).toEqual({
          holder: 'a',
          data: { n: 2, list: [1, 2] },
          revision: second,
        });
      });

      it('lets exactly one of several concurrent writers of one revision win', async () => {
        const log = await openFresh();
        const revision = (await log.writeLease('contended', { holder: '', data: {} }, 0))!;
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, index) =>
            log.writeLease('contended', { holder: `replica-${index}`, data: { index } }, revision),
          ),
        );
        const winners = outcomes.filter((outcome) => outcome !== null);
        expect(winners).toHaveLength(1);
        const lease = await log.readLease('contended');
        expect(lease?.revision).toBe(winners[0]);
        expect(lease?.holder).toBe(`replica-${lease?.data.index}`);
      });

      it('keeps leases apart by name and across a reopen', async () => {
        const store = await newStore();
        const log = await open(store);
        const a = await log.writeLease('lease-a', { holder: 'x', data: { of: 'a' } }, 0);
        await log.writeLease('lease-b', { holder: 'y', data: { of: 'b' } }, 0);
        await log.close();
        const reopened = await open(store);
        expect(await reopened.readLease('lease-a')).toEqual({ holder: 'x', data: { of: 'a' }, revision: a });
        expect((await reopened.readLease('lease-b'))?.data).toEqual({ of: 'b' });
      });

      it('refuses invalid names and writes', async () => {
        const log = await openFresh();
        await expect(log.readLease('a.b')).rejects.toThrow(TypeError);
        await expect(log.writeLease('', { holder: 'a', data: {} }, 0)).rejects.toThrow(TypeError);
        await expect(log.writeLease('ok', { holder: 'a', data: [] as never }, 0)).rejects.toThrow(TypeError);
        await expect(log.writeLease('ok', { holder: 'a', data: {} }, -1)).rejects.toThrow(RangeError);
        expect(await log.readLease('ok')).toBeNull();
      });
    });
  });
}
