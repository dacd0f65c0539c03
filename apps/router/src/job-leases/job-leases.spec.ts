// Leases between "replicas" that share one real sqlite event log file, as router processes share a
// JetStream (the adapters pass the same lease contract in libs/event-log).
import { Logger } from '@nestjs/common';
import { SqliteEventLog } from '@tributary/event-log';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeldLease, JobLeases, LeaseLostError } from './job-leases';
import { abortableSleep, LeasedJob, LeasedJobs } from './leased-jobs';

// Long enough that a busy machine (the full suite on two cores) never stalls a renewal past it.
const TTL_MS = 1_000;
const settings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

async function eventually<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await abortableSleep(20);
  }
}

describe('job leases', () => {
  let directory: string;
  let file: string;
  const logs: SqliteEventLog[] = [];
  const held: HeldLease[] = [];

  async function openLog(): Promise<SqliteEventLog> {
    const log = await SqliteEventLog.open({ ...settings, file });
    logs.push(log);
    return log;
  }

  async function claim(leases: JobLeases, name: string): Promise<HeldLease | 'done' | null> {
    const outcome = await leases.tryClaim(name);
    if (outcome instanceof HeldLease) held.push(outcome);
    return outcome;
  }

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-job-leases-'));
    file = join(directory, 'event-log.sqlite');
  });

  afterEach(async () => {
    await Promise.allSettled(held.splice(0).map((lease) => lease.release()));
    await Promise.allSettled(logs.splice(0).map((log) => log.close()));
    rmSync(directory, { recursive: true, force: true });
  });

  it('gives a job to one replica; another takes it over with its progress once the holder falls silent', async () => {
    const logA = await openLog();
    const logB = await openLog();
    const a = new JobLeases(logA, TTL_MS);
    const b = new JobLeases(logB, TTL_MS);
    expect(a.holderId).not.toBe(b.holderId);

    const leaseA = await claim(a, 'replay_rp_1');
    expect(leaseA).toBeInstanceOf(HeldLease);
    await (leaseA as HeldLease).save({ counts: { delivered: 3 } });

    // While A renews on its own, B keeps being refused, however long it asks.
    const askedUntil = Date.now() + 3 * TTL_MS;
    while (Date.now() < askedUntil) {
      expect(await claim(b, 'replay_rp_1')).toBeNull();
      await abortableSleep(TTL_MS / 5);
    }
    expect((await logB.readLease('replay_rp_1'))?.holder).toBe(a.holderId);

    // A dies (its log goes away): a replica takes over after it saw a TTL of silence, from A's last
    // progress. A fresh one (C) has seen nothing before, so its silence starts with its first look.
    await logA.close();
    const c = new JobLeases(logB, TTL_MS);
    const startedWaiting = Date.now();
    const leaseB = await eventually('C takes the lease over', async () => {
      const outcome = await claim(c, 'replay_rp_1');
      return outcome instanceof HeldLease ? outcome : undefined;
    });
    expect(Date.now() - startedWaiting).toBeGreaterThanOrEqual(TTL_MS);
    expect(leaseB.inherited).toEqual({ counts: { delivered: 3 } });
    expect((await logB.readLease('replay_rp_1'))?.holder).toBe(c.holderId);
  });

  it('notices a lease taken over: the next save fails and `lost` aborts', async () => {
    const log = await openLog();
    const leases = new JobLeases(log, TTL_MS);
    const lease = (await claim(leases, 'redrive_src_webhooks')) as HeldLease;
    await lease.save({ redriveId: 'rd_1', delivered: [1] });
    const current = (await log.readLease('redrive_src_webhooks'))!;
    // Another replica's write over the same revision (it took the lease over).
    expect(
      await log.writeLease('redrive_src_webhooks', { holder: 'other', data: {} }, current.revision),
    ).not.toBeNull();
    await expect(lease.save({ redriveId: 'rd_1', delivered: [1, 2] })).rejects.toThrow(LeaseLostError);
    expect(lease.lost.aborted).toBe(true);
    expect((await log.readLease('redrive_src_webhooks'))?.holder).toBe('other');
  });

  it('hands a released lease over at once, and tells everyone a finished job is done', async () => {
    const log = await openLog();
    const a = new JobLeases(log, 60_000);
    const b = new JobLeases(log, 60_000);
    const leaseA = (await claim(a, 'replay_rp_2')) as HeldLease;
    await leaseA.save({ counts: { delivered: 1 } });
    expect(await claim(b, 'replay_rp_2')).toBeNull();
    await leaseA.release();
    const leaseB = (await claim(b, 'replay_rp_2')) as HeldLease;
    expect(leaseB).toBeInstanceOf(HeldLease);
    expect(leaseB.inherited).toEqual({ counts: { delivered: 1 } });
    await leaseB.finish();
    expect(await claim(a, 'replay_rp_2')).toBe('done');
    expect(await claim(new JobLeases(log), 'replay_rp_2')).toBe('done');
  });
});

describe('LeasedJobs', () => {
  let directory: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-leased-jobs-'));
  });

  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('runs a pending job in one replica; when it stops, another runs it on from the progress handed over', async () => {
    const file = join(directory, 'event-log.sqlite');
    const logA = await SqliteEventLog.open({ ...settings, file });
    const logB = await SqliteEventLog.open({ ...settings, file });
    const logger = new Logger('test');
    const replicaA = new LeasedJobs(new JobLeases(logA, TTL_MS), logger, 20);
    const replicaB = new LeasedJobs(new JobLeases(logB, TTL_MS), logger, 20);
    const runs: { replica: string; inherited: Record<string, unknown> }[] = [];
    let pending = true;
    const job = (replica: 'A' | 'B'): LeasedJob => ({
      leaseName: 'replay_rp_3',
      isPending: () => pending,
      run: async (lease, stopping) => {
        runs.push({ replica, inherited: lease.inherited });
        if (replica === 'A') {
          await lease.save({ step: 'A was here' });
          // Works until told to stop, then hands over as a stopping router does.
          await new Promise((resolve) => stopping.addEventListener('abort', resolve, { once: true }));
          await lease.release();
          return;
        }
        pending = false;
        await lease.finish();
      },
    });
    try {
      replicaA.ensure(job('A'));
      await eventually('A runs the job', () => (runs.length > 0 ? true : undefined));
      replicaB.ensure(job('B'));
      replicaB.ensure(job('B')); // a second call adds nothing
      await abortableSleep(4 * TTL_MS);
      expect(runs).toEqual([{ replica: 'A', inherited: {} }]);

      await replicaA.stop();
      await eventually('B runs the job', () => (runs.length > 1 ? true : undefined));
      expect(runs).toEqual([
        { replica: 'A', inherited: {} },
        { replica: 'B', inherited: { step: 'A was here' } },
      ]);
      // B's run is recorded as it starts, before its `finish()` is written: wait for the write.
      const observer = new JobLeases(logB);
      await eventually('the job is recorded as done', async () =>
        (await observer.tryClaim('replay_rp_3')) === 'done' ? true : undefined,
      );
    } finally {
      await replicaA.stop();
      await replicaB.stop();
      await logA.close();
      await logB.close();
    }
  });
});
