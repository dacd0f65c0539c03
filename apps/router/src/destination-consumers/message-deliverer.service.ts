import { Inject, Injectable, Logger } from '@nestjs/common';
import { KeyedLock } from '@tributary/concurrency';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { NormalizedMessage } from '@tributary/contracts';
import { DeliveryOutcome } from '@tributary/destinations';
import {
  EVENT_LOG,
  type AttemptHistory,
  type DeadLetters,
  type Delivery,
  type DeliveryAttempt,
} from '@tributary/event-log';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import {
  decideDelivery,
  decidePoison,
  decideSettlement,
  prepareReplayMessage,
  type RoutableDestination,
} from '@tributary/routing';
import { DeliveryMetrics, DeliveryOutcomeKind, OutcomeDetail } from '../delivery-metrics/delivery-metrics';
import { RecentMessageOutcomes } from '../message-deliveries/recent-message-outcomes';
import { destinationConsumerName, destinationKey } from './consumer-names';
import { DeliveryTarget, DeliveryTargets } from './delivery-targets.service';
import { DestinationDeliveries } from './destination-deliveries.service';

/** The isolation lane's one key. */
const SUSPECTS = 'suspects';

export interface DeliveryContext {
  consumerName: string;
  sourceId: string;
  destinationSlug: string;
  /** A replay sends history to one destination, even a disabled one, with its integrations replaced. */
  replay?: {
    replayId: string;
    endTime: number | null;
    /**
     * Settles a message of the replay in place of its ack: the replay counts the outcome (none for a
     * message it does not count), then acks. One context serves the whole replay, not one per message.
     */
    settle(delivery: Delivery, outcome: DeliveryOutcomeKind | undefined): Promise<void>;
  };
}

/** What delivering to one destination needs, worked out once per config version, not per message. */
interface PreparedDestination {
  /** The filter list it was prepared with: the read model replaces the list when a filter changes. */
  filters: DestinationView['filters'];
  /** Its adapter or function, settings and insert function (replaced when a function is deployed). */
  target: DeliveryTarget;
  routable: RoutableDestination;
  /** Its key in the delivery metrics: made once, not per message (a new string is hashed at each lookup). */
  metricsKey: string;
}

/**
 * What happens to one message for one destination, ending with the message settled in the log
 * only when its outcome is final (docs/architecture.md, invariant 2): delivered, discarded, filtered,
 * skipped or dead-lettered are acknowledged; a retry is a delayed nak.
 *
 * The retry window and the attempt history live in the log (written only when an attempt fails), so
 * a restart or another replica continues them; the decision itself is `decideSettlement`.
 */
@Injectable()
export class MessageDeliverer {
  private readonly logger = new Logger('Router');
  /**
   * By stored destination record. The read model replaces a destination's record whenever its config
   * changes and never mutates one, so an entry cannot go stale except through its filter list and its
   * target (a function deployed), which are compared on every use. Saves the routing shape per message.
   */
  private readonly prepared = new WeakMap<object, PreparedDestination>();
  /**
   * The isolation lane: suspects' attempts run one at a time in this process, whichever destination
   * or replay they are for (one key). A suspect waiting here is still a running handler, so the log
   * is told it is in progress and does not hand it to another replica meanwhile.
   */
  private readonly isolation = new KeyedLock();

  constructor(
    @Inject(EVENT_LOG) private readonly eventLog: AttemptHistory & DeadLetters,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    private readonly readModel: ConfigReadModel,
    private readonly targets: DeliveryTargets,
    private readonly deliveries: DestinationDeliveries,
    private readonly metrics: DeliveryMetrics,
    private readonly recentOutcomes: RecentMessageOutcomes,
  ) {}

