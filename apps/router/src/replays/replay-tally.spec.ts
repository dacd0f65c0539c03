// The tally writes a real lease (sqlite event log); acks are the message's, here plain functions.
import { SqliteEventLog } from '@tributary/event-log';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeldLease, JobLeases, LeaseLostError } from '../job-leases/job-leases';
import { ReplayCheckpoint, ReplayTally } from './replay-tally';

describe('ReplayTally', () => {
  let directory: string;
  let log: SqliteEventLog;
  let lease: HeldLease;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-replay-tally-'));
    log = await SqliteEventLog.open({
      dedupeWindowMs: 60_000,
      retentionMs: 3_600_000,
      file: join(directory, 'event-log.sqlite'),
    });
    lease = (await new JobLeases(log).tryClaim('replay_rp_1')) as HeldLease;
  });

  afterEach(async () => {
    await lease.release().catch(() => undefined);
    await log.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const checkpoint = async () => (await log.readLease('replay_rp_1'))!.data as unknown as ReplayCheckpoint;

  it('saves each count in the lease before the ack, and hands on what was counted but not acked', async () => {
    const tally = new ReplayTally(lease, {});
    const savedAtAck: ReplayCheckpoint[] = [];
    const acked: number[] = [];
    const ack = (sequence: number) => async () => {
      savedAtAck.push(await checkpoint());
      acked.push(sequence);
    };
    await Promise.all([
      tally.settle(1, 'delivered', ack(1)),
      tally.settle(2, 'filtered', ack(2)),
      // Acked without an outcome: a message past the replay's end.
      tally.settle(3, undefined, ack(3)),
    ]);
    expect(acked.sort()).toEqual([1, 2, 3]);
    for (const saved of savedAtAck) {
      expect(saved.counts).toMatchObject({ delivered: 1, filtered: 1, discarded: 0 });
      expect(saved.settled.sort()).toEqual([1, 2, 3]);
    }
    expect(tally.savedCounts).toEqual({
      delivered: 1,
      discarded: 0,
      filtered: 1,
      skipped: 0,
      dead_lettered: 0,
    });

    // An ack that fails (NATS went away): the count stays, and the sequence stays listed as settled.
    const ackFailure = new Error('ack timed out');
    await expect(
      tally.settle(4, 'delivered', async () => {
        throw ackFailure;
      }),
    ).rejects.toBe(ackFailure);
    await tally.settle(5, 'discarded', ack(5));
    const handedOn = await checkpoint();
    expect(handedOn.counts).toMatchObject({ delivered: 2, discarded: 1, filtered: 1 });
    // 5 was acked only after its checkpoint was saved: still listed, which costs nothing (an acked
    // message is never delivered again), while leaving out one not yet acked could count it twice.
    expect(handedOn.settled.sort()).toEqual([4, 5]);

    // The next holder acks message 4, when delivered again, without counting it twice.
    await lease.release();
    const next = (await new JobLeases(log).tryClaim('replay_rp_1')) as HeldLease;
    lease = next;
    const successor = new ReplayTally(next, next.inherited as Partial<ReplayCheckpoint>);
    expect(successor.countedBefore(4)).toBe(true);
    expect(successor.countedBefore(6)).toBe(false);
    await successor.ackCountedBefore(4, ack(4));
    expect(successor.countedBefore(4)).toBe(false);
    await successor.settle(6, 'delivered', ack(6));
    expect(successor.savedCounts).toMatchObject({ delivered: 3, discarded: 1, filtered: 1 });
    expect((await checkpoint()).settled.sort()).toEqual([5, 6]);
  });

  it('neither counts nor acks once the lease was taken over', async () => {
    const tally = new ReplayTally(lease, {});
    const current = (await log.readLease('replay_rp_1'))!;
    await log.writeLease('replay_rp_1', { holder: 'another-replica', data: {} }, current.revision);
    let acked = false;
    await expect(
      tally.settle(1, 'delivered', async () => {
        acked = true;
      }),
    ).rejects.toThrow(LeaseLostError);
    expect(acked).toBe(false);
    expect(tally.savedCounts.delivered).toBe(0);
    expect(lease.lost.aborted).toBe(true);
  });
});
