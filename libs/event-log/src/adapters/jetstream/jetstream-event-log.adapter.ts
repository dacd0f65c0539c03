import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type MsgRequest,
  type StoredMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  TimeoutError,
  nanos,
  type NatsConnection,
} from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { assertAttempt, assertAttemptKey } from '../../attempt-history.validation';
import { ATTEMPT_STREAM, ATTEMPT_SUBJECT_PREFIX, JetStreamAttemptHistory } from './attempt-history';
import { CoalescedAcks } from './coalesced-acks';
import { PipelinedJetStreamPublisher } from './pipelined-publisher';
import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  DEFAULT_SEEN_ONCE_CAPACITY,
  EventLogUnavailableError,
  MAX_SEEN_ONCE_TTL_MS,
  SeenOnceCapacityError,
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeadLetter,
  type DeadLetterOutcome,
  type Delivery,
  type DeliveryAttempt,
  type DeliveryHandler,
  type EventLog,
  type FailedAttempts,
  type EventLogSettings,
  type LeaseRecord,
  type LeaseValue,
  type ListDeadLettersOptions,
  type MessageToPublish,
  type NewDeadLetter,
  type PublishOutcome,
  type TailHandler,
  type TailOptions,
  type TailSubscription,
} from '../../event-log.port';
import type {
  ProtocolsOutcomeToRecord,
  RecordedProtocolsOutcome,
  RecordProtocolsOutcome,
} from '../../protocols-outcomes.port';
import { JetStreamProtocolsOutcomes } from './jetstream-protocols-outcomes';
import {
  assertConsumerName,
  assertLeaseName,
  assertLeaseWrite,
  assertPositiveInteger,
  assertSeenOnce,
  assertSubjectToken,
  assertTailOptions,
  assertValidMessages,
  assertValidSettings,
} from '../../event-log.validation';
import { RunningHandlers } from '../../running-handlers';
import { startTail } from '../../tail-loop';

export const TRACKING_STREAM = 'TRACKING';
export const DEAD_LETTER_STREAM = 'DEADLETTER';
export const LEASE_STREAM = 'LEASES';
export const SEEN_ONCE_STREAM = 'SEEN_ONCE';
const TRACKING_SUBJECT_PREFIX = 'tracking';
const DEAD_LETTER_SUBJECT_PREFIX = 'deadletter';
const LEASE_SUBJECT_PREFIX = 'lease';
const SEEN_ONCE_SUBJECT_PREFIX = 'seen';
/** JetStream's answer to a publish into a stream at its `max_msgs` with `discard: new`. */
const STREAM_STORE_FAILED = 10077;

export interface JetStreamEventLogOptions extends EventLogSettings {
  /** NATS server URL, or several (comma-separated, as in `NATS_URL`). */
  servers: string | string[];
  /** How long a publish waits for JetStream's acknowledgement before failing as unavailable. Default 2000. */
  publishTimeoutMs?: number;
  /** Timeout of the first connection and of management calls. Default 5000. */
  requestTimeoutMs?: number;
  /** Wait between reconnect attempts (NATS adds jitter). Default 500. */
  reconnectWaitMs?: number;
  /**
   * Replicas of every stream Tributary creates (`num_replicas`, `NATS_STREAM_REPLICAS`): 1 on a single
   * server, 3 or 5 in a JetStream cluster to survive the loss of a server. Existing streams are moved to
   * this number at start. Default 1.
   */
  replicas?: number;
  /** Shown by the server in its connection list. */
  connectionName?: string;
  /**
   * `duplicate_window` of `TRACKING` when it must differ from `dedupeWindowMs`: the short guard
   * (`DEDUPE_GUARD_WINDOW`) when the dedupe index serves the long window (dedupe/deduplicated-event-log.ts).
   */
  trackingDuplicateWindowMs?: number;
}

