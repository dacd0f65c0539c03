import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import {
  destinationSecretsOwner,
  type DestinationRecord,
  DomainError,
  FinalDestinationStatus,
  FinalRegulationStatus,
  isFinalRegulationStatus,
  overallRegulationStatus,
  REGULATION_TYPE_RULES,
  regulationAggregate,
  RegulationCommand,
  RegulationRecord,
  RegulationStreamStatus,
} from '@tributary/config-domain';
import { SecretBox } from '@tributary/auth';
import type { UserDeletionRequest } from '@tributary/destinations';
import { ConfigCommandHandler, RETRY_ON_CONFLICT } from '@tributary/config-commands';
import { ConfigReadModel, RegulationView } from '@tributary/config-projections';
import { EventLogUnavailableError, MESSAGE_ERASURE, type MessageErasure } from '@tributary/event-log';
import { createHash, randomUUID } from 'node:crypto';
import { DeliveryTargets } from '../destination-consumers/delivery-targets.service';
import { DestinationDeliveries } from '../destination-consumers/destination-deliveries.service';
import { HeldLease, JobLeases } from '../job-leases/job-leases';
import { abortableSleep, LeasedJobs } from '../job-leases/leased-jobs';
import { RecentMessageOutcomes } from '../message-deliveries/recent-message-outcomes';

/** A destination's deletion is tried this often, the waits between tries below: all within 30 s. */
const FORWARD_ATTEMPTS = 3;
const FORWARD_RETRY_DELAYS_MS = [5_000, 10_000];

/** The id of one user's delete request to one destination: the same on every try of the regulation. */
export function deletionMessageId(
  regulationId: string,
  sourceId: string,
  destinationSlug: string,
  userId: string,
): string {
  const digest = createHash('sha256').update(`${regulationId}\n${sourceId}\n${destinationSlug}\n${userId}`);
  return `delete-${digest.digest('hex').slice(0, 32)}`;
}

export const regulationLeaseName = (regulationId: string) => `regulation_${regulationId}`;

interface RegulationJob {
  workspaceSlug: string;
  regulationId: string;
}

/** What a run saved in its lease: the next holder does not erase again what is already erased. */
interface RegulationCheckpoint {
  storesErased?: boolean;
}

/**
 * Runs the deleting regulations (docs/regulations.md §4): records the destinations in scope as the
 * regulation starts, erases the subjects' messages from the message log (with their dead letters,
 * attempt histories and Protocols outcomes) and from the recent delivery outcomes, then records the
 * final status. Each regulation is a job with a lease, so with several router replicas one runs it,
 * and a replica killed midway leaves it to another (or to itself after a restart), which resumes
 * from the regulation's recorded progress and the lease's checkpoint. Every step is idempotent: a
 * start, a settlement or a finish recorded twice is decided as a no-op, an erasure run twice finds
 * nothing more.
 * For the types that forward, each destination that can delete is then sent the deletion (webhooks'
 * signed delete request, the PostgreSQL destination's rows, an Actions destination's `onDelete`),
 * with its own retries, and its status recorded.
 */
