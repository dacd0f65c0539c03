import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { destinationAggregate, DomainError } from '@tributary/config-domain';
import { ConfigCommandHandler, RETRY_ON_CONFLICT } from '@tributary/config-commands';
import { ConfigChange, ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { NormalizedMessage } from '@tributary/contracts';
import { DEAD_LETTERS, type DeadLetter, type DeadLetters } from '@tributary/event-log';
import { decideRedriveSettlement, MAX_UNSETTLED_DELIVERIES, poisonReason } from '@tributary/routing';
import { randomUUID } from 'node:crypto';
import { destinationConsumerName, destinationKey } from '../destination-consumers/consumer-names';
import { DeliveryTargets } from '../destination-consumers/delivery-targets.service';
import { MessageDeliverer, RecordedDestination } from '../destination-consumers/message-deliverer.service';
import { HeldLease, JobLeases, LeaseLostError } from '../job-leases/job-leases';
import { LeasedJobs } from '../job-leases/leased-jobs';

const PAGE_SIZE = 500;

/** One lease per destination: its redrives run one after the other, each seeing what the last delivered. */
export const redriveLeaseName = (sourceId: string, destinationSlug: string) =>
  `redrive_${sourceId}_${destinationSlug}`;

/** A redrive's progress as its lease carries it from one holder to the next. */
interface RedriveProgress {
  redriveId: string;
  delivered: number[];
  failed: { deadLetterSequence: number; reason: string }[];
  /**
   * The letter being sent, saved before it is sent, with the sends of it that started and never
   * settled (this one included): a holder that dies or stalls in the send leaves it for the next.
   */
  sending?: { deadLetterSequence: number; startedSends: number };
}

/**
 * Redrives a destination's dead letters on request: each is sent once more as it was stored; those
 * delivered leave the list (recorded as an event), the others stay with the reason of this attempt.
 * They are sent and their outcomes recorded as the destination's consumer does (`MessageDeliverer`'s
 * `send` and `record`), so a redriven message shows in the delivery metrics and the debugger.
 *
 * With several router replicas, exactly one runs a destination's redrives: the one holding its lease
 * (see `LeasedJobs`). It saves its progress in the lease after every letter, so a replica taking over
 * from a dead one sends only what was not sent yet (at most the letter in flight goes twice), and a
 * redrive requested while every router was down runs when one starts.
 *
 * A letter still poison (its send kills or stalls the router) would otherwise kill every holder in
 * turn: the letter about to be sent is saved with the count of its sends that never settled, and
 * after `MAX_UNSETTLED_DELIVERIES` of them it stays a dead letter with the poison reason, unsent.
 */
@Injectable()
export class DeadLetterRedriver implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DeadLetters');
  private readonly jobs: LeasedJobs;
  private stopListening?: () => void;

  constructor(
    @Inject(DEAD_LETTERS) private readonly deadLetters: DeadLetters,
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly deliverer: MessageDeliverer,
    private readonly targets: DeliveryTargets,
    leases: JobLeases,
  ) {
    this.jobs = new LeasedJobs(leases, this.logger);
  }

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change: ConfigChange) => {
      if (change.kind === 'dead-letter-redrive-requested') this.takePart(change.view);
    });
    for (const view of this.readModel.listAllDestinations()) {
      if (view.pendingRedriveIds.length > 0) this.takePart(view);
    }
  }

  /** Before the event log closes (on application shutdown): a running redrive hands over its progress. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopListening?.();
    await this.jobs.stop();
  }

  private takePart(view: DestinationView): void {
    const { sourceId, destinationSlug } = view.destination;
    this.jobs.ensure({
      leaseName: redriveLeaseName(sourceId, destinationSlug),
      isPending: () =>
        (this.readModel.destination(sourceId, destinationSlug)?.pendingRedriveIds.length ?? 0) > 0,
      run: (lease, stopping) => this.run(sourceId, destinationSlug, lease, stopping),
    });
  }

  /** Runs the destination's pending redrives, oldest first, then frees the lease. */
  private async run(
    sourceId: string,
    destinationSlug: string,
    lease: HeldLease,
    stopping: AbortSignal,
  ): Promise<void> {
    let inherited = lease.inherited as Partial<RedriveProgress>;
    for (;;) {
      // The previous holder may have recorded a redrive a moment ago: look at the stream as stored now.
      await this.commands.catchUp(destinationAggregate, { sourceId, destinationSlug });
      const view = this.readModel.destination(sourceId, destinationSlug);
      const redriveId = view?.pendingRedriveIds[0];
      if (!view || !redriveId) {
        await lease.release();
        return;
      }
      const progress: RedriveProgress =
        inherited.redriveId === redriveId
          ? {
              redriveId,
              delivered: [...(inherited.delivered ?? [])],
              failed: [...(inherited.failed ?? [])],
              sending: inherited.sending,
            }
          : { redriveId, delivered: [], failed: [] };
      inherited = {};
      try {
        const finished = await this.redrive(view, progress, lease, stopping);
        if (!finished) {
          if (stopping.aborted) await lease.release();
          return;
        }
      } catch (error) {
        if (error instanceof LeaseLostError) return;
        throw error;
      }
      await this.record({ sourceId, destinationSlug }, progress);
      await lease.save({});
    }
  }

  /** Sends every pending letter, saving progress after each; false when stopped or the lease was lost. */
  private async redrive(
    view: DestinationView,
    progress: RedriveProgress,
    lease: HeldLease,
    stopping: AbortSignal,
  ): Promise<boolean> {
    const { sourceId, destinationSlug } = view.destination;
    const handled = new Set([
      ...progress.delivered,
      ...progress.failed.map((failure) => failure.deadLetterSequence),
    ]);
    const pending = (await this.listAll(destinationConsumerName(sourceId, destinationSlug))).filter(
      (letter) =>
        !view.redrivenDeadLetters.has(letter.deadLetterSequence) && !handled.has(letter.deadLetterSequence),
    );
    // Its adapter or function and its insert function, as the destination's consumer delivers.
    const target = this.targets.targetOf(view.destination);
    const destination: RecordedDestination = {
      sourceId,
      destinationSlug,
      metricsKey: destinationKey(sourceId, destinationSlug),
    };
    for (const letter of pending) {
      if (stopping.aborted || lease.lost.aborted) return false;
      const { deadLetterSequence } = letter;
      const { messageId } = letter.message;
      const unsettledSends =
        progress.sending?.deadLetterSequence === deadLetterSequence ? progress.sending.startedSends : 0;
      if (unsettledSends >= MAX_UNSETTLED_DELIVERIES) {
        const reason = poisonReason(unsettledSends);
        const settlement = decideRedriveSettlement({ poison: { reason } });
        progress.failed.push({ deadLetterSequence, reason });
        progress.sending = undefined;
        await lease.save({ ...progress });
        this.deliverer.record(destination, settlement.outcome, { messageId, ...settlement });
        continue;
      }
      progress.sending = { deadLetterSequence, startedSends: unsettledSends + 1 };
      await lease.save({ ...progress });
      const attempt = target
        ? await this.deliverer.send(target, letter.message.payload as unknown as NormalizedMessage)
        : ({ outcome: 'discard', reason: 'the destination can no longer be delivered to' } as const);
      const settlement = decideRedriveSettlement({ attempt });
      if (settlement.outcome === 'delivered') progress.delivered.push(deadLetterSequence);
      else progress.failed.push({ deadLetterSequence, reason: settlement.reason });
      progress.sending = undefined;
      await lease.save({ ...progress });
      // No latency: the message was received long before, its first deliveries having failed.
      this.deliverer.record(destination, settlement.outcome, { messageId, ...settlement });
    }
    return true;
  }

  private async record(
    destination: { sourceId: string; destinationSlug: string },
    progress: RedriveProgress,
  ): Promise<void> {
    const { redriveId, delivered, failed } = progress;
    try {
      await this.commands.handle(
        destinationAggregate,
        destination,
        { type: 'RecordDeadLetterRedrive', redriveId, delivered, failed, now: new Date().toISOString() },
        { actor: 'system:router', requestId: `redrive-${randomUUID()}`, time: new Date().toISOString() },
        // A concurrent write to the destination (an operator's change) leaves the redrive to record.
        { retry: RETRY_ON_CONFLICT },
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(`redrive ${redriveId} ended without a record: ${error.message}`);
    }
  }

  private async listAll(consumerName: string): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    for (let afterSequence = 0; ;) {
      const page = await this.deadLetters.listDeadLetters({ consumerName, afterSequence, limit: PAGE_SIZE });
      letters.push(...page);
      if (page.length < PAGE_SIZE) return letters;
      afterSequence = page[page.length - 1].deadLetterSequence;
    }
  }
}
