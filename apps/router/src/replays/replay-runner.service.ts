import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { destinationDecider, ReplayCounts, ReplayRecord, streamNames } from '@tributary/config-domain';
import { CommandRunner, ConfigChange, ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { ConsumerSubscription, EVENT_LOG, EventLog } from '@tributary/event-log';
import { randomUUID } from 'node:crypto';
import { DeliveryOutcomeKind } from '../delivery-metrics/delivery-metrics';
import { replayConsumerName } from '../destination-consumers/consumer-names';
import { DELIVERY_ACK_WAIT_MS } from '../destination-consumers/destination-consumers.service';
import { MessageDeliverer } from '../destination-consumers/message-deliverer.service';

/** How often a running replay checks whether it has sent everything. */
const COMPLETION_CHECK_MS = 250;

interface RunningReplay {
  subscription?: ConsumerSubscription;
  counts: ReplayCounts;
  timer?: NodeJS.Timeout;
}

/**
 * Sends a destination the log's history since a replay's start time, through its own consumer:
 * the destination's live consumer is untouched. When nothing is left to send, the replay's
 * counts are recorded as an event, so its state survives restarts and shows in the audit trail.
 */
@Injectable()
export class ReplayRunner implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Replays');
  private readonly running = new Map<string, RunningReplay>();
  private stopListening?: () => void;
  private stopped = false;

  constructor(
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    private readonly readModel: ConfigReadModel,
    private readonly commands: CommandRunner,
    private readonly deliverer: MessageDeliverer,
  ) {}

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change) => this.onConfigChange(change));
    for (const view of this.readModel.listAllDestinations()) this.startPendingReplays(view);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.stopListening?.();
    for (const replay of this.running.values()) {
      clearInterval(replay.timer);
      await replay.subscription?.stop();
    }
  }

  private onConfigChange(change: ConfigChange): void {
    if (change.kind !== 'destination-upserted') return;
    this.stopReplaysFinishedElsewhere(change.view);
    this.startPendingReplays(change.view);
  }

  /**
   * With several router replicas, each runs every replay through the same durable replay consumer,
   * so they share its messages; the first to see it drained records the end (the decider ignores a
   * second `FinishReplay`) and deletes the consumer. The others learn of it here and stop polling.
   */
  private stopReplaysFinishedElsewhere(view: DestinationView): void {
    for (const replay of view.replays) {
      const running = this.running.get(replay.replayId);
      if (replay.state === 'RUNNING' || !running) continue;
      this.running.delete(replay.replayId);
      clearInterval(running.timer);
      void running.subscription?.stop();
    }
  }

  private startPendingReplays(view: DestinationView): void {
    for (const replay of view.replays) {
      if (replay.state === 'RUNNING' && !this.running.has(replay.replayId) && !this.stopped) {
        void this.start(view, replay);
      }
    }
  }

  private async start(view: DestinationView, replay: ReplayRecord): Promise<void> {
    const { sourceId, destinationSlug } = view.destination;
    const consumerName = replayConsumerName(replay.replayId);
    const running: RunningReplay = {
      counts: { delivered: 0, discarded: 0, filtered: 0, skipped: 0, dead_lettered: 0 },
    };
    this.running.set(replay.replayId, running);
    const countOutcome = (outcome: DeliveryOutcomeKind) => {
      if (outcome !== 'retried') running.counts[outcome] += 1;
    };
    try {
      running.subscription = await this.eventLog.consume(
        consumerName,
        {
          sourceId,
          deliverFrom: new Date(replay.startTime),
          ackWaitMs: DELIVERY_ACK_WAIT_MS,
          maxInFlight: 64,
        },
        (delivery) =>
          this.deliverer.handle(delivery, {
            consumerName,
            sourceId,
            destinationSlug,
            replay: {
              replayId: replay.replayId,
              endTime: replay.endTime === null ? null : Date.parse(replay.endTime),
              onOutcome: countOutcome,
            },
          }),
      );
      running.timer = setInterval(
        () => void this.finishIfDone(view, replay, running, consumerName),
        COMPLETION_CHECK_MS,
      );
    } catch (error) {
      await this.finish(view, replay, running, 'FAILED', (error as Error).message);
    }
  }

  private async finishIfDone(
    view: DestinationView,
    replay: ReplayRecord,
    running: RunningReplay,
    consumerName: string,
  ) {
    const lag = await this.eventLog.consumerLag(consumerName).catch(() => undefined);
    if (!lag || lag.undelivered > 0 || lag.unacknowledged > 0 || !this.running.has(replay.replayId)) return;
    clearInterval(running.timer);
    await running.subscription?.stop();
    await this.eventLog.deleteConsumer(consumerName).catch(() => false);
    await this.finish(view, replay, running, 'COMPLETED', null);
  }

  private async finish(
    view: DestinationView,
    replay: ReplayRecord,
    running: RunningReplay,
    state: 'COMPLETED' | 'FAILED',
    failureReason: string | null,
  ): Promise<void> {
    const { sourceId, destinationSlug } = view.destination;
    try {
      await this.commands.execute(
        streamNames.destination(sourceId, destinationSlug),
        destinationDecider,
        {
          type: 'FinishReplay',
          replayId: replay.replayId,
          state,
          counts: running.counts,
          failureReason,
          now: new Date().toISOString(),
        },
        { actor: 'system:router', requestId: `replay-${randomUUID()}`, time: new Date().toISOString() },
      );
    } catch (error) {
      this.logger.error(`could not record the end of replay ${replay.replayId}: ${(error as Error).message}`);
    } finally {
      this.running.delete(replay.replayId);
    }
  }
}
