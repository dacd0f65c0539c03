import { assertAttempt, assertAttemptKey, assertStartedAttempt } from '../../attempt-history.validation';
import {
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeadLetter,
  type DeadLetterOutcome,
  type DeliveryAttempt,
  type DeliveryHandler,
  type ErasedMessages,
  type EventLog,
  type FailedAttempts,
  type StartedAttempt,
  type LeaseRecord,
  type LeaseValue,
  type ListDeadLettersOptions,
  type MessagesToErase,
  type MessageToPublish,
  type NewDeadLetter,
  type PublishOutcome,
  type TailHandler,
  type TailOptions,
  type TailSubscription,
} from '../../event-log.port';
import {
  assertMessagesToErase,
  assertPositiveInteger,
  assertValidSettings,
} from '../../event-log.validation';
import type {
  ProtocolsOutcomeToRecord,
  RecordedProtocolsOutcome,
  RecordProtocolsOutcome,
} from '../../ports/protocols-outcomes.port';
import type {
  FunctionLogEntry,
  FunctionLogPage,
  ListFunctionLogsOptions,
} from '../../ports/function-logs.port';
import { JetStreamAttemptHistory } from './attempt-history';
import { JetStreamConsumers } from './jetstream-consumers';
import { JetStreamDeadLetters } from './jetstream-dead-letters';
import { JetStreamErasure } from './jetstream-erasure';
import { JetStreamFunctionLogs } from './jetstream-function-logs';
import { JetStreamLeases } from './jetstream-leases';
import { JetStreamProtocolsOutcomes } from './jetstream-protocols-outcomes';
import { JetStreamTrackingPublisher } from './jetstream-publishing';
import { JetStreamSeenOnce } from './jetstream-seen-once';
import { JetStreamSession } from './jetstream-session';
import { ensureStreams } from './jetstream-streams';
import { JetStreamTails } from './jetstream-tails';
import type { PublishPath } from './pipelined-publisher';

// The stream names belong to this module's exports: index.ts (and through it the dedupe index's id feed) and the tests read them here.
export { DEAD_LETTER_STREAM, LEASE_STREAM, SEEN_ONCE_STREAM, TRACKING_STREAM } from './jetstream-streams';
import type { JetStreamEventLogOptions } from './jetstream-options';
export type { JetStreamEventLogOptions } from './jetstream-options';
export { FUNCTION_LOG_STREAM } from './jetstream-function-logs';

/**
 * The event log on NATS JetStream (`NATS_URL` set): one connection shared by the parts below, each
 * beside this file.
 *
 * - Streams and their settings (`jetstream-streams.ts`): `TRACKING`, subjects
 *   `tracking.<workspaceId>.<sourceId>`, `duplicate_window` = dedupe window, `max_age` = retention,
 *   file storage; and the streams of the other parts.
 * - Publishing (`jetstream-publishing.ts`, `pipelined-publisher.ts`): `Nats-Msg-Id` = messageId.
 * - Durable consumers and their deliveries (`jetstream-consumers.ts`); tails (`jetstream-tails.ts`).
 * - Dead letters (`jetstream-dead-letters.ts`), failed attempts (`attempt-history.ts`), leases
 *   (`jetstream-leases.ts`), one-time keys (`jetstream-seen-once.ts`), Protocols outcomes
 *   (`jetstream-protocols-outcomes.ts`), functions' logs (`jetstream-function-logs.ts`).
 *
 * The connection reconnects forever by itself. While it is down, publishes fail at once with
 * `EventLogUnavailableError` instead of being buffered, so the HTTP layer can answer 503 quickly.
 */
export class JetStreamEventLog implements EventLog {
  private readonly publisher: JetStreamTrackingPublisher;
  private readonly consumers: JetStreamConsumers;
  private readonly tails: JetStreamTails;
  private readonly deadLetters: JetStreamDeadLetters;
  private readonly leases: JetStreamLeases;
  private readonly seenOnce: JetStreamSeenOnce;
  private readonly protocolsOutcomes: JetStreamProtocolsOutcomes;
  private readonly functionLogs: JetStreamFunctionLogs;
  private readonly attemptHistory: JetStreamAttemptHistory;
  private readonly erasure: JetStreamErasure;

  private constructor(
    private readonly session: JetStreamSession,
    options: JetStreamEventLogOptions,
  ) {
    const { client, manager, publishTimeoutMs } = session;
    this.publisher = new JetStreamTrackingPublisher(session);
    this.protocolsOutcomes = new JetStreamProtocolsOutcomes(client, manager, publishTimeoutMs);
    this.functionLogs = new JetStreamFunctionLogs(session);
    this.attemptHistory = new JetStreamAttemptHistory(session);
    this.consumers = new JetStreamConsumers(session, this.attemptHistory, options.notice);
    this.tails = new JetStreamTails(session);
    this.deadLetters = new JetStreamDeadLetters(session);
    this.leases = new JetStreamLeases(session);
    this.seenOnce = new JetStreamSeenOnce(session, options.seenOnceCapacity);
    this.erasure = new JetStreamErasure(session);
    void this.followConnectionStatus();
  }

