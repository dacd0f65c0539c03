import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ConfigChange, ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { DestinationRecord } from '@tributary/config-domain';
import { TRACKING_LOG, type ConsumerSubscription, type TrackingLog } from '@tributary/event-log';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { DeliveryMetrics } from '../delivery-metrics/delivery-metrics';
import { destinationConsumerName, destinationKey } from './consumer-names';
import { DestinationDeliveries, requestLimiterOf } from './destination-deliveries.service';
import { type DeliveryContext, MessageDeliverer } from './message-deliverer.service';

/**
 * One durable consumer per destination, created, kept and removed as config events arrive, so a
 * destination created while the router runs receives messages within a second. Each consumer has
 * its own in-flight budget and retry schedule: a failing destination never slows another.
 */
@Injectable()
export class DestinationConsumers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Router');
  private readonly subscriptions = new Map<string, Promise<ConsumerSubscription | undefined>>();
  /** What each running consumer holds at once: an insert function enabled or disabled changes it. */
  private readonly held = new Map<string, number>();
  /** Consumers being stopped and deleted; one re-created under the same name waits for its predecessor's end. */
  private readonly removals = new Map<string, Promise<void>>();
  private stopListening?: () => void;
  private stopped = false;

  constructor(
    @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly readModel: ConfigReadModel,
    private readonly deliverer: MessageDeliverer,
    private readonly metrics: DeliveryMetrics,
    private readonly deliveries: DestinationDeliveries,
  ) {}

  onApplicationBootstrap(): void {
    this.stopListening = this.readModel.onChange((change) => this.onConfigChange(change));
    for (const view of this.readModel.listAllDestinations()) this.ensureConsumer(view);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.stopListening?.();
    const subscriptions = await Promise.all(this.subscriptions.values());
    await Promise.all(subscriptions.map((subscription) => subscription?.stop()));
  }

  runningConsumerNames(): string[] {
    return [...this.subscriptions.keys()];
  }

  private onConfigChange(change: ConfigChange): void {
    if (change.kind === 'destination-upserted') this.ensureConsumer(change.view);
    if (change.kind === 'destination-deleted') void this.removeConsumer(change.destination);
  }

  /**
   * Starts the destination's consumer unless it runs; one that runs with another budget than the
   * destination now has (its insert function enabled or disabled) is stopped and started again with
   * it, resuming where it stopped.
   */
  private ensureConsumer(view: DestinationView): void {
    const { sourceId, destinationSlug, createTime } = view.destination;
    const consumerName = destinationConsumerName(sourceId, destinationSlug);
    if (this.stopped) return;
    const budget = this.deliveries.budgetOf(view.destination, this.environment.ROUTER_MAX_IN_FLIGHT);
    if (this.subscriptions.has(consumerName)) {
      if (this.held.get(consumerName) === budget.held) return;
      void this.stopConsumer(consumerName);
    }
    this.held.set(consumerName, budget.held);
    const context: DeliveryContext = {
      consumerName,
      sourceId,
      destinationSlug,
      requests: requestLimiterOf(budget),
    };
    // Were it started before the old one is deleted, that deletion would stop and delete this one too.
    const predecessorRemoved = this.removals.get(consumerName) ?? Promise.resolve();
    const started = predecessorRemoved
      .then(() => {
        if (this.stopped) return undefined;
        return this.trackingLog.consume(
          consumerName,
          {
            sourceId,
            // Messages from the moment the destination was created, even those published before the
            // router saw the event; an existing consumer resumes where it stopped and ignores this.
            deliverFrom: new Date(createTime),
            ackWaitMs: this.environment.ROUTER_ACK_WAIT,
            // Delivery is at least once: an ack lost to a crash only repeats a delivery in flight.
            confirmAcks: false,
            maxInFlight: budget.held,
            onHandlerError: (error, delivery) =>
              this.logger.error(
                `delivery of ${delivery.messageId} to ${destinationSlug} failed: ${(error as Error).message}`,
              ),
          },
          (delivery) => this.deliverer.handle(delivery, context),
        );
      })
      .catch((error: Error) => {
        this.logger.error(
          `could not start the consumer of ${destinationSlug} (${sourceId}): ${error.message}`,
        );
        if (this.subscriptions.get(consumerName) === started) {
          this.subscriptions.delete(consumerName);
          this.held.delete(consumerName);
        }
        return undefined;
      });
    this.subscriptions.set(consumerName, started);
  }

  /**
   * Forgets a consumer at once and stops it (waiting for its deliveries in flight), then does `after`
   * (deleting it, for a removal). One started again under its name waits for all of that.
   */
  private stopConsumer(consumerName: string, after?: () => Promise<void>): Promise<void> {
    const running = this.subscriptions.get(consumerName);
    this.subscriptions.delete(consumerName);
    this.held.delete(consumerName);
    const previous = this.removals.get(consumerName) ?? Promise.resolve();
    const stopping = previous
      .then(async () => {
        // A webhook in flight may take its full timeout.
        await (await running)?.stop();
        await after?.();
      })
      .catch((error: Error) =>
        this.logger.error(`could not stop the consumer ${consumerName}: ${error.message}`),
      );
    this.removals.set(consumerName, stopping);
    return stopping.finally(() => {
      if (this.removals.get(consumerName) === stopping) this.removals.delete(consumerName);
    });
  }

  /** Forgotten at once, so a destination re-created under the same name gets a consumer of its own. */
  private removeConsumer(destination: DestinationRecord): Promise<void> {
    const consumerName = destinationConsumerName(destination.sourceId, destination.destinationSlug);
    return this.stopConsumer(consumerName, async () => {
      await this.trackingLog.deleteConsumer(consumerName).catch(() => false);
      this.metrics.forget(destinationKey(destination.sourceId, destination.destinationSlug));
    });
  }
}
