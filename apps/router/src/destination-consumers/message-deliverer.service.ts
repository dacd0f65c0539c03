import { Inject, Injectable, Logger } from '@nestjs/common';
import { KeyedLock } from '@tributary/concurrency';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { AttemptResult, DeliveryOutcome, NormalizedMessage } from '@tributary/contracts';
import {
  ATTEMPT_HISTORY,
  DEAD_LETTERS,
  type AttemptHistory,
  type DeadLetters,
  type Delivery,
  type DeliveryAttempt,
} from '@tributary/event-log';
import { ConcurrencyLimiter, Environment, ENVIRONMENT } from '@tributary/platform';
import {
  decideDelivery,
  decidePoison,
  decideSettlement,
  type PoisonCheck,
  prepareReplayMessage,
  type RoutableDestination,
  type Settlement,
} from '@tributary/routing';
import { DeliveryMetrics, OutcomeDetail } from '../delivery-metrics/delivery-metrics';
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
  /**
   * How many of the consumer's messages may be at the destination at once, when it holds more than
   * that (`requestLimiterOf`).
   */
  requests?: ConcurrencyLimiter;
  /** A replay sends history to one destination, even a disabled one, with its integrations replaced. */
  replay?: {
    replayId: string;
    endTime: number | null;
    /**
     * Acknowledges a message of the replay in place of its ack: the replay counts the outcome (none
     * for a message it does not count), then acks. One context serves the whole replay, not one per
     * message.
     */
    acknowledgeReplayed(delivery: Delivery, outcome: DeliveryOutcome | undefined): Promise<void>;
  };
}

/** Where an outcome is recorded: the destination's delivery metrics and the debugger's recent outcomes. */
export interface RecordedDestination {
  readonly sourceId: string;
  readonly destinationSlug: string;
  /** Its key in the delivery metrics (`destinationKey`). */
  readonly metricsKey: string;
}

/** What delivering to one destination needs, worked out once per config version, not per message. */
interface PreparedDestination extends RecordedDestination {
  /** The filter list it was prepared with: the read model replaces the list when a filter changes. */
  filters: DestinationView['filters'];
  /** Its adapter or function, settings and insert function (replaced when a function is deployed). */
  target: DeliveryTarget;
  routable: RoutableDestination;
}

