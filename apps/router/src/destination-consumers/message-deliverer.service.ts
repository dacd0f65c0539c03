import { Inject, Injectable, Logger } from '@nestjs/common';
import { SecretBox } from '@tributary/auth';
import { catalogSlugOf } from '@tributary/config-domain';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { NormalizedMessage } from '@tributary/contracts';
import { findCatalogDestination } from '@tributary/destinations';
import { Delivery, EVENT_LOG, EventLog } from '@tributary/event-log';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import { decideDelivery, prepareReplayMessage } from '@tributary/routing';
import { DeliveryMetrics, DeliveryOutcomeKind, OutcomeDetail } from '../delivery-metrics/delivery-metrics';
import { destinationConsumerName, destinationKey } from './consumer-names';
import { DestinationDeliveries } from './destination-deliveries.service';
import { retryDelayMs, retryWindowExhausted } from './retry-schedule';

export interface DeliveryContext {
  consumerName: string;
  sourceId: string;
  destinationSlug: string;
  /** A replay sends history to one destination, even a disabled one, with its integrations replaced. */
  replay?: { replayId: string; endTime: number | null; onOutcome(outcome: DeliveryOutcomeKind): void };
}

interface AttemptHistory {
  firstAttemptAt: number;
  attempts: { at: Date; outcome: string }[];
}

/**
 * What happens to one message for one destination, ending with the message settled in the log
 * only when its outcome is final (design.md, invariant 2): delivered, discarded, filtered,
 * skipped or dead-lettered are acknowledged; a retry is a delayed nak.
 */
@Injectable()
export class MessageDeliverer {
  private readonly logger = new Logger('Router');
  /** Attempts of messages being retried, by consumer and log sequence; kept until their outcome is final. */
  private readonly retries = new Map<string, AttemptHistory>();
  /**
   * Decrypted settings by stored config object. The read model replaces a destination's config object
   * whenever its config changes and never mutates one, so an entry cannot go stale; it goes with the
   * object. Frozen, since every delivery shares it. Saves an AES-GCM decryption of every password
   * setting per message.
   */
  private readonly revealedSettings = new WeakMap<object, Record<string, unknown>>();

  constructor(
    @Inject(EVENT_LOG) private readonly eventLog: EventLog,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly readModel: ConfigReadModel,
    private readonly secretBox: SecretBox,
    private readonly deliveries: DestinationDeliveries,
    private readonly metrics: DeliveryMetrics,
  ) {}

  async handle(delivery: Delivery, context: DeliveryContext): Promise<void> {
    const key = destinationKey(context.sourceId, context.destinationSlug);
    const view = this.readModel.destination(context.sourceId, context.destinationSlug);
    const catalogEntry = view && findCatalogDestination(catalogSlugOf(view.destination));
    if (!view || !catalogEntry) {
      // The destination was deleted while the message waited: nothing is left to deliver to.
      await delivery.ack();
      return;
    }
    if (context.replay?.endTime !== undefined && context.replay.endTime !== null) {
      if (delivery.publishedAt.getTime() > context.replay.endTime) {
        await delivery.ack();
        return;
      }
    }
    const payload = delivery.payload as unknown as NormalizedMessage;
    const message = context.replay ? prepareReplayMessage(payload, catalogEntry.displayName) : payload;
    const decision = decideDelivery(message, routableDestination(view, catalogEntry), {
      now: new Date(),
      replay: Boolean(context.replay),
    });
    if (decision.outcome !== 'deliver') {
      this.settle(key, context, decision.outcome === 'skip' ? 'skipped' : 'filtered');
      await delivery.ack();
      return;
    }

    const result = await this.deliveries.deliver(
      catalogEntry.slug,
      decision.message,
      this.revealedSettingsOf(view.destination.config),
      { sourceId: context.sourceId, sourceSlug: view.destination.sourceSlug },
    );
    const retryKey = `${context.consumerName}:${delivery.sequence}`;
    const history = this.retries.get(retryKey) ?? { firstAttemptAt: Date.now(), attempts: [] };
    history.attempts.push({
      at: new Date(),
      outcome: result.outcome === 'delivered' ? 'delivered' : result.reason,
    });

    if (result.outcome === 'delivered') {
      this.retries.delete(retryKey);
      const receivedAt = Date.parse(String(payload.receivedAt));
      this.settle(key, context, 'delivered', {
        latencyMs: Number.isNaN(receivedAt) ? undefined : Date.now() - receivedAt,
        messageId: payload.messageId,
        valuesNotStored: result.valuesNotStored,
      });
      await delivery.ack();
      return;
    }
    if (result.outcome === 'filtered') {
      this.retries.delete(retryKey);
      this.settle(key, context, 'filtered');
      await delivery.ack();
      return;
    }
    if (result.outcome === 'discard') {
      this.retries.delete(retryKey);
      this.settle(key, context, 'discarded', {
        messageId: payload.messageId,
        reason: result.reason,
        discardCause: result.cause,
      });
      await delivery.ack();
      return;
    }
    if (!retryWindowExhausted(history.firstAttemptAt, Date.now(), this.environment.RETRY_WINDOW)) {
      this.retries.set(retryKey, history);
      this.metrics.record(key, 'retried');
      await delivery.nak(retryDelayMs(delivery.deliveryCount, result.retryAfterMs));
      return;
    }
    await this.deadLetter(delivery, context, result.reason, history);
    this.retries.delete(retryKey);
    this.settle(key, context, 'dead_lettered');
    await delivery.ack();
  }

  private revealedSettingsOf(config: Record<string, unknown>): Record<string, unknown> {
    let revealed = this.revealedSettings.get(config);
    if (!revealed) {
      revealed = Object.freeze(this.secretBox.revealAll(config));
      this.revealedSettings.set(config, revealed);
    }
    return revealed;
  }

  /** Dead letters of a replay go with the destination's own, where operators look for them. */
  private async deadLetter(
    delivery: Delivery,
    context: DeliveryContext,
    reason: string,
    history: AttemptHistory,
  ) {
    await this.eventLog.deadLetter({
      consumerName: destinationConsumerName(context.sourceId, context.destinationSlug),
      message: {
        workspaceId: delivery.workspaceId,
        sourceId: delivery.sourceId,
        messageId: delivery.messageId,
        sequence: delivery.sequence,
        publishedAt: delivery.publishedAt,
        payload: delivery.payload,
      },
      reason: `retries exhausted after ${history.attempts.length} attempts: ${reason}`,
      attempts: history.attempts,
    });
    this.logger.warn(`dead-lettered message ${delivery.messageId} for ${context.destinationSlug}: ${reason}`);
  }

  private settle(
    key: string,
    context: DeliveryContext,
    outcome: DeliveryOutcomeKind,
    detail?: OutcomeDetail,
  ): void {
    this.metrics.record(key, outcome, detail);
    context.replay?.onOutcome(outcome);
  }
}

function routableDestination(
  view: DestinationView,
  catalogEntry: NonNullable<ReturnType<typeof findCatalogDestination>>,
) {
  return {
    slug: view.destination.destinationSlug,
    displayName: catalogEntry.displayName,
    enabled: view.destination.enabled,
    filters: view.filters,
    capabilities: catalogEntry.capabilities,
  };
}
