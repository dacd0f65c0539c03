import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { DomainError, destinationAggregate, ReplayCounts, ReplayRecord } from '@tributary/config-domain';
import { ConfigCommandHandler, RETRY_ON_CONFLICT } from '@tributary/config-commands';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { EventLogUnavailableError, TRACKING_LOG, type TrackingLog } from '@tributary/event-log';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { randomUUID } from 'node:crypto';
import { replayConsumerName, replayLeaseName } from '@tributary/routing';
import {
  DestinationDeliveries,
  requestLimiterOf,
} from '../destination-consumers/destination-deliveries.service';
import { DeliveryContext, MessageDeliverer } from '../destination-consumers/message-deliverer.service';
import { HeldLease, JobLeases } from '../job-leases/job-leases';
import { abortableSleep, LeasedJobs } from '../job-leases/leased-jobs';
import { ReplayCheckpoint, ReplayTally, TALLY_BATCH_SIZE } from './replay-tally';

/** How often a running replay checks whether it has sent everything. */
const COMPLETION_CHECK_MS = 250;

interface ReplayJob {
  sourceId: string;
  destinationSlug: string;
  replayId: string;
}

/**
 * Sends a destination the log's history since a replay's start time, through its own consumer:
 * the destination's live consumer is untouched. When nothing is left to send, the replay's counts are
 * recorded as an event, so its state survives restarts and shows in the audit trail.
 *
 * With several router replicas, exactly one runs a given replay: the one holding its lease (see
 * `LeasedJobs`). So its counts are the replay's counts; they are saved in the lease as messages are
 * settled (`ReplayTally`), and a replica that takes a dead one's replay over resumes from the replay
 * consumer's position with those counts.
 */
/**
 * A replay's messages come back to the replica that takes over its lease, which happens only after
 * the lease's time to live; a short ack wait would bring them back no sooner, and the tally's
 * exact counts are kept with the wait the replay was built and tested with.
 */
const REPLAY_ACK_WAIT_MS = 30_000;

/**
 * What a replay holds beyond what it sends at once: a message sent waits for its outcome's checkpoint
 * (one lease write per `TALLY_BATCH_SIZE` settlements, or after 50 ms) and then for its ack's
 * confirmation. Held within the destination's budget, those waits took places from the requests: the
 * destination got fewer at once than its live consumer gives it. Two batches: one gathering while the
 * last is saved and its acks confirmed.
 */
export const REPLAY_SETTLING_ROOM = 2 * TALLY_BATCH_SIZE;