const DEFAULT_PUBLISH_TIMEOUT_MS = 2000;
const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
const DEFAULT_RECONNECT_WAIT_MS = 500;
const DEFAULT_DEAD_LETTER_PAGE = 100;
/** Messages a tail's ordered consumer keeps buffered ahead of its handler. */
const TAIL_BUFFER = 256;

/** The JSON body of a message on `deadletter.<consumerName>`; the stored time is the dead-letter time. */
interface DeadLetterBody {
  consumerName: string;
  reason: string;
  attempts: { at: string; outcome: string }[];
  message: {
    workspaceId: string;
    sourceId: string;
    messageId: string;
    sequence: number;
    publishedAt: string;
    payload: Record<string, unknown>;
  };
}

/**
 * The event log on NATS JetStream (`NATS_URL` set).
 *
 * - Stream `TRACKING`, subjects `tracking.<workspaceId>.<sourceId>`, `Nats-Msg-Id` = messageId,
 *   `duplicate_window` = dedupe window, `max_age` = retention, file storage.
 * - One durable pull consumer per name, explicit ack, unlimited `max_deliver` (the router decides
 *   when to give up and dead-letters), `max_ack_pending` = maxInFlight.
 * - Stream `DEADLETTER`, subjects `deadletter.<consumerName>`, `Nats-Msg-Id` = `<consumer>:<sequence>`.
 * - Stream `ATTEMPTS`, subjects `attempts.<consumerName>.<sequence>`: failed attempts (`attempt-history.ts`).
 * - Stream `LEASES`, subjects `lease.<name>`, one message kept per subject: a lease is its subject's
 *   last message, its revision that message's sequence, and a write is a publish expecting the
 *   subject's last sequence (JetStream's compare-and-set, as its KV buckets do it).
 * - Stream `SEEN_ONCE`, subjects `seen.<key>`, one message per subject holding its expiry, `max_age`
 *   = `MAX_SEEN_ONCE_TTL_MS`, `max_msgs` = the capacity with `discard: new` (full: refuse, never
 *   evict a live key); recorded by the same compare-and-set.
 *
 * The connection reconnects forever by itself. While it is down, publishes fail at once with
 * `EventLogUnavailableError` instead of being buffered, so the HTTP layer can answer 503 quickly.
 */
export class JetStreamEventLog implements EventLog {
  private connected = true;
  private closed = false;
  private readonly subscriptions = new Map<string, Set<ConsumerSubscription>>();
  private readonly tails = new Set<TailSubscription>();
  private readonly publishTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly publisher: PipelinedJetStreamPublisher;
  private readonly protocolsOutcomes: JetStreamProtocolsOutcomes;
  private readonly attemptHistory: JetStreamAttemptHistory;
  private readonly acks = new CoalescedAcks();

  private constructor(
    private readonly connection: NatsConnection,
    private readonly client: JetStreamClient,
    private readonly manager: JetStreamManager,
    private readonly options: JetStreamEventLogOptions,
  ) {
    this.publishTimeoutMs = options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.publisher = new PipelinedJetStreamPublisher(connection, this.publishTimeoutMs);
    this.protocolsOutcomes = new JetStreamProtocolsOutcomes(client, manager, this.publishTimeoutMs);
    this.attemptHistory = new JetStreamAttemptHistory(client, manager, this.publishTimeoutMs);
    void this.followConnectionStatus();
  }

