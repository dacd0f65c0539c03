import { AckPolicy, DeliverPolicy, JetStreamApiCodes, ReplayPolicy, type JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeliveryHandler,
} from '../../event-log.port';
import { assertConsumerName, assertPositiveInteger, assertSubjectToken } from '../../event-log.validation';
import { RunningHandlers } from '../../running-handlers';
import type { JetStreamAttemptHistory } from './attempt-history';
import { CoalescedAcks } from './coalesced-acks';
import { ConfirmedAcks } from './confirmed-acks';
import { JetStreamDelivery, SubjectTokens, type DeliverySettling } from './jetstream-delivery';
import { isApiError, type JetStreamSession } from './jetstream-session';
import { TRACKING_STREAM, trackingFilter } from './jetstream-streams';
import { RestartingPull } from './restarting-pull';

/** How long the probe of `firstSequenceAt` outlives a lost deletion. */
const PROBE_INACTIVE_MS = 10_000;

/** What an unconfirmed ack answers: one settled promise shared by all, rather than one per ack. */
const SENT: Promise<void> = Promise.resolve();

/**
 * The durable consumers of `TRACKING`: one pull consumer per name, explicit ack, unlimited
 * `max_deliver` (the router decides when to give up and dead-letters), `max_ack_pending` =
 * maxInFlight; the deliveries they hand out, with ack, delayed nak and terminate.
 */
export class JetStreamConsumers {
  private readonly subscriptions = new Map<string, Set<ConsumerSubscription>>();
  private readonly acks: CoalescedAcks;
  private readonly confirmedAcks: ConfirmedAcks;

  constructor(
    private readonly session: JetStreamSession,
    private readonly attemptHistory: JetStreamAttemptHistory,
    private readonly notice?: (message: string) => void,
  ) {
    this.acks = new CoalescedAcks(session.connection);
    this.confirmedAcks = new ConfirmedAcks(session.connection, session.publishTimeoutMs);
  }