/**
 * What happens to one message for one destination: routing decides whether it is sent
 * (`decideDelivery`), it is sent when it is, a failure is recorded in the log, `decideSettlement`
 * decides its outcome from all of that, and `apply` carries the verdict out. The message is
 * acknowledged only when its outcome is final (docs/architecture.md, invariant 2): delivered,
 * discarded, filtered, skipped or dead-lettered; a retry is a delayed nak.
 *
 * The retry window and the attempt history live in the log (written only when an attempt fails), so
 * a restart or another replica continues them. Dead-letter redrives send and record through `send`
 * and `record` too, so their outcomes show in the same metrics and debugger.
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
    @Inject(ATTEMPT_HISTORY) private readonly attempts: AttemptHistory,
    @Inject(DEAD_LETTERS) private readonly deadLetters: DeadLetters,
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
      await this.acknowledge(delivery, context, undefined, delivery.deliveryCount > 1);
      return;
    }
    if (context.replay?.endTime !== undefined && context.replay.endTime !== null) {
      if (delivery.publishedAt.getTime() > context.replay.endTime) {
        await this.acknowledge(delivery, context, undefined, delivery.deliveryCount > 1);
        return;
      }
    }
    const payload = delivery.payload as unknown as NormalizedMessage;
    const message = context.replay ? prepareReplayMessage(payload, prepared.target.displayName) : payload;
    const routing = decideDelivery(message, prepared.routable, {
      now: new Date(),
      replay: Boolean(context.replay),
    });

    let poison: PoisonCheck | undefined;
    let attempt: AttemptResult | undefined;
    let attempts: DeliveryAttempt[] = [];
    if (routing.outcome === 'deliver') {
      const send = () =>
        this.send(
          prepared.target,
          routing.message,
          // Unchanged by routing (no replay, no filter copy): the destination may send the stored bytes.
          routing.message === payload ? delivery.storedPayload : undefined,
          context.requests,
        );
      if (delivery.deliveryCount === 1) {
        // A first delivery goes straight to the destination: the poison rule reads nothing and writes
        // nothing for it (it is every message's way).
        attempt = await send();
      } else {
        attempts =
          (await this.attempts.readFailedAttempts(context.consumerName, delivery.sequence))?.attempts ?? [];
        poison = decidePoison({ deliveryCount: delivery.deliveryCount, attempts });
        if (poison.action === 'attempt')
          attempt = await this.attemptAgain(delivery, context, poison.suspect, send);
      }
    }

    // Only a failure writes: the history and the first failure's time, before the decision reads them.
    let firstFailedAt: Date | null = null;
    if (attempt?.outcome === 'retry') {
      const history = await this.attempts.recordFailedAttempt(context.consumerName, delivery.sequence, {
        at: new Date(),
        outcome: attempt.reason,
        deliveryCount: delivery.deliveryCount,
      });
      firstFailedAt = history.firstFailedAt;
      attempts = history.attempts;
    }
    const settlement = decideSettlement({
      routing,
      poison,
      attempt,
      deliveryCount: delivery.deliveryCount,
      storedAt: delivery.publishedAt,
      firstFailedAt,
      attemptsKept: attempts.length,
      now: new Date(),
      retryWindowMs: this.environment.RETRY_WINDOW,
      jitter: Math.random(),
    });
    return this.apply(delivery, context, prepared, settlement, attempt, attempts);
  }

  /**
   * Sends one message to a destination's target: the only way the router sends a message, for its
   * consumers and for dead-letter redrives alike. Never rejects (the delivery port's contract), but for
   * a message still waiting for a place in `requests` when the limiter is closed (a replay cancelled or
   * taken over): it rejects without sending, and the message is left unsettled.
   */
  send(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload?: Uint8Array,
    requests?: ConcurrencyLimiter,
  ): Promise<AttemptResult> {
    return this.deliveries.deliver(target, message, storedPayload, requests);
  }

  /** Counts an outcome in the destination's delivery metrics and remembers it for the debugger. */
  record(
    destination: RecordedDestination,
    outcome: DeliveryOutcome,
    detail: OutcomeDetail & { messageId: string },
  ): void {
    this.metrics.record(destination.metricsKey, outcome, detail);
    this.recentOutcomes.record(
      destination.sourceId,
      detail.messageId,
      destination.destinationSlug,
      outcome,
      detail.reason,
    );
  }

  /**
   * Carries a settlement out: a dead letter is written first, so whoever sees it counted finds it
   * listed; then the outcome is recorded, and the message acknowledged or, for a retry, nak'd with
   * the decided delay.
   */
  private apply(
    delivery: Delivery,
    context: DeliveryContext,
    destination: RecordedDestination,
    settlement: Settlement,
    attempt: AttemptResult | undefined,
    attempts: DeliveryAttempt[],
  ): Promise<void> {
    const { log } = settlement;
    // Not async: most messages are acknowledged at once, and each await is a promise more per message.
    if (log.kind !== 'deadLetter')
      return this.recordThenSettle(delivery, context, destination, settlement, attempt);
    return this.deadLetter(delivery, context, log.reason, attempts).then(() =>
      this.recordThenSettle(delivery, context, destination, settlement, attempt),
    );
  }

  private recordThenSettle(
    delivery: Delivery,
    context: DeliveryContext,
    destination: RecordedDestination,
    settlement: Settlement,
    attempt: AttemptResult | undefined,
  ): Promise<void> {
    const { outcome, log } = settlement;
    this.record(destination, outcome, this.detailOf(delivery, settlement, attempt));
    if (log.kind === 'nak') return delivery.nak(log.delayMs);
    return this.acknowledge(delivery, context, outcome, settlement.forgetsHistory);
  }

  private detailOf(
    delivery: Delivery,
    settlement: Settlement,
    attempt: AttemptResult | undefined,
  ): OutcomeDetail & { messageId: string } {
    const { messageId } = delivery;
    if (attempt?.outcome === 'delivered') {
      const receivedAt = Date.parse(String((delivery.payload as { receivedAt?: unknown }).receivedAt));
      return {
        latencyMs: Number.isNaN(receivedAt) ? undefined : Date.now() - receivedAt,
        messageId,
        valuesNotStored: attempt.valuesNotStored,
      };
    }
    const { reason, discardCause, deadLetterCause } = settlement;
    return { messageId, reason, discardCause, deadLetterCause };
  }

  /**
   * A redelivery the poison rule lets through: its attempt is recorded as started before the
   * destination is called, so a process that dies or stalls in it leaves that start unsettled for the
   * next delivery to count. A suspect (an earlier delivery never settled) waits for its turn in the
   * process's isolation lane before recording its start, so a crash caused by another suspect is
   * never charged to it.
   */
  private attemptAgain(
    delivery: Delivery,
    context: DeliveryContext,
    suspect: boolean,
    send: () => Promise<AttemptResult>,
  ): Promise<AttemptResult> {
    const startedAttempt = () =>
      this.attempts
        .recordAttemptStarted(context.consumerName, delivery.sequence, {
          at: new Date(),
          deliveryCount: delivery.deliveryCount,
        })
        .then(send);
    return suspect ? this.isolation.run(SUSPECTS, startedAttempt) : startedAttempt();
  }

  /**
   * Acknowledges the message (a replay's own way: see `DeliveryContext.replay`), then, when the
   * settlement says so, drops what the log remembers of its failed attempts (without an async
   * function around the ack otherwise: a message settled at its first delivery writes nothing more).
   * A crash between the two leaves a history no one reads again, which the log's retention removes.
   * `outcome` is what a replay counts: none when nothing was decided (the destination is gone, the
   * message is past the replay's end).
   */
  private acknowledge(
    delivery: Delivery,
    context: DeliveryContext,
    outcome: DeliveryOutcome | undefined,
    forgetsHistory: boolean,
  ): Promise<void> {
    const acked = context.replay ? context.replay.acknowledgeReplayed(delivery, outcome) : delivery.ack();
    if (!forgetsHistory) return acked;
    return acked.then(() =>
      this.attempts
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
      sourceId: record.sourceId,
      destinationSlug: record.destinationSlug,
      // Made once, not per message (a new string is hashed at each lookup).
      metricsKey: cached?.metricsKey ?? destinationKey(record.sourceId, record.destinationSlug),
      filters: view.filters,
      target,
      routable: {
        slug: record.destinationSlug,
        displayName: target.displayName,
        enabled: record.enabled,
        filters: view.filters,
        capabilities: target.capabilities,
      },
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
    await this.deadLetters.deadLetter({
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
}