  /** Connects, then creates or updates both streams. Throws `EventLogUnavailableError` if NATS is down. */
  static async connect(options: JetStreamEventLogOptions): Promise<JetStreamEventLog> {
    assertValidSettings(options);
    if (options.replicas !== undefined) assertPositiveInteger('replicas', options.replicas);
    const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    let connection: NatsConnection;
    try {
      connection = await connect({
        servers:
          typeof options.servers === 'string'
            ? options.servers.split(',').map((url) => url.trim())
            : options.servers,
        name: options.connectionName ?? 'tributary-event-log',
        maxReconnectAttempts: -1,
        reconnectTimeWait: options.reconnectWaitMs ?? DEFAULT_RECONNECT_WAIT_MS,
        timeout: requestTimeoutMs,
        // Otherwise every publish captures two stack traces (an Error for async context and one for its
        // timeout) just in case it fails, a large share of the tracking API's CPU under load (BENCHMARKS.md).
        // Our errors are translated to EventLogUnavailableError with the cause kept, so nothing relies on them.
        noAsyncTraces: true,
      });
    } catch (error) {
      throw new EventLogUnavailableError(`cannot connect to NATS at ${String(options.servers)}`, {
        cause: error,
      });
    }
    try {
      const manager = await jetstreamManager(connection, { timeout: requestTimeoutMs });
      const log = new JetStreamEventLog(
        connection,
        jetstream(connection, { timeout: requestTimeoutMs }),
        manager,
        options,
      );
      await log.ensureStreams();
      return log;
    } catch (error) {
      await connection.close();
      throw isUnavailability(error)
        ? new EventLogUnavailableError('JetStream is not available', { cause: error })
        : error;
    }
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    assertValidMessages(messages);
    this.assertUsable();
    // Every publish is in flight at once; the batch resolves when each has its PubAck (the durable store ack).
    let subject = '';
    let subjectOf: MessageToPublish | undefined;
    const publishes = messages.map((message) => {
      // A request's messages share one source, so its subject is built once.
      if (subjectOf?.workspaceId !== message.workspaceId || subjectOf.sourceId !== message.sourceId) {
        subject = `${TRACKING_SUBJECT_PREFIX}.${message.workspaceId}.${message.sourceId}`;
        subjectOf = message;
      }
      return { subject, payload: JSON.stringify(message.payload), messageId: message.messageId };
    });
    try {
      const acks = await this.publisher.publishAll(publishes);
      return acks.map((ack, index) => ({
        messageId: messages[index].messageId,
        duplicate: ack.duplicate,
        sequence: ack.sequence,
      }));
    } catch (error) {
      throw this.translate(error, `publish of ${messages.length} messages`);
    }
  }