  /** Connects, then creates or updates every stream. Throws `EventLogUnavailableError` if NATS is down. */
  static async connect(options: JetStreamEventLogOptions): Promise<JetStreamEventLog> {
    assertValidSettings(options);
    if (options.replicas !== undefined) assertPositiveInteger('replicas', options.replicas);
    if (
      options.pullExpiresMs !== undefined &&
      !(Number.isInteger(options.pullExpiresMs) && options.pullExpiresMs >= 1000)
    ) {
      throw new TypeError(`pullExpiresMs must be an integer of at least 1000, got ${options.pullExpiresMs}`);
    }
    const session = await JetStreamSession.open(options);
    try {
      const log = new JetStreamEventLog(session, options);
      await ensureStreams(session, options);
      return log;
    } catch (error) {
      await session.connection.close();
      throw JetStreamSession.unavailableAtStart(error);
    }
  }

  /** How tracking messages reach the server: `frames` unless the NATS client changed under us. */
  get publishPath(): PublishPath {
    return this.publisher.path;
  }

  publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    return this.publisher.publishBatch(messages);
  }

  consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    return this.consumers.consume(consumerName, options, handler);
  }

  tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    return this.tails.tail(options, handler);
  }

  deleteConsumer(consumerName: string): Promise<boolean> {
    return this.consumers.deleteConsumer(consumerName);
  }

  consumerLag(consumerName: string): Promise<ConsumerLag> {
    return this.consumers.consumerLag(consumerName);
  }

  deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    return this.deadLetters.deadLetter(letter);
  }

  listDeadLetters(options: ListDeadLettersOptions = {}): Promise<DeadLetter[]> {
    return this.deadLetters.listDeadLetters(options);
  }

  readLease(name: string): Promise<LeaseRecord | null> {
    return this.leases.readLease(name);
  }

  writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    return this.leases.writeLease(name, value, expectedRevision);
  }

  markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.seenOnce.markSeenOnce(key, ttlMs);
  }

  recordProtocolsOutcomes(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]> {
    return this.session.guard(`record of ${outcomes.length} Protocols outcomes`, () =>
      this.protocolsOutcomes.record(outcomes),
    );
  }

  readProtocolsOutcomes(sourceId: string, since: Date, limit?: number): Promise<RecordedProtocolsOutcome[]> {
    return this.session.guard(`read of the Protocols outcomes of ${sourceId}`, () =>
      this.protocolsOutcomes.read(sourceId, since, limit),
    );
  }

  appendFunctionLogs(entries: FunctionLogEntry[]): Promise<void> {
    return this.session.guard(`append of ${entries.length} function log entries`, () =>
      this.functionLogs.append(entries),
    );
  }

  listFunctionLogs(
    workspaceId: string,
    functionId: string,
    options: ListFunctionLogsOptions,
  ): Promise<FunctionLogPage> {
    return this.session.guard(`read of the logs of function ${functionId}`, () =>
      this.functionLogs.list(workspaceId, functionId, options),
    );
  }

  eraseFunctionLogs(workspaceId: string, functionId: string): Promise<void> {
    return this.session.guard(`erase of the logs of function ${functionId}`, () =>
      this.functionLogs.erase(workspaceId, functionId),
    );
  }

  async recordFailedAttempt(
    consumerName: string,
    sequence: number,
    attempt: DeliveryAttempt,
  ): Promise<FailedAttempts> {
    assertAttemptKey(consumerName, sequence);
    assertAttempt(attempt);
    return this.session.guard(`record of an attempt at ${sequence} for ${consumerName}`, () =>
      this.attemptHistory.record(consumerName, sequence, attempt),
    );
  }

  async recordAttemptStarted(
    consumerName: string,
    sequence: number,
    started: StartedAttempt,
  ): Promise<FailedAttempts> {
    assertAttemptKey(consumerName, sequence);
    assertStartedAttempt(started);
    return this.session.guard(`record of an attempt started at ${sequence} for ${consumerName}`, () =>
      this.attemptHistory.recordStarted(consumerName, sequence, started),
    );
  }

  /** Tried again while `ATTEMPTS` elects a leader (see `JetStreamAttemptHistory#read`). */
  async readFailedAttempts(consumerName: string, sequence: number): Promise<FailedAttempts | null> {
    assertAttemptKey(consumerName, sequence);
    return this.attemptHistory.read(consumerName, sequence);
  }

  async eraseMessages(request: MessagesToErase): Promise<ErasedMessages> {
    assertMessagesToErase(request);
    return this.session.guard('erasure of regulated messages', () => this.erasure.erase(request));
  }

  async forgetFailedAttempts(consumerName: string, sequence: number): Promise<void> {
    assertAttemptKey(consumerName, sequence);
    return this.session.guard(`purge of the attempts at ${sequence} for ${consumerName}`, () =>
      this.attemptHistory.forget(consumerName, sequence),
    );
  }

  async ping(): Promise<boolean> {
    const { session } = this;
    if (session.closed || !session.connected) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), session.requestTimeoutMs);
    });
    try {
      return await Promise.race([session.connection.rtt().then(() => true), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.session.closed) return;
    this.session.closed = true;
    await this.consumers.stopAll();
    await this.tails.stopAll();
    this.consumers.flushAcks();
    this.publisher.close();
    await this.session.connection.close();
  }

  private async followConnectionStatus(): Promise<void> {
    for await (const status of this.session.connection.status()) {
      if (status.type === 'disconnect') {
        this.session.connected = false;
        this.publisher.failPending('the NATS connection dropped before JetStream acknowledged the publish');
      } else if (status.type === 'reconnect') this.session.connected = true;
    }
  }
}