  async handle(delivery: Delivery, context: DeliveryContext): Promise<void> {
    const view = this.readModel.destination(context.sourceId, context.destinationSlug);
    const prepared = view && this.prepare(view);
    if (!prepared) {
      // The destination was deleted while the message waited: nothing is left to deliver to.
      await this.settleInLog(delivery, context);
      return;
    }
    if (context.replay?.endTime !== undefined && context.replay.endTime !== null) {
      if (delivery.publishedAt.getTime() > context.replay.endTime) {
        await this.settleInLog(delivery, context);
        return;
      }
    }
    const key = prepared.metricsKey;
    const payload = delivery.payload as unknown as NormalizedMessage;
    const message = context.replay ? prepareReplayMessage(payload, prepared.target.displayName) : payload;
    const decision = decideDelivery(message, prepared.routable, {
      now: new Date(),
      replay: Boolean(context.replay),
    });
    if (decision.outcome !== 'deliver') {
      const outcome = decision.outcome === 'skip' ? 'skipped' : 'filtered';
      this.settle(key, context, outcome, { messageId: delivery.messageId });
      await this.settleInLog(delivery, context, outcome);
      return;
    }

    const attempt = () =>
      this.deliveries.deliver(
        prepared.target,
        decision.message,
        // Unchanged by routing (no replay, no filter copy): the destination may send the stored bytes.
        decision.message === payload ? delivery.storedPayload : undefined,
      );
    // A first delivery goes straight to the destination: the poison rule reads nothing and writes
    // nothing for it (it is every message's way).
    const result =
      delivery.deliveryCount === 1
        ? await attempt()
        : await this.attemptAgain(delivery, context, key, attempt);
    if (result === undefined) return;
    if (result.outcome === 'delivered') {
      const receivedAt = Date.parse(String(payload.receivedAt));
      this.settle(key, context, 'delivered', {
        latencyMs: Number.isNaN(receivedAt) ? undefined : Date.now() - receivedAt,
        messageId: delivery.messageId,
        valuesNotStored: result.valuesNotStored,
      });
      await this.settleInLog(delivery, context, 'delivered');
      return;
    }
    if (result.outcome === 'filtered') {
      // The destination's own subscriptions (Segment Actions) matched none of its actions, or its
      // function has no handler for the message's type, or its insert function dropped it.
      this.settle(key, context, 'filtered', { messageId: delivery.messageId, reason: result.reason });
      await this.settleInLog(delivery, context, 'filtered');
      return;
    }
    if (result.outcome === 'discard') {
      this.settle(key, context, 'discarded', {
        messageId: delivery.messageId,
        reason: result.reason,
        discardCause: result.cause,
      });
      await this.settleInLog(delivery, context, 'discarded');
      return;
    }

    // Only a failure writes: the history and the first failure's time, before the decision reads them.
    const history = await this.eventLog.recordFailedAttempt(context.consumerName, delivery.sequence, {
      at: new Date(),
      outcome: result.reason,
      deliveryCount: delivery.deliveryCount,
    });
    const settlement = decideSettlement({
      attempt: result,
      deliveryCount: delivery.deliveryCount,
      storedAt: delivery.publishedAt,
      firstFailedAt: history.firstFailedAt,
      now: new Date(),
      retryWindowMs: this.environment.RETRY_WINDOW,
      jitter: Math.random(),
    });
    if (settlement.action === 'retry') {
      this.metrics.record(key, 'retried');
      this.recentOutcomes.record(
        context.sourceId,
        delivery.messageId,
        context.destinationSlug,
        'retried',
        result.reason,
      );
      await delivery.nak(settlement.delayMs);
      return;
    }
    await this.deadLetter(
      delivery,
      context,
      `retries exhausted after ${history.attempts.length} attempts: ${result.reason}`,
      history.attempts,
    );
    this.settle(key, context, 'dead_lettered', {
      messageId: delivery.messageId,
      reason: result.reason,
      deadLetterCause: 'retries_exhausted',
    });
    await this.settleInLog(delivery, context, 'dead_lettered', true);
  }

