import { Database } from '@tributary/sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DEFAULT_SEEN_ONCE_CAPACITY,
  EventLogUnavailableError,
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeadLetter,
  type DeadLetterOutcome,
  type DeliveryAttempt,
  type DeliveryHandler,
  type ErasedMessages,
  type EventLog,
  type EventLogSettings,
  type FailedAttempts,
  type LeaseRecord,
  type LeaseValue,
  type ListDeadLettersOptions,
  type MessagesToErase,
  type MessageToPublish,
  type NewDeadLetter,
  type PublishOutcome,
  type StartedAttempt,
  type TailHandler,
  type TailOptions,
  type TailSubscription,
} from '../../event-log.port';
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
import { assertMessagesToErase, assertValidSettings } from '../../event-log.validation';
import { assertAttempt, assertAttemptKey, assertStartedAttempt } from '../../attempt-history.validation';
import { SqliteAttemptHistory } from './sqlite-attempt-history';
import { SqliteConsumers } from './sqlite-consumers';
import { SqliteDeadLetters } from './sqlite-dead-letters';
import { SqliteErasure } from './sqlite-erasure';
import { SQLITE_EVENT_LOG_SCHEMA } from './sqlite-event-log.schema';
import { SqliteFunctionLogs } from './sqlite-function-logs';
import { SqliteLeases } from './sqlite-leases';
import { SqliteProtocolsOutcomes } from './sqlite-protocols-outcomes';
import { SqliteTrackingPublisher } from './sqlite-publishing';
import { SqliteSeenOnce } from './sqlite-seen-once';
import { SqliteTails } from './sqlite-tails';
import { SqliteWriteBatcher } from './sqlite-write.batcher';

export interface SqliteEventLogOptions extends EventLogSettings {
  /** Database file; created with its directory when missing. */
  file: string;
  /** How often old messages and expired dedupe ids are deleted. Default: retention / 10, within 50 ms..60 s. */
  maintenanceIntervalMs?: number;
  /** How often an idle consumer looks for messages written by another process on the same file. */
  pollIntervalMs?: number;
}

const DEFAULT_POLL_INTERVAL_MS = 1000;

/**
 * The embedded event log: the same guarantees as the JetStream adapter, on one machine. One file
 * and one write batcher shared by the parts below, each beside this file: publishing
 * (`sqlite-publishing.ts`), durable consumers (`sqlite-consumers.ts`, `sqlite-consumer.runner.ts`),
 * tails (`sqlite-tails.ts`), dead letters (`sqlite-dead-letters.ts`), failed attempts
 * (`sqlite-attempt-history.ts`), leases (`sqlite-leases.ts`), one-time keys (`sqlite-seen-once.ts`),
 * Protocols outcomes, functions' logs and the erasure.
 *
 * Durability: WAL with `synchronous = FULL`, so a commit is fsynced before `publishBatch` resolves and
 * survives a power loss, not only a process crash (NORMAL in WAL mode may lose the last commits on
 * power loss, which would break "200 only after durable"). Micro-batching makes the fsync cost per
 * commit, not per message.
 */
export class SqliteEventLog implements EventLog {
  private readonly database: Database;
  private readonly writes: SqliteWriteBatcher;
  private readonly maintenanceTimer: NodeJS.Timeout;
  private readonly publisher: SqliteTrackingPublisher;
  private readonly consumers: SqliteConsumers;
  private readonly tails: SqliteTails;
  private readonly deadLetters: SqliteDeadLetters;
  private readonly leases: SqliteLeases;
  private readonly seenOnce: SqliteSeenOnce;
  private readonly protocolsOutcomes: SqliteProtocolsOutcomes;
  private readonly functionLogs: SqliteFunctionLogs;
  private readonly attemptHistory: SqliteAttemptHistory;
  private readonly erasure: SqliteErasure;
  private closed = false;
  private storedMessagesSinceLastCommit = false;

  private constructor(private readonly options: SqliteEventLogOptions) {
    mkdirSync(dirname(options.file), { recursive: true });
    this.database = new Database(options.file);
    this.database.pragma('journal_mode = WAL');
    this.database.pragma('synchronous = FULL');
    // Another process on the same file (a separate router) may hold the write lock briefly.
    this.database.pragma('busy_timeout = 5000');
    this.database.exec(SQLITE_EVENT_LOG_SCHEMA);
    this.writes = new SqliteWriteBatcher(this.database, () => {
      // Only new messages concern every consumer; a runner wakes itself after its own claims and
      // settlements. Waking all on every commit would loop: a claim is a commit too.
      if (!this.storedMessagesSinceLastCommit) return;
      this.storedMessagesSinceLastCommit = false;
      this.consumers.wakeAll();
      this.tails.wakeAll();
    });
    const enqueue = <T>(work: (now: number) => T) => this.writes.enqueue(work);
    const isClosed = () => this.closed;
    const assertOpen = () => this.assertOpen();
    const pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.attemptHistory = new SqliteAttemptHistory(this.database);
    this.publisher = new SqliteTrackingPublisher(this.database, enqueue, options.dedupeWindowMs, () => {
      this.storedMessagesSinceLastCommit = true;
    });
    this.consumers = new SqliteConsumers(
      this.database,
      enqueue,
      this.attemptHistory,
      pollIntervalMs,
      isClosed,
      assertOpen,
    );
    this.tails = new SqliteTails(this.database, pollIntervalMs, isClosed, assertOpen);
    this.deadLetters = new SqliteDeadLetters(this.database, enqueue, assertOpen);
    this.leases = new SqliteLeases(this.database, enqueue, assertOpen);
    // The capacity is read per call from the options, which a test may lower while the log runs.
    this.seenOnce = new SqliteSeenOnce(
      this.database,
      enqueue,
      () => this.options.seenOnceCapacity ?? DEFAULT_SEEN_ONCE_CAPACITY,
      assertOpen,
    );
    this.protocolsOutcomes = new SqliteProtocolsOutcomes(this.database, enqueue, options.dedupeWindowMs);
    this.functionLogs = new SqliteFunctionLogs(this.database, enqueue);
    // After the outcomes' table exists: the erasure's statements read it too.
    this.erasure = new SqliteErasure(this.database);
    const maintenanceIntervalMs =
      options.maintenanceIntervalMs ?? Math.min(60_000, Math.max(50, Math.floor(options.retentionMs / 10)));
    this.maintenanceTimer = setInterval(
      () => void this.deleteExpired().catch(() => undefined),
      maintenanceIntervalMs,
    );
    this.maintenanceTimer.unref();
  }