@Injectable()
export class ReplayRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Replays');
  private readonly jobs: LeasedJobs;
  private stopListening?: () => void;

  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly deliverer: MessageDeliverer,
    private readonly deliveries: DestinationDeliveries,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    leases: JobLeases,
  ) {
    this.jobs = new LeasedJobs(leases, this.logger);
  }

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change) => {
      if (change.kind === 'destination-upserted') this.takePartInRunningReplays(change.view);
    });
    for (const view of this.readModel.listAllDestinations()) this.takePartInRunningReplays(view);
  }

  /** Before the event log closes (on application shutdown): running replays hand over their progress. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopListening?.();
    await this.jobs.stop();
  }

  private takePartInRunningReplays(view: DestinationView): void {
    const { sourceId, destinationSlug } = view.destination;
    for (const replay of view.replays) {
      if (replay.state !== 'RUNNING') continue;
      const job: ReplayJob = { sourceId, destinationSlug, replayId: replay.replayId };
      this.jobs.ensure({
        leaseName: replayLeaseName(replay.replayId),
        isPending: () => this.runningReplay(job) !== undefined,
        run: (lease, stopping) => this.run(job, lease, stopping),
      });
    }
  }

  private runningReplay(job: ReplayJob): { view: DestinationView; replay: ReplayRecord } | undefined {
    const view = this.readModel.destination(job.sourceId, job.destinationSlug);
    const replay = view?.replays.find((candidate) => candidate.replayId === job.replayId);
    return view && replay?.state === 'RUNNING' ? { view, replay } : undefined;
  }

  private async run(job: ReplayJob, lease: HeldLease, stopping: AbortSignal): Promise<void> {
    const { sourceId, destinationSlug, replayId } = job;
    const consumerName = replayConsumerName(replayId);
    // The previous holder may have finished it a moment ago: look at the stream as stored now.
    await this.commands.catchUp(destinationAggregate, { sourceId, destinationSlug });
    const running = this.runningReplay(job);
    if (!running) {
      await this.trackingLog.deleteConsumer(consumerName).catch(() => false);
      await lease.finish();
      return;
    }
    const { view, replay } = running;
    const tally = new ReplayTally(lease, lease.inherited as Partial<ReplayCheckpoint>);
    if (replay.cancelRequestTime) {
      // Cancelled while no replica ran it: what earlier holders sent is all it sent.
      await this.endCancelled(job, consumerName, tally, lease);
      return;
    }
    const endTime = replay.endTime === null ? null : Date.parse(replay.endTime);
    // The requests of the destination's own consumer (an adapter that writes gathered calls needs
    // several full calls in flight, or each call waits for the acks and checkpoint of the last), and
    // room beside them for the messages waiting for their checkpoint.
    const own = this.deliveries.budgetOf(view.destination, this.environment.ROUTER_MAX_IN_FLIGHT);
    const budget = { held: own.held + REPLAY_SETTLING_ROOM, requests: own.requests };
    const requests = requestLimiterOf(budget);
    // One for the whole replay: the tally acks each message once its outcome is saved.
    const context: DeliveryContext = {
      consumerName,
      sourceId,
      destinationSlug,
      requests,
      replay: {
        replayId,
        endTime,
        acknowledgeReplayed: (delivery, outcome) =>
          tally.settle(delivery.sequence, outcome, () => delivery.ack()),
      },
    };
    let subscription;
    try {
      subscription = await this.trackingLog.consume(
        consumerName,
        {
          sourceId,
          deliverFrom: new Date(replay.startTime),
          ackWaitMs: REPLAY_ACK_WAIT_MS,
          maxInFlight: budget.held,
        },
        (delivery) =>
          tally.countedBefore(delivery.sequence)
            ? tally.ackCountedBefore(delivery.sequence, () => delivery.ack())
            : this.deliverer.handle(delivery, context),
      );
    } catch (error) {
      if (error instanceof EventLogUnavailableError) throw error;
      await this.recordEnd(job, 'FAILED', tally.savedCounts, (error as Error).message);
      await lease.finish();
      return;
    }

    const ending = await this.untilDrained(job, consumerName, lease, stopping);
    // Cancelled, or taken over by another replica: nothing more is sent, and the messages waiting for a
    // request's place are left unsettled (the consumer of a cancelled replay goes; the new holder gets
    // them after the ack wait). A replica stopping gracefully sends them first, so its successor
    // continues at once.
    if (ending === 'cancelled' || ending === 'lost') requests?.close(new Error(`replay ${ending}`));
    await subscription.stop();
    if (ending === 'lost') return;
    if (ending === 'cancelled') {
      await this.endCancelled(job, consumerName, tally, lease);
      return;
    }
    if (ending === 'stopping') {
      await lease.release();
      return;
    }
    await this.recordEnd(job, 'COMPLETED', tally.savedCounts, null);
    await this.trackingLog.deleteConsumer(consumerName).catch(() => false);
    await lease.finish();
  }

  /**
   * Stopped at an operator's request: the counts are those of the messages settled so far (a message
   * in delivery when the subscription stopped may still reach the destination, uncounted).
   */
  private async endCancelled(
    job: ReplayJob,
    consumerName: string,
    tally: ReplayTally,
    lease: HeldLease,
  ): Promise<void> {
    await this.recordEnd(job, 'CANCELLED', tally.savedCounts, null);
    await this.trackingLog.deleteConsumer(consumerName).catch(() => false);
    await lease.finish();
  }

  /** Drained: every message of the replay was delivered and acked, so every count is saved. */
  private async untilDrained(
    job: ReplayJob,
    consumerName: string,
    lease: HeldLease,
    stopping: AbortSignal,
  ): Promise<'drained' | 'lost' | 'stopping' | 'cancelled'> {
    for (;;) {
      if (lease.lost.aborted) return 'lost';
      if (stopping.aborted) return 'stopping';
      if (this.runningReplay(job)?.replay.cancelRequestTime) return 'cancelled';
      const lag = await this.trackingLog.consumerLag(consumerName).catch(() => undefined);
      if (lag && lag.undelivered === 0 && lag.unacknowledged === 0) return 'drained';
      await abortableSleep(COMPLETION_CHECK_MS, lease.lost, stopping);
    }
  }

  private async recordEnd(
    job: ReplayJob,
    state: 'COMPLETED' | 'FAILED' | 'CANCELLED',
    counts: ReplayCounts,
    failureReason: string | null,
  ): Promise<void> {
    try {
      await this.commands.handle(
        destinationAggregate,
        { sourceId: job.sourceId, destinationSlug: job.destinationSlug },
        {
          type: 'FinishReplay',
          replayId: job.replayId,
          state,
          counts,
          failureReason,
          now: new Date().toISOString(),
        },
        { actor: 'system:router', requestId: `replay-${randomUUID()}`, time: new Date().toISOString() },
        // A concurrent write to the destination (an operator's change) leaves the end to record.
        { retry: RETRY_ON_CONFLICT },
      );
    } catch (error) {
      // The destination is gone: there is nothing left to record the replay on.
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(`replay ${job.replayId} ended without a record: ${error.message}`);
    }
  }
}