  async consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    assertConsumerName(consumerName);
    assertConsumeOptions(options);
    this.assertUsable();
    let messages: ConsumerMessages;
    try {
      await this.ensureConsumer(consumerName, options);
      const consumer = await this.client.consumers.get(TRACKING_STREAM, consumerName);
      const handlers = new RunningHandlers(handler, options.onHandlerError, options.ackWaitMs);
      messages = await consumer.consume({
        max_messages: options.maxInFlight,
        // A slow handler tells the server it is still working, so its message is not redelivered
        // meanwhile: the ack wait can then be short, and a dead router's messages come back quickly.
        callback: (message) =>
          handlers.start(this.toDelivery(message, options.confirmAcks !== false), () => message.working()),
      });
      const subscription: ConsumerSubscription = {
        stop: async () => {
          this.subscriptions.get(consumerName)?.delete(subscription);
          await messages.close();
          await handlers.whenIdle();
          this.acks.flush();
        },
      };
      const ofConsumer = this.subscriptions.get(consumerName) ?? new Set<ConsumerSubscription>();
      ofConsumer.add(subscription);
      this.subscriptions.set(consumerName, ofConsumer);
      return subscription;
    } catch (error) {
      throw this.translate(error, `consumer ${consumerName}`);
    }
  }

  /**
   * An ordered consumer: ephemeral, flow-controlled, recreated by the client after a gap, and removed
   * by the server once unused, so a tail leaves nothing durable behind. "Now" is the stream's last
   * sequence when the tail starts, so a message stored after `tail` resolved is never missed.
   */
  async tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    assertTailOptions(options);
    this.assertUsable();
    let messages: ConsumerMessages;
    try {
      const { state } = await this.manager.streams.info(TRACKING_STREAM);
      const after = options.afterSequence;
      const startSequence = after === undefined || after > state.last_seq ? state.last_seq + 1 : after + 1;
      const consumer = await this.client.consumers.get(TRACKING_STREAM, {
        // One subject as a string: a list needs nats-server 2.10, and Debian ships older servers.
        filter_subjects: trackingFilter(options.sourceId),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: startSequence,
        replay_policy: ReplayPolicy.Instant,
      });
      messages = await consumer.consume({ max_messages: TAIL_BUFFER });
    } catch (error) {
      throw this.translate(error, `tail of source ${options.sourceId}`);
    }
    const subscription = startTail(
      async (deliver, isStopped) => {
        for await (const message of messages) {
          if (isStopped()) return;
          await deliver(this.toTailedMessage(message));
        }
      },
      handler,
      async () => {
        await messages.close();
      },
    );
    this.tails.add(subscription);
    void subscription.ended.then(() => this.tails.delete(subscription));
    return subscription;
  }

  async deleteConsumer(consumerName: string): Promise<boolean> {
    assertConsumerName(consumerName);
    this.assertUsable();
    await Promise.all(
      [...(this.subscriptions.get(consumerName) ?? [])].map((subscription) => subscription.stop()),
    );
    try {
      const deleted = await this.manager.consumers.delete(TRACKING_STREAM, consumerName);
      await this.attemptHistory.forgetConsumer(consumerName);
      return deleted;
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return false;
      throw this.translate(error, `delete of consumer ${consumerName}`);
    }
  }

  async consumerLag(consumerName: string): Promise<ConsumerLag> {
    assertConsumerName(consumerName);
    this.assertUsable();
    try {
      const info = await this.manager.consumers.info(TRACKING_STREAM, consumerName);
      return { undelivered: info.num_pending, unacknowledged: info.num_ack_pending };
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.ConsumerNotFound))
        throw new ConsumerNotFoundError(consumerName);
      throw this.translate(error, `lag of consumer ${consumerName}`);
    }
  }

  async deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    assertConsumerName(letter.consumerName);
    this.assertUsable();
    const { message } = letter;
    const body: DeadLetterBody = {
      consumerName: letter.consumerName,
      reason: letter.reason,
      attempts: letter.attempts.map((attempt) => ({
        at: attempt.at.toISOString(),
        outcome: attempt.outcome,
      })),
      message: { ...message, publishedAt: message.publishedAt.toISOString() },
    };
    try {
      const ack = await this.client.publish(
        `${DEAD_LETTER_SUBJECT_PREFIX}.${letter.consumerName}`,
        JSON.stringify(body),
        {
          // A router that crashes between dead-lettering and acking will dead-letter again: dedupe it.
          msgID: `${letter.consumerName}:${message.sequence}`,
          timeout: this.publishTimeoutMs,
        },
      );
      return { deadLetterSequence: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      throw this.translate(error, `dead letter of ${message.messageId}`);
    }
  }

  async listDeadLetters(options: ListDeadLettersOptions = {}): Promise<DeadLetter[]> {
    const limit = options.limit ?? DEFAULT_DEAD_LETTER_PAGE;
    assertPositiveInteger('limit', limit);
    if (options.consumerName !== undefined) assertConsumerName(options.consumerName);
    this.assertUsable();
    const subject = `${DEAD_LETTER_SUBJECT_PREFIX}.${options.consumerName ?? '>'}`;
    const letters: DeadLetter[] = [];
    let nextSequence = (options.afterSequence ?? 0) + 1;
    try {
      // One "next message on this subject from this sequence" request per letter: simple, and dead
      // letters are read by operators, not on a hot path.
      while (letters.length < limit) {
        const request = { seq: nextSequence, next_by_subj: subject } as unknown as MsgRequest;
        const stored = await this.manager.streams.getMessage(DEAD_LETTER_STREAM, request);
        if (!stored) break;
        letters.push(toDeadLetter(stored));
        nextSequence = stored.seq + 1;
      }
    } catch (error) {
      throw this.translate(error, 'dead-letter listing');
    }
    return letters;
  }

  async readDeadLetter(deadLetterSequence: number): Promise<DeadLetter | null> {
    assertPositiveInteger('deadLetterSequence', deadLetterSequence);
    this.assertUsable();
    try {
      const stored = await this.manager.streams.getMessage(DEAD_LETTER_STREAM, { seq: deadLetterSequence });
      return stored ? toDeadLetter(stored) : null;
    } catch (error) {
      throw this.translate(error, `dead letter ${deadLetterSequence}`);
    }
  }

  async readLease(name: string): Promise<LeaseRecord | null> {
    assertLeaseName(name);
    this.assertUsable();
    try {
      const stored = await this.manager.streams.getMessage(LEASE_STREAM, {
        last_by_subj: `${LEASE_SUBJECT_PREFIX}.${name}`,
      });
      if (!stored) return null;
      const value = stored.json<LeaseValue>();
      return { holder: value.holder, data: value.data, revision: stored.seq };
    } catch (error) {
      throw this.translate(error, `read of lease ${name}`);
    }
  }

  async writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    assertLeaseName(name);
    assertLeaseWrite(value, expectedRevision);
    this.assertUsable();
    try {
      const ack = await this.client.publish(
        `${LEASE_SUBJECT_PREFIX}.${name}`,
        JSON.stringify({ holder: value.holder, data: value.data }),
        { expect: { lastSubjectSequence: expectedRevision }, timeout: this.publishTimeoutMs },
      );
      return ack.seq;
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.StreamWrongLastSequence)) return null;
      throw this.translate(error, `write of lease ${name}`);
    }
  }

  async markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    assertSeenOnce(key, ttlMs);
    this.assertUsable();
    const subject = `${SEEN_ONCE_SUBJECT_PREFIX}.${key}`;
    // Expected last sequence 0: the key was never recorded (or its record aged out of the stream).
    let expectedSequence = 0;
    // Each turn either records the key or learns why not; a record that ages out between the two
    // calls sends it round once more, so three turns are plenty.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.client.publish(subject, JSON.stringify({ expiresAt: Date.now() + ttlMs }), {
          expect: { lastSubjectSequence: expectedSequence },
          timeout: this.publishTimeoutMs,
        });
        return true;
      } catch (error) {
        if (isApiError(error, STREAM_STORE_FAILED)) {
          throw new SeenOnceCapacityError(this.options.seenOnceCapacity ?? DEFAULT_SEEN_ONCE_CAPACITY);
        }
        if (!isApiError(error, JetStreamApiCodes.StreamWrongLastSequence)) {
          throw this.translate(error, `seen-once record of ${key}`);
        }
        // Another record exists. Written by someone else since we last looked: it is theirs.
        if (expectedSequence !== 0) return false;
      }
      let stored: StoredMsg | null;
      try {
        stored = await this.manager.streams.getMessage(SEEN_ONCE_STREAM, { last_by_subj: subject });
      } catch (error) {
        throw this.translate(error, `seen-once read of ${key}`);
      }
      if (!stored) continue;
      const { expiresAt } = stored.json<{ expiresAt: number }>();
      if (expiresAt > Date.now()) return false;
      // Expired but not yet removed by max_age: replace it, unless another writer does first.
      expectedSequence = stored.seq;
    }
    return false;
  }

  async recordProtocolsOutcomes(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]> {
    this.assertUsable();
    try {
      return await this.protocolsOutcomes.record(outcomes);
    } catch (error) {
      throw this.translate(error, `record of ${outcomes.length} Protocols outcomes`);
    }
  }

  async readProtocolsOutcomes(sourceId: string, since: Date): Promise<RecordedProtocolsOutcome[]> {
    this.assertUsable();
    try {
      return await this.protocolsOutcomes.read(sourceId, since);
    } catch (error) {
      throw this.translate(error, `read of the Protocols outcomes of ${sourceId}`);
    }
  }

  async recordFailedAttempt(
    consumerName: string,
    sequence: number,
    attempt: DeliveryAttempt,
  ): Promise<FailedAttempts> {
    assertAttemptKey(consumerName, sequence);
    assertAttempt(attempt);
    this.assertUsable();
    try {
      return await this.attemptHistory.record(consumerName, sequence, attempt);
    } catch (error) {
      throw this.translate(error, `record of an attempt at ${sequence} for ${consumerName}`);
    }
  }

  async readFailedAttempts(consumerName: string, sequence: number): Promise<FailedAttempts | null> {
    assertAttemptKey(consumerName, sequence);
    this.assertUsable();
    try {
      return await this.attemptHistory.read(consumerName, sequence);
    } catch (error) {
      throw this.translate(error, `read of the attempts at ${sequence} for ${consumerName}`);
    }
  }

  async forgetFailedAttempts(consumerName: string, sequence: number): Promise<void> {
    assertAttemptKey(consumerName, sequence);
    this.assertUsable();
    try {
      await this.attemptHistory.forget(consumerName, sequence);
    } catch (error) {
      throw this.translate(error, `purge of the attempts at ${sequence} for ${consumerName}`);
    }
  }

  async ping(): Promise<boolean> {
    if (this.closed || !this.connected) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.requestTimeoutMs);
    });
    try {
      return await Promise.race([this.connection.rtt().then(() => true), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.subscriptions.values()].flatMap((ofConsumer) => [...ofConsumer]);
    await Promise.allSettled(all.map((subscription) => subscription.stop()));
    await Promise.allSettled([...this.tails].map((subscription) => subscription.stop()));
    this.acks.flush();
    this.publisher.close();
    await this.connection.close();
  }

  // ------------------------------------------------------------------------------------------------

  private async followConnectionStatus(): Promise<void> {
    for await (const status of this.connection.status()) {
      if (status.type === 'disconnect') {
        this.connected = false;
        this.publisher.failPending('the NATS connection dropped before JetStream acknowledged the publish');
      } else if (status.type === 'reconnect') this.connected = true;
    }
  }

  private serverTakesTermReason(): boolean {
    const [major = 0, minor = 0, patch = 0] = (this.connection.info?.version ?? '0.0.0')
      .split(/[.-]/)
      .map((part) => Number.parseInt(part, 10) || 0);
    return major > 2 || (major === 2 && (minor > 10 || (minor === 10 && patch >= 4)));
  }

  private assertUsable(): void {
    if (this.closed) throw new EventLogUnavailableError('the JetStream event log is closed');
    if (!this.connected) throw new EventLogUnavailableError('not connected to NATS (reconnecting)');
  }

  private translate(error: unknown, what: string): unknown {
    if (error instanceof EventLogUnavailableError || error instanceof ConsumerMismatchError) return error;
    if (this.closed || isUnavailability(error)) {
      return new EventLogUnavailableError(`${what} failed: JetStream unavailable`, { cause: error });
    }
    return error;
  }

  private async ensureStreams(): Promise<void> {
    const { dedupeWindowMs, retentionMs } = this.options;
    const replicas = this.options.replicas ?? 1;
    // A single server refuses to create a replicated stream but accepts raising an existing one, and
    // then keeps one copy anyway: refuse here, so the setting never gives a false sense of safety.
    if (replicas > 1 && !this.connection.info?.cluster) {
      throw new Error(
        `NATS_STREAM_REPLICAS is ${replicas}, but the NATS server at ${this.connection.getServer()} is not ` +
          'part of a JetStream cluster: a single server keeps one replica (use 1, or run a cluster)',
      );
    }
    const common: Partial<StreamConfig> = {
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      num_replicas: replicas,
      max_age: nanos(retentionMs),
      duplicate_window: nanos(dedupeWindowMs),
    };
    await this.ensureStream({
      ...common,
      name: TRACKING_STREAM,
      subjects: [`${TRACKING_SUBJECT_PREFIX}.>`],
      duplicate_window: nanos(this.options.trackingDuplicateWindowMs ?? dedupeWindowMs),
    });
    await this.ensureStream({
      ...common,
      name: DEAD_LETTER_STREAM,
      subjects: [`${DEAD_LETTER_SUBJECT_PREFIX}.>`],
    });
    // Only a lease's last value matters; one not written for the retention is an abandoned job's.
    await this.ensureStream({
      ...common,
      name: LEASE_STREAM,
      subjects: [`${LEASE_SUBJECT_PREFIX}.>`],
      max_msgs_per_subject: 1,
    });
    // Short-lived one-time keys: their own age limit (not the retention), a hard count limit, and
    // refusal rather than eviction when full.
    await this.ensureStream({
      ...common,
      name: SEEN_ONCE_STREAM,
      subjects: [`${SEEN_ONCE_SUBJECT_PREFIX}.>`],
      max_msgs_per_subject: 1,
      max_age: nanos(MAX_SEEN_ONCE_TTL_MS),
      duplicate_window: nanos(Math.min(dedupeWindowMs, 60_000)),
      max_msgs: this.options.seenOnceCapacity ?? DEFAULT_SEEN_ONCE_CAPACITY,
      discard: DiscardPolicy.New,
    });
    await this.ensureStream(JetStreamProtocolsOutcomes.streamConfig(common, dedupeWindowMs));
    // Only a message's whole history (its subject's last message) matters, as with leases.
    await this.ensureStream({
      ...common,
      name: ATTEMPT_STREAM,
      subjects: [`${ATTEMPT_SUBJECT_PREFIX}.>`],
      max_msgs_per_subject: 1,
    });
  }

  /** Creates the stream, or updates its retention, dedupe window and replicas when the settings changed. */
  private async ensureStream(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    try {
      const info = await this.manager.streams.info(config.name);
      if (
        info.config.max_age !== config.max_age ||
        info.config.duplicate_window !== config.duplicate_window ||
        info.config.num_replicas !== config.num_replicas ||
        (config.max_msgs !== undefined && info.config.max_msgs !== config.max_msgs)
      ) {
        await this.manager.streams.update(config.name, {
          ...info.config,
          max_age: config.max_age,
          duplicate_window: config.duplicate_window,
          num_replicas: config.num_replicas,
          ...(config.max_msgs !== undefined && { max_msgs: config.max_msgs }),
        });
      }
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
      await this.manager.streams.add(config);
    }
    await this.untilStreamHasLeader(config);
  }

  /**
   * A replicated stream just created or resized elects a leader first (a few hundred ms); until then
   * every publish fails. Waiting here keeps that out of the first requests. Not fatal when it takes
   * longer: callers already treat a leaderless moment as the log being unavailable.
   */
  private async untilStreamHasLeader(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    if ((config.num_replicas ?? 1) <= 1) return;
    const deadline = Date.now() + this.requestTimeoutMs;
    while (Date.now() < deadline) {
      const info = await this.manager.streams.info(config.name).catch(() => undefined);
      if (info?.cluster?.leader) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async ensureConsumer(consumerName: string, options: ConsumeOptions): Promise<void> {
    const filterSubject = trackingFilter(options.sourceId);
    const ackWait = nanos(options.ackWaitMs);
    try {
      const info = await this.manager.consumers.info(TRACKING_STREAM, consumerName);
      if ((info.config.filter_subject ?? '') !== filterSubject) {
        throw new ConsumerMismatchError(
          consumerName,
          sourceIdOfFilter(info.config.filter_subject),
          options.sourceId,
        );
      }
      if (info.config.ack_wait !== ackWait || info.config.max_ack_pending !== options.maxInFlight) {
        await this.manager.consumers.update(TRACKING_STREAM, consumerName, {
          ack_wait: ackWait,
          max_ack_pending: options.maxInFlight,
        });
      }
      return;
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    }
    await this.manager.consumers.add(TRACKING_STREAM, {
      durable_name: consumerName,
      filter_subject: filterSubject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: ackWait,
      max_ack_pending: options.maxInFlight,
      max_deliver: -1,
      replay_policy: ReplayPolicy.Instant,
      ...(options.deliverFrom
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.deliverFrom.toISOString() }
        : { deliver_policy: DeliverPolicy.New }),
    });
  }

  private toTailedMessage(message: JsMsg) {
    const [, workspaceId, sourceId] = message.subject.split('.');
    return {
      workspaceId,
      sourceId,
      messageId: message.headers?.get('Nats-Msg-Id') ?? '',
      sequence: message.seq,
      publishedAt: message.time,
      payload: message.json<Record<string, unknown>>(),
    };
  }

  private toDelivery(message: JsMsg, confirmAck: boolean): Delivery {
    // Subject tokens were validated at publish: exactly `tracking.<workspaceId>.<sourceId>`.
    const [, workspaceId, sourceId] = message.subject.split('.');
    return {
      workspaceId,
      sourceId,
      messageId: message.headers?.get('Nats-Msg-Id') ?? '',
      payload: message.json<Record<string, unknown>>(),
      sequence: message.seq,
      publishedAt: message.time,
      deliveryCount: message.info.deliveryCount,
      ack: confirmAck
        ? async () => {
            // ackAck waits for the server to confirm, so a resolved ack is a recorded ack.
            try {
              await message.ackAck({ timeout: this.publishTimeoutMs });
            } catch (error) {
              throw this.translate(error, `ack of ${message.seq}`);
            }
          }
        : async () => {
            // No request, inbox and timer per message: every ack of one event-loop turn shares one
            // socket write. One lost to a crash comes back after the ack wait (see `confirmAcks`).
            this.assertUsable();
            this.acks.ack(message);
          },
      nak: async (delayMs = 0) => {
        if (delayMs > 0) message.nak(delayMs);
        else message.nak();
      },
      // A server before 2.10.4 does not understand `+TERM <reason>` and silently redelivers instead:
      // send the reason only when the server can take it.
      term: async (reason: string) => message.term(this.serverTakesTermReason() ? reason : undefined),
    };
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

function trackingFilter(sourceId: string | undefined): string {
  return sourceId === undefined ? `${TRACKING_SUBJECT_PREFIX}.>` : `${TRACKING_SUBJECT_PREFIX}.*.${sourceId}`;
}

function sourceIdOfFilter(filterSubject: string | undefined): string | undefined {
  const tokens = (filterSubject ?? '').split('.');
  return tokens.length === 3 && tokens[2] !== '*' ? tokens[2] : undefined;
}

function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}

/** Errors that mean "the log cannot be reached right now", looking through `cause` chains. */
function isUnavailability(error: unknown): boolean {
  for (
    let current = error;
    current instanceof Error;
    current = (current as Error & { cause?: unknown }).cause
  ) {
    if (
      current instanceof TimeoutError ||
      current instanceof NoRespondersError ||
      current instanceof ClosedConnectionError ||
      current instanceof DrainingConnectionError ||
      current instanceof ConnectionError ||
      (current instanceof JetStreamApiError && current.status === 503)
    ) {
      return true;
    }
  }
  return false;
}

function toDeadLetter(stored: StoredMsg): DeadLetter {
  const body = stored.json<DeadLetterBody>();
  return {
    deadLetterSequence: stored.seq,
    deadLetteredAt: stored.time,
    consumerName: body.consumerName,
    reason: body.reason,
    attempts: body.attempts.map((attempt) => ({ at: new Date(attempt.at), outcome: attempt.outcome })),
    message: { ...body.message, publishedAt: new Date(body.message.publishedAt) },
  };
}