  /**
   * A redelivery: the poison rule first (`decidePoison`, from the attempts the log keeps), then the
   * attempt, recorded as started before the destination is called, so a process that dies or stalls
   * in it leaves that start unsettled for the next delivery to count. A suspect (an earlier delivery
   * never settled) waits for its turn in the process's isolation lane before recording its start,
   * so a crash caused by another suspect is never charged to it. Undefined: the message was
   * dead-lettered as poison and settled here.
   */
  private async attemptAgain(
    delivery: Delivery,
    context: DeliveryContext,
    key: string,
    attempt: () => Promise<DeliveryOutcome>,
  ): Promise<DeliveryOutcome | undefined> {
    const { consumerName } = context;
    const history = await this.eventLog.readFailedAttempts(consumerName, delivery.sequence);
    const check = decidePoison({ deliveryCount: delivery.deliveryCount, attempts: history?.attempts ?? [] });
    if (check.action === 'dead-letter') {
      await this.deadLetter(delivery, context, check.reason, history?.attempts ?? []);
      this.settle(key, context, 'dead_lettered', {
        messageId: delivery.messageId,
        reason: check.reason,
        deadLetterCause: 'poison',
      });
      await this.settleInLog(delivery, context, 'dead_lettered', true);
      return undefined;
    }
    const startedAttempt = () =>
      this.eventLog
        .recordAttemptStarted(consumerName, delivery.sequence, {
          at: new Date(),
          deliveryCount: delivery.deliveryCount,
        })
        .then(attempt);
    return check.suspect ? this.isolation.run(SUSPECTS, startedAttempt) : startedAttempt();
  }

  /**
   * Acknowledges the message (a replay's own way: see `DeliveryContext.replay`), then drops what the
   * log remembers of its failed attempts. Only a redelivered message can have any, so a message settled
   * at its first delivery writes nothing more (and its settling is the ack's own promise, without an
   * async function around it). A crash between the two leaves a history no one reads again, which the
   * log's retention removes. `outcome` is what a replay counts: none when nothing was decided (the
   * destination is gone, the message is past the replay's end).
   */
  private settleInLog(
    delivery: Delivery,
    context: DeliveryContext,
    outcome?: DeliveryOutcomeKind,
    failedBefore = false,
  ): Promise<void> {
    const acked = context.replay ? context.replay.settle(delivery, outcome) : delivery.ack();
    if (delivery.deliveryCount <= 1 && !failedBefore) return acked;
    return acked.then(() =>
      this.eventLog
        .forgetFailedAttempts(context.consumerName, delivery.sequence)
        .catch((error: Error) =>
          this.logger.warn(`could not drop the attempt history of ${delivery.messageId}: ${error.message}`),
        ),
    );
  }

  private prepare(view: DestinationView): PreparedDestination | undefined {
    const record = view.destination;
    const target = this.targets.targetOf(record);
    if (!target) return undefined;
    const cached = this.prepared.get(record);
    if (cached && cached.filters === view.filters && cached.target === target) return cached;
    const prepared: PreparedDestination = {
      filters: view.filters,
      target,
      routable: {
        slug: record.destinationSlug,
        displayName: target.displayName,
        enabled: record.enabled,
        filters: view.filters,
        capabilities: target.capabilities,
      },
      metricsKey: cached?.metricsKey ?? destinationKey(record.sourceId, record.destinationSlug),
    };
    this.prepared.set(record, prepared);
    return prepared;
  }

  /** Dead letters of a replay go with the destination's own, where operators look for them. */
  private async deadLetter(
    delivery: Delivery,
    context: DeliveryContext,
    reason: string,
    attempts: DeliveryAttempt[],
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
      reason,
      attempts,
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
    if (detail?.messageId !== undefined) {
      this.recentOutcomes.record(
        context.sourceId,
        detail.messageId,
        context.destinationSlug,
        outcome,
        detail.reason,
      );
    }
  }
}