@Injectable()
export class RegulationRunner implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Regulations');
  private readonly jobs: LeasedJobs;
  private stopListening?: () => void;

  constructor(
    @Inject(MESSAGE_ERASURE) private readonly erasure: MessageErasure,
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly recentOutcomes: RecentMessageOutcomes,
    private readonly deliveries: DestinationDeliveries,
    private readonly targets: DeliveryTargets,
    private readonly secretBox: SecretBox,
    leases: JobLeases,
  ) {
    this.jobs = new LeasedJobs(leases, this.logger);
  }

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change) => {
      if (change.kind === 'regulation-upserted') this.takePart(change.view);
    });
    for (const view of this.readModel.listAllRegulations()) this.takePart(view);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopListening?.();
    await this.jobs.stop();
  }

  private takePart(view: RegulationView): void {
    const { regulation, progress } = view;
    if (!REGULATION_TYPE_RULES[regulation.regulationType].deletes) return;
    if (isFinalRegulationStatus(progress.status)) return;
    const job: RegulationJob = {
      workspaceSlug: regulation.workspaceSlug,
      regulationId: regulation.regulationId,
    };
    this.jobs.ensure({
      leaseName: regulationLeaseName(regulation.regulationId),
      isPending: () => this.pending(job) !== undefined,
      run: (lease, stopping) => this.run(job, lease, stopping),
    });
  }

  private pending(job: RegulationJob): RegulationView | undefined {
    const view = this.readModel.regulation(job.workspaceSlug, job.regulationId);
    return view && !isFinalRegulationStatus(view.progress.status) ? view : undefined;
  }

  private async run(job: RegulationJob, lease: HeldLease, stopping: AbortSignal): Promise<void> {
    // The previous holder may have moved it on a moment ago: act on the stream as stored now.
    await this.commands.catchUp(regulationAggregate, job);
    const view = this.pending(job);
    if (!view) {
      await lease.finish();
      return;
    }
    const { regulation } = view;
    const workspace = this.readModel.workspace(regulation.workspaceSlug);
    const source =
      regulation.source && this.readModel.source(regulation.workspaceSlug, regulation.source.sourceSlug);
    if (!workspace || (regulation.source && source?.source.sourceId !== regulation.source.sourceId)) {
      // The scope disappeared before the work: nothing of it is left to erase here.
      await this.record(job, { type: 'FinishRegulation', status: 'INVALID', now: new Date().toISOString() });
      await lease.finish();
      return;
    }
    if (view.progress.status === 'INITIALIZED') {
      await this.record(job, {
        type: 'StartRegulation',
        streams: this.streamsInScope(view),
        now: new Date().toISOString(),
      });
      // Cancelled just before it could start: there is nothing to do.
      if (this.readModel.regulation(job.workspaceSlug, job.regulationId)?.progress.status !== 'RUNNING') {
        await lease.finish();
        return;
      }
    }

    const checkpoint = lease.inherited as RegulationCheckpoint;
    let storesSucceeded = true;
    if (!checkpoint.storesErased) {
      try {
        const erased = await this.erasure.eraseMessages({
          workspaceId: workspace.id,
          ...(regulation.source ? { sourceIds: [regulation.source.sourceId] } : {}),
          field: regulation.subjectType === 'ANONYMOUS_ID' ? 'anonymousId' : 'userId',
          subjectIds: regulation.subjectIds,
        });
        this.recentOutcomes.forget(
          regulation.source ? new Set([regulation.source.sourceId]) : undefined,
          new Set(erased.messageIds),
        );
        // Counts only: the log says how much was removed, never what.
        this.logger.log(
          `regulation ${regulation.regulationId}: erased ${erased.messages} messages, ${erased.deadLetters} dead letters, ` +
            `${erased.protocolsOutcomes} Protocols outcomes`,
        );
        await lease.save({ storesErased: true } satisfies RegulationCheckpoint);
      } catch (error) {
        // Unreachable log: hand the job over and try again later. Anything else will fail again.
        if (error instanceof EventLogUnavailableError) throw error;
        this.logger.error(
          `regulation ${regulation.regulationId}: erasure failed: ${(error as Error).message}`,
        );
        storesSucceeded = false;
      }
    }

    // Forwarded after the log's erasure, so a message a router had already taken from the log reaches
    // a destination before its deletion, never after it.
    const running = this.readModel.regulation(job.workspaceSlug, job.regulationId);
    for (const stream of running?.progress.streams ?? []) {
      for (const destination of stream.destinations) {
        if (destination.status !== 'RUNNING') continue;
        const settled = storesSucceeded
          ? await this.forward(regulation, stream, destination.destinationSlug, lease, stopping)
          : { status: 'FAILED' as const, errString: "not attempted: erasing Tributary's own stores failed" };
        if (!settled) return; // lost the lease or stopping: the next holder goes on from here
        await this.record(job, {
          type: 'SettleRegulationDestination',
          sourceId: stream.sourceId,
          destinationSlug: destination.destinationSlug,
          ...settled,
          now: new Date().toISOString(),
        });
      }
    }

    const after = this.readModel.regulation(job.workspaceSlug, job.regulationId);
    const status: FinalRegulationStatus = overallRegulationStatus(
      storesSucceeded,
      after?.progress.streams ?? [],
    );
    await this.record(job, { type: 'FinishRegulation', status, now: new Date().toISOString() });
    await lease.finish();
  }

  /**
   * One destination's deletion, tried up to `FORWARD_ATTEMPTS` times within 30 s. Undefined when the
   * lease was lost or the router is stopping: nothing is recorded, the next holder tries again.
   */
  private async forward(
    regulation: RegulationRecord,
    stream: RegulationStreamStatus,
    destinationSlug: string,
    lease: HeldLease,
    stopping: AbortSignal,
  ): Promise<{ status: FinalDestinationStatus; errString: string } | undefined> {
    const view = this.readModel.destination(stream.sourceId, destinationSlug);
    if (!view) return { status: 'NOT_SUPPORTED', errString: 'the destination was deleted' };
    const { destination } = view;
    const target = this.targets.targetOf(destination);
    if (!target) return { status: 'NOT_SUPPORTED', errString: 'nothing in this build delivers to it' };
    const request: UserDeletionRequest = {
      settings: this.secretBox.revealAll(destination.config, destinationSecretsOwner(destination)),
      sourceId: stream.sourceId,
      sourceSlug: stream.sourceSlug,
      users: regulation.subjectIds.map((userId) => ({
        userId,
        messageId: deletionMessageId(regulation.regulationId, stream.sourceId, destinationSlug, userId),
      })),
      timestamp: regulation.createTime,
    };
    let reason = '';
    for (let attempt = 0; attempt < FORWARD_ATTEMPTS; attempt += 1) {
      if (attempt > 0) await abortableSleep(FORWARD_RETRY_DELAYS_MS[attempt - 1]!, lease.lost, stopping);
      if (lease.lost.aborted || stopping.aborted) return undefined;
      const outcome = await this.deliveries.deleteUsers(target, request);
      switch (outcome.outcome) {
        case 'deleted':
          return { status: 'FINISHED', errString: '' };
        case 'not_supported':
          return { status: 'NOT_SUPPORTED', errString: outcome.reason };
        case 'failed':
          return { status: 'FAILED', errString: outcome.reason };
        case 'retry':
          reason = outcome.reason;
      }
    }
    return { status: 'FAILED', errString: `${reason} (after ${FORWARD_ATTEMPTS} attempts)` };
  }

  /**
   * Every destination of every source in scope: those that will be sent the deletion as running,
   * the others (a type that does not forward, a disabled destination, a kind that cannot delete)
   * as not supported.
   */
  private streamsInScope({ regulation }: RegulationView): RegulationStreamStatus[] {
    const sources = regulation.source
      ? [{ sourceId: regulation.source.sourceId, sourceSlug: regulation.source.sourceSlug }]
      : this.readModel.listSources(regulation.workspaceSlug).map(({ source }) => source);
    const now = new Date().toISOString();
    const forwards = REGULATION_TYPE_RULES[regulation.regulationType].forwards;
    return sources.map(({ sourceId, sourceSlug }) => ({
      sourceId,
      sourceSlug,
      destinations: this.readModel.listDestinations(sourceId).map(({ destination }) => {
        const notSupported = !forwards
          ? 'the regulation type sends nothing to destinations'
          : !destination.enabled
            ? 'the destination is disabled'
            : !this.canDeleteUsers(destination)
              ? 'the destination has no deletion'
              : undefined;
        return {
          destinationSlug: destination.destinationSlug,
          displayName: destination.displayName,
          ...(notSupported === undefined
            ? { status: 'RUNNING' as const, errString: '', finishTime: null }
            : { status: 'NOT_SUPPORTED' as const, errString: notSupported, finishTime: now }),
        };
      }),
    }));
  }

  private canDeleteUsers(destination: DestinationRecord): boolean {
    const target = this.targets.targetOf(destination);
    return target !== undefined && this.deliveries.canDeleteUsers(target);
  }

  private async record(job: RegulationJob, command: RegulationCommand): Promise<void> {
    try {
      await this.commands.handle(
        regulationAggregate,
        job,
        command,
        { actor: 'system:router', requestId: `regulation-${randomUUID()}`, time: new Date().toISOString() },
        { retry: RETRY_ON_CONFLICT },
      );
    } catch (error) {
      // Cancelled or gone: nothing left to record it on.
      if (!(error instanceof DomainError)) throw error;
      this.logger.warn(`regulation ${job.regulationId}: ${error.message}`);
    }
  }
}