  static async open(options: SqliteEventLogOptions): Promise<SqliteEventLog> {
    assertValidSettings(options);
    const log = new SqliteEventLog(options);
    await log.deleteExpired();
    return log;
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    return this.publisher.publishBatch(messages);
  }

  consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    return this.consumers.consume(consumerName, options, handler);
  }

  async tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    return this.tails.tail(options, handler);
  }

  deleteConsumer(consumerName: string): Promise<boolean> {
    return this.consumers.deleteConsumer(consumerName);
  }

  async consumerLag(consumerName: string): Promise<ConsumerLag> {
    return this.consumers.consumerLag(consumerName);
  }

  deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    return this.deadLetters.deadLetter(letter);
  }

  async listDeadLetters(options: ListDeadLettersOptions = {}): Promise<DeadLetter[]> {
    return this.deadLetters.list(options);
  }

  async readLease(name: string): Promise<LeaseRecord | null> {
    return this.leases.read(name);
  }

  writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    return this.leases.write(name, value, expectedRevision);
  }

  markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    return this.seenOnce.markSeenOnce(key, ttlMs);
  }

  async recordProtocolsOutcomes(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]> {
    this.assertOpen();
    return this.protocolsOutcomes.record(outcomes);
  }

  async readProtocolsOutcomes(
    sourceId: string,
    since: Date,
    limit?: number,
  ): Promise<RecordedProtocolsOutcome[]> {
    this.assertOpen();
    return this.protocolsOutcomes.read(sourceId, since, limit);
  }

  async appendFunctionLogs(entries: FunctionLogEntry[]): Promise<void> {
    this.assertOpen();
    return this.functionLogs.append(entries);
  }

  async listFunctionLogs(
    workspaceId: string,
    functionId: string,
    options: ListFunctionLogsOptions,
  ): Promise<FunctionLogPage> {
    this.assertOpen();
    return this.functionLogs.list(workspaceId, functionId, options);
  }

  async eraseFunctionLogs(workspaceId: string, functionId: string): Promise<void> {
    this.assertOpen();
    return this.functionLogs.erase(workspaceId, functionId);
  }

  async recordFailedAttempt(
    consumerName: string,
    sequence: number,
    attempt: DeliveryAttempt,
  ): Promise<FailedAttempts> {
    assertAttemptKey(consumerName, sequence);
    assertAttempt(attempt);
    return this.writes.enqueue(() => this.attemptHistory.record(consumerName, sequence, attempt));
  }

  async recordAttemptStarted(
    consumerName: string,
    sequence: number,
    started: StartedAttempt,
  ): Promise<FailedAttempts> {
    assertAttemptKey(consumerName, sequence);
    assertStartedAttempt(started);
    return this.writes.enqueue(() => this.attemptHistory.recordStarted(consumerName, sequence, started));
  }

  async readFailedAttempts(consumerName: string, sequence: number): Promise<FailedAttempts | null> {
    assertAttemptKey(consumerName, sequence);
    this.assertOpen();
    return this.attemptHistory.read(consumerName, sequence);
  }

  async forgetFailedAttempts(consumerName: string, sequence: number): Promise<void> {
    assertAttemptKey(consumerName, sequence);
    await this.writes.enqueue(() => this.attemptHistory.forget(consumerName, sequence));
  }

  async eraseMessages(request: MessagesToErase): Promise<ErasedMessages> {
    assertMessagesToErase(request);
    this.assertOpen();
    return this.writes.enqueue(() => this.erasure.erase(request));
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      this.database.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.maintenanceTimer);
    await this.consumers.stopAll();
    await this.tails.stopAll();
    this.writes.close();
    this.database.close();
  }

  private deleteExpired(): Promise<void> {
    const { retentionMs } = this.options;
    return this.writes.enqueue((now) => {
      this.publisher.deleteExpired(now - retentionMs, now);
      this.consumers.deleteOrphanPending();
      this.seenOnce.deleteExpired(now);
      this.deadLetters.deleteBefore(now - retentionMs);
      this.protocolsOutcomes.deleteExpired(now);
      this.functionLogs.deleteExpired(now);
      this.attemptHistory.forgetBefore(now - retentionMs);
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new EventLogUnavailableError('the sqlite event log is closed');
  }
}
