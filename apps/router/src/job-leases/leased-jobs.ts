import { Logger } from '@nestjs/common';
import { HeldLease, JobLeases } from './job-leases';

/** How often a replica that does not run a pending job asks whether its holder is still there. */
export const CLAIM_RETRY_MS = 2_000;

export interface LeasedJob {
  /** The lease that decides which replica runs the job. */
  leaseName: string;
  /** Whether the job still needs running, as far as this replica's read model knows. */
  isPending(): boolean;
  /**
   * Runs the job while holding `lease`: to its end (then `lease.finish()` or `lease.release()`), until
   * the lease is lost (`lease.lost`), or until `stopping` aborts (then `lease.release()`, handing the
   * job over with its progress).
   */
  run(lease: HeldLease, stopping: AbortSignal): Promise<void>;
}

/**
 * Every replica keeps a loop per pending job: claim the job's lease, run it when the claim succeeds,
 * otherwise ask again every `CLAIM_RETRY_MS`, until the job is done here or elsewhere. So a job runs
 * in one replica, and one that dies mid-way is taken over by another (or by itself after a restart).
 */
export class LeasedJobs {
  private readonly loops = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly leases: JobLeases,
    private readonly logger: Logger,
    private readonly retryMs = CLAIM_RETRY_MS,
  ) {}

  /** Makes sure this replica takes part in the job until it is done; a second call is a no-op. */
  ensure(job: LeasedJob): void {
    if (this.stopping.signal.aborted || this.loops.has(job.leaseName)) return;
    const loop = this.loop(job)
      .catch((error: Error) => this.logger.error(`job ${job.leaseName}: ${error.message}`))
      .finally(() => this.loops.delete(job.leaseName));
    this.loops.set(job.leaseName, loop);
  }

  /** Stops claiming and hands running jobs over; resolves once every loop has ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.loops.values()]);
  }

  private async loop(job: LeasedJob): Promise<void> {
    while (!this.stopping.signal.aborted && job.isPending()) {
      let claim: HeldLease | 'done' | null = null;
      try {
        claim = await this.leases.tryClaim(job.leaseName);
      } catch (error) {
        this.logger.warn(`could not claim ${job.leaseName}: ${(error as Error).message}`);
      }
      if (claim === 'done') break;
      if (claim !== null) {
        try {
          await job.run(claim, this.stopping.signal);
          continue;
        } catch (error) {
          this.logger.error(`${job.leaseName} stopped: ${(error as Error).message}`);
          // Handed over with the progress saved so far; this replica or another tries again later.
          await claim.release().catch(() => undefined);
        }
      }
      await abortableSleep(this.retryMs, this.stopping.signal);
    }
    this.leases.forget(job.leaseName);
  }
}

export function abortableSleep(ms: number, ...signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((signal) => signal.aborted)) return resolve();
    const done = () => {
      clearTimeout(timer);
      signals.forEach((signal) => signal.removeEventListener('abort', done));
      resolve();
    };
    const timer = setTimeout(done, ms);
    signals.forEach((signal) => signal.addEventListener('abort', done, { once: true }));
  });
}
