import { Logger } from '@nestjs/common';
import type { Leases, LeaseValue } from '@tributary/event-log';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { LeaseSighting, nextClaimStep } from './lease-claim';

/**
 * How long a job's lease outlives a silent holder: a replica that stops writing it (killed, cut off
 * from NATS) loses the job to another after this long. Its holder writes it every third of that.
 */
export const JOB_LEASE_TTL_MS = 10_000;

/** Another replica wrote the lease: this one must stop working on the job. */
export class LeaseLostError extends Error {
  constructor(readonly leaseName: string) {
    super(`lease ${leaseName} was taken over by another router replica`);
    this.name = 'LeaseLostError';
  }
}

/**
 * A lease this replica holds. Every write is a compare-and-set over the revision of its previous
 * write, so a write that fails means someone else wrote in between: the lease is lost and `lost`
 * aborts. Writes are queued, so progress saves and renewals never race each other.
 */
export class HeldLease {
  private readonly lostController = new AbortController();
  private readonly renewTimer: NodeJS.Timeout;
  private writes: Promise<unknown> = Promise.resolve();
  private lastWriteAt = performance.now();
  private ended = false;
  private data: Record<string, unknown>;

  constructor(
    private readonly leases: Leases,
    readonly name: string,
    private readonly holderId: string,
    private revision: number,
    /** What the previous holder saved: where to resume. `{}` for a new job. */
    readonly inherited: Record<string, unknown>,
    private readonly ttlMs: number,
    private readonly logger: Logger,
  ) {
    this.data = inherited;
    this.renewTimer = setInterval(() => this.renewIfQuiet(), Math.max(1, Math.floor(ttlMs / 6)));
    this.renewTimer.unref();
  }

  /** Aborted once another replica took the lease over. */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /** Saves the job's progress for whoever holds the lease next. Throws `LeaseLostError` if it is lost. */
  save(data: Record<string, unknown>): Promise<void> {
    return this.write({ holder: this.holderId, data });
  }

  /** The job is over: no replica runs it again. */
  finish(): Promise<void> {
    return this.end({ holder: '', data: { done: true } });
  }

  /** This replica stops working on the job: another may take it at once, from the last progress saved. */
  release(): Promise<void> {
    return this.end({ holder: '', data: this.data });
  }

  private async end(value: LeaseValue): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.renewTimer);
    if (this.lost.aborted) return;
    await this.write(value, true);
  }

  private renewIfQuiet(): void {
    if (this.ended || this.lost.aborted) return;
    if (performance.now() - this.lastWriteAt < this.ttlMs / 3) return;
    this.lastWriteAt = performance.now();
    this.save(this.data).catch((error: Error) => {
      if (!(error instanceof LeaseLostError)) {
        this.logger.warn(`could not renew lease ${this.name}: ${error.message}`);
      }
    });
  }

  private write(value: LeaseValue, ending = false): Promise<void> {
    const attempt = async () => {
      if (this.lost.aborted) throw new LeaseLostError(this.name);
      if (this.ended && !ending) throw new Error(`lease ${this.name} was already given up`);
      this.lastWriteAt = performance.now();
      const revision = await this.leases.writeLease(this.name, value, this.revision);
      if (revision === null) {
        clearInterval(this.renewTimer);
        this.lostController.abort(new LeaseLostError(this.name));
        throw new LeaseLostError(this.name);
      }
      this.revision = revision;
      this.data = value.data;
    };
    const written = this.writes.then(attempt, attempt);
    this.writes = written.catch(() => undefined);
    return written;
  }
}

/**
 * Claims of the router's jobs (replays, dead-letter redrives) through leases in the event log, so
 * that with several router replicas exactly one runs a given job at a time, and another takes over
 * when that one goes silent.
 */
export class JobLeases {
  /** This process, as lease holder: unique per start, so a restarted replica is a new holder. */
  readonly holderId = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly sightings = new Map<string, LeaseSighting>();
  private readonly logger = new Logger('JobLeases');

  constructor(
    private readonly leases: Leases,
    readonly ttlMs = JOB_LEASE_TTL_MS,
  ) {}

  /**
   * Takes the lease if it is free, released, ours from before, or its holder went silent; null while
   * another replica holds it (ask again later: silence is measured between calls), `'done'` when the
   * job is over.
   */
  async tryClaim(name: string): Promise<HeldLease | 'done' | null> {
    const lease = await this.leases.readLease(name);
    const step = nextClaimStep(lease, this.sightings.get(name), performance.now(), this.ttlMs, this.holderId);
    if (step.kind === 'done') {
      this.sightings.delete(name);
      return 'done';
    }
    if (step.kind === 'wait') {
      this.sightings.set(name, step.sighting);
      return null;
    }
    const inherited = lease?.data ?? {};
    const revision = await this.leases.writeLease(
      name,
      { holder: this.holderId, data: inherited },
      step.expectedRevision,
    );
    this.sightings.delete(name);
    if (revision === null) return null;
    return new HeldLease(this.leases, name, this.holderId, revision, inherited, this.ttlMs, this.logger);
  }

  /** Forgets what was seen of a lease whose job no longer concerns this replica. */
  forget(name: string): void {
    this.sightings.delete(name);
  }
}