  async consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    assertConsumerName(consumerName);
    assertConsumeOptions(options);
    this.session.assertUsable();
    let pull: RestartingPull;
    try {
      await this.ensureConsumer(consumerName, options);
      const consumer = await this.session.client.consumers.get(TRACKING_STREAM, consumerName);
      const handlers = new RunningHandlers(handler, options.onHandlerError, options.ackWaitMs);
      const settling = this.settlingFor(consumerName, options.confirmAcks !== false);
      const subjects = new SubjectTokens();
      // Short pulls, issued again at once when a NATS node or a leader election takes one away.
      pull = await RestartingPull.start(
        consumer,
        {
          max_messages: options.maxInFlight,
          // A slow handler tells the server it is still working, so its message is not redelivered
          // meanwhile: the ack wait can then be short, and a dead router's messages come back quickly.
          callback: (message) =>
            handlers.start(JetStreamDelivery.of(message, settling, subjects), () => message.working()),
        },
        this.session.connection,
        this.session.pullExpiresMs,
        {
          leaderElected: `$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.${TRACKING_STREAM}.${consumerName}`,
          notice: this.notice && ((message) => this.notice!(`consumer ${consumerName}: ${message}`)),
        },
      );
      const subscription: ConsumerSubscription = {
        stop: async () => {
          this.subscriptions.get(consumerName)?.delete(subscription);
          await pull.close();
          await handlers.whenIdle();
          this.acks.flush();
          this.confirmedAcks.flush();
        },
      };
      const ofConsumer = this.subscriptions.get(consumerName) ?? new Set<ConsumerSubscription>();
      ofConsumer.add(subscription);
      this.subscriptions.set(consumerName, ofConsumer);
      return subscription;
    } catch (error) {
      throw this.session.translate(error, `consumer ${consumerName}`);
    }
  }

  async deleteConsumer(consumerName: string): Promise<boolean> {
    assertConsumerName(consumerName);
    this.session.assertUsable();
    await Promise.all(
      [...(this.subscriptions.get(consumerName) ?? [])].map((subscription) => subscription.stop()),
    );
    try {
      const deleted = await this.session.manager.consumers.delete(TRACKING_STREAM, consumerName);
      await this.attemptHistory.forgetConsumer(consumerName);
      return deleted;
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return false;
      throw this.session.translate(error, `delete of consumer ${consumerName}`);
    }
  }

  async consumerLag(consumerName: string): Promise<ConsumerLag> {
    assertConsumerName(consumerName);
    this.session.assertUsable();
    try {
      const info = await this.session.manager.consumers.info(TRACKING_STREAM, consumerName);
      return { undelivered: info.num_pending, unacknowledged: info.num_ack_pending };
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound))
        throw new ConsumerNotFoundError(consumerName);
      throw this.session.translate(error, `lag of consumer ${consumerName}`);
    }
  }

  /** Stops every subscription and sends the acks still queued (the log is closing). */
  async stopAll(): Promise<void> {
    const all = [...this.subscriptions.values()].flatMap((ofConsumer) => [...ofConsumer]);
    await Promise.allSettled(all.map((subscription) => subscription.stop()));
  }

  /** Sends the acks still queued (the log is closing). */
  flushAcks(): void {
    this.acks.flush();
    this.confirmedAcks.flush();
  }

  private async ensureConsumer(consumerName: string, options: ConsumeOptions): Promise<void> {
    const { manager } = this.session;
    const filterSubject = trackingFilter(options.sourceId);
    const ackWait = nanos(options.ackWaitMs);
    try {
      const info = await manager.consumers.info(TRACKING_STREAM, consumerName);
      if ((info.config.filter_subject ?? '') !== filterSubject) {
        throw new ConsumerMismatchError(
          consumerName,
          sourceIdOfFilter(info.config.filter_subject),
          options.sourceId,
        );
      }
      if (info.config.ack_wait !== ackWait || info.config.max_ack_pending !== options.maxInFlight) {
        try {
          await manager.consumers.update(TRACKING_STREAM, consumerName, {
            ack_wait: ackWait,
            max_ack_pending: options.maxInFlight,
          });
        } catch (error) {
          // nats-server before 2.10 refuses every update of a consumer that starts at a time, its
          // own start time included: one made so by an earlier version of this adapter (they now start
          // at a sequence, see `firstSequenceAt`). Such a consumer still works as it was set up: it
          // keeps its ack wait and budget rather than not being consumed at all (a router whose
          // ROUTER_ACK_WAIT or ROUTER_MAX_IN_FLIGHT changed would otherwise deliver nothing to that
          // destination).
          if (!refusesStartTimeUpdate(error)) throw error;
          this.notice?.(
            `consumer ${consumerName}: keeps ack_wait ${(info.config.ack_wait ?? 0) / 1e6} ms and max_ack_pending ` +
              `${info.config.max_ack_pending}; this NATS server cannot update a consumer that starts at a time (2.10 can)`,
          );
        }
      }
      return;
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    }
    await manager.consumers.add(TRACKING_STREAM, {
      durable_name: consumerName,
      filter_subject: filterSubject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: ackWait,
      max_ack_pending: options.maxInFlight,
      max_deliver: -1,
      replay_policy: ReplayPolicy.Instant,
      ...(options.deliverFrom
        ? {
            deliver_policy: DeliverPolicy.StartSequence,
            opt_start_seq: await this.firstSequenceAt(options.deliverFrom),
          }
        : { deliver_policy: DeliverPolicy.New }),
    });
  }

  /**
   * The sequence a consumer that starts at `time` starts at, as the server finds it: that of a probe
   * consumer made to start there (its `delivered` is the sequence before its first). Consumers start at
   * that sequence rather than at the time because nats-server 2.9 refuses every later update of a
   * consumer that starts at a time: a changed `ROUTER_MAX_IN_FLIGHT` or `ROUTER_ACK_WAIT`, or an insert
   * function's room, would never reach it. The server resolves a start time to a sequence once, when the
   * consumer is made, so the two start the same.
   */
  private async firstSequenceAt(time: Date): Promise<number> {
    const { manager } = this.session;
    const probe = await manager.consumers.add(TRACKING_STREAM, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: time.toISOString(),
      // Gone by itself should its deletion below be lost.
      inactive_threshold: nanos(PROBE_INACTIVE_MS),
    });
    await manager.consumers.delete(TRACKING_STREAM, probe.name).catch(() => undefined);
    return probe.delivered.stream_seq + 1;
  }

  /**
   * How a consumer's deliveries are settled, made once per consumer. A confirmed ack resolves once
   * the server has recorded it, one answer for the consumer's acks of one event-loop turn; an
   * unconfirmed one is queued with every ack of the same turn (see `confirmAcks`).
   */
  private settlingFor(consumerName: string, confirmAck: boolean): DeliverySettling {
    return {
      ack: confirmAck
        ? (message, reply) =>
            // While reconnecting, the client buffers the ack and sends it once connected again. A
            // pulled message's reply subject is where its ack goes (`JsMsg` only types it on the class).
            // (Not an async function: its promise and await would cost promise hooks per message.)
            this.confirmedAcks
              .ack(reply ?? (message as JsMsg & { reply?: string }).reply, consumerName)
              .catch((error: unknown) => {
                throw this.session.translate(error, `ack of ${message.seq}`);
              })
        : (message, reply) => {
            // No request, inbox and timer per message: every ack of one event-loop turn shares one
            // socket write. One lost to a crash comes back after the ack wait (see `confirmAcks`).
            try {
              this.session.assertUsable();
            } catch (error) {
              return Promise.reject(error);
            }
            this.acks.ack(message, reply);
            return SENT;
          },
      nak: async (message, delayMs) => {
        if (delayMs > 0) message.nak(delayMs);
        else message.nak();
      },
      // A server before 2.10.4 does not understand `+TERM <reason>` and silently redelivers instead:
      // send the reason only when the server can take it.
      term: async (message, reason) => message.term(this.serverTakesTermReason() ? reason : undefined),
    };
  }

  private serverTakesTermReason(): boolean {
    const [major = 0, minor = 0, patch = 0] = (this.session.connection.info?.version ?? '0.0.0')
      .split(/[.-]/)
      .map((part) => Number.parseInt(part, 10) || 0);
    return major > 2 || (major === 2 && (minor > 10 || (minor === 10 && patch >= 4)));
  }
}

function assertConsumeOptions(options: ConsumeOptions): void {
  if (options.sourceId !== undefined) assertSubjectToken('sourceId', options.sourceId);
  assertPositiveInteger('ackWaitMs', options.ackWaitMs);
  assertPositiveInteger('maxInFlight', options.maxInFlight);
  if (options.deliverFrom !== undefined && Number.isNaN(options.deliverFrom.getTime())) {
    throw new TypeError('deliverFrom is an invalid date');
  }
}

function sourceIdOfFilter(filterSubject: string | undefined): string | undefined {
  const tokens = (filterSubject ?? '').split('.');
  return tokens.length === 3 && tokens[2] !== '*' ? tokens[2] : undefined;
}

/** The refusal of nats-server 2.9 and earlier to update a consumer with `opt_start_time`. */
function refusesStartTimeUpdate(error: unknown): boolean {
  return error instanceof Error && /start time can not be updated/i.test(error.message);
}
