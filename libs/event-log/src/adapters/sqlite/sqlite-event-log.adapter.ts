import { Database, type Statement } from '@tributary/sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  DEFAULT_SEEN_ONCE_CAPACITY,
  EventLogUnavailableError,
  SeenOnceCapacityError,
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
  type EventLogSettings,
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
import type {
  ProtocolsOutcomeToRecord,
  RecordedProtocolsOutcome,
  RecordProtocolsOutcome,
} from '../../ports/protocols-outcomes.port';
import type { FunctionLogEntry, FunctionLogPage, ListFunctionLogsOptions } from '../../ports/function-logs.port';
import {
  assertConsumerName,
  assertLeaseName,
  assertLeaseWrite,
  assertMessagesToErase,
  assertPositiveInteger,
  assertSeenOnce,
  assertSubjectToken,
  assertTailOptions,
  assertValidMessages,
  assertValidSettings,
} from '../../event-log.validation';
import { startTail } from '../../tail-loop';
import { assertAttempt, assertAttemptKey, assertStartedAttempt } from '../../attempt-history.validation';
import { SqliteAttemptHistory } from './sqlite-attempt-history';
import { SqliteErasure } from './sqlite-erasure';
import { SqliteConsumerRunner, type SqliteConsumerStore } from './sqlite-consumer.runner';
import {
  SQLITE_EVENT_LOG_SCHEMA,
  type ConsumerRow,
  type DeadLetterRow,
  type DeliverableRow,
  type LeaseRow,
  type MessageRow,
} from './sqlite-event-log.schema';
import { SqliteWriteBatcher } from './sqlite-write.batcher';
import { SqliteProtocolsOutcomes } from './sqlite-protocols-outcomes';
import { SqliteFunctionLogs } from './sqlite-function-logs';

export interface SqliteEventLogOptions extends EventLogSettings {
  /** Database file; created with its directory when missing. */
  file: string;
  /** How often old messages and expired dedupe ids are deleted. Default: retention / 10, within 50 ms..60 s. */
  maintenanceIntervalMs?: number;
  /** How often an idle consumer looks for messages written by another process on the same file. */
  pollIntervalMs?: number;
}

const DEFAULT_POLL_INTERVAL_MS = 1000;
const DEFAULT_DEAD_LETTER_PAGE = 100;
/** Messages a tail reads per query; it reads the next page once the handler took these. */
const TAIL_PAGE = 256;

/**
 * The embedded event log: the same guarantees as the JetStream adapter, on one machine.
 *
 * Durability: WAL with `synchronous = FULL`, so a commit is fsynced before `publishBatch` resolves and
 * survives a power loss, not only a process crash (NORMAL in WAL mode may lose the last commits on
 * power loss, which would break "200 only after durable"). Micro-batching makes the fsync cost per
 * commit, not per message.
 */
export class SqliteEventLog implements EventLog, SqliteConsumerStore {
  private readonly database: Database;
  private readonly writes: SqliteWriteBatcher;
  private readonly runners = new Map<string, SqliteConsumerRunner>();
  /** Running tails, each with the function that wakes it when messages were stored. */
  private readonly tails = new Map<TailSubscription, () => void>();
  private readonly maintenanceTimer: NodeJS.Timeout;
  private readonly pollIntervalMs: number;
  private readonly statements: ReturnType<typeof prepareStatements>;
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
    this.statements = prepareStatements(this.database);
    this.attemptHistory = new SqliteAttemptHistory(this.database);
    this.writes = new SqliteWriteBatcher(this.database, () => {
      // Only new messages concern every consumer; a runner wakes itself after its own claims and
      // settlements. Waking all on every commit would loop: a claim is a commit too.
      if (!this.storedMessagesSinceLastCommit) return;
      this.storedMessagesSinceLastCommit = false;
      this.runners.forEach((runner) => runner.wake());
      this.tails.forEach((wake) => wake());
    });
    this.protocolsOutcomes = new SqliteProtocolsOutcomes(
      this.database,
      (work) => this.writes.enqueue(work),
      options.dedupeWindowMs,
    );
    this.functionLogs = new SqliteFunctionLogs(this.database, (work) => this.writes.enqueue(work));
    // After the outcomes' table exists: the erasure's statements read it too.
    this.erasure = new SqliteErasure(this.database);
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
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
    assertValidMessages(messages);
    const { dedupeWindowMs } = this.options;
    const { selectDedupe, insertMessage, upsertDedupe } = this.statements;
    return Promise.all(
      messages.map((message) => {
        const payload = JSON.stringify(message.payload);
        return this.writes.enqueue((now): PublishOutcome => {
          const seen = selectDedupe.get(message.messageId) as
            { sequence: number; expires_at: number } | undefined;
          if (seen && seen.expires_at > now) {
            return { messageId: message.messageId, duplicate: true, sequence: seen.sequence };
          }
          const inserted = insertMessage.run(
            message.workspaceId,
            message.sourceId,
            message.messageId,
            payload,
            now,
          );
          const sequence = Number(inserted.lastInsertRowid);
          upsertDedupe.run(message.messageId, sequence, now + dedupeWindowMs);
          this.storedMessagesSinceLastCommit = true;
          return { messageId: message.messageId, duplicate: false, sequence };
        });
      }),
    );
  }

  async consume(
    consumerName: string,
    options: ConsumeOptions,
    handler: DeliveryHandler,
  ): Promise<ConsumerSubscription> {
    assertConsumerName(consumerName);
    assertConsumeOptions(options);
    if (this.runners.has(consumerName)) {
      // JetStream would share the work between two pullers; here one runner per consumer is simpler.
      throw new Error(`event log consumer ${consumerName} is already being consumed in this process`);
    }
    // A mismatch is returned, not thrown: a throw would roll back the whole shared write batch.
    const mismatch = await this.writes.enqueue((now) =>
      this.createConsumerIfMissing(consumerName, options, now),
    );
    if (mismatch) throw mismatch;
    if (this.runners.has(consumerName)) {
      throw new Error(`event log consumer ${consumerName} is already being consumed in this process`);
    }
    const runner = new SqliteConsumerRunner(consumerName, options, handler, this, this.pollIntervalMs, () => {
      if (this.runners.get(consumerName) === runner) this.runners.delete(consumerName);
    });
    this.runners.set(consumerName, runner);
    runner.wake();
    return { stop: () => runner.stop() };
  }

  async tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    assertTailOptions(options);
    this.assertOpen();
    const lastSequence = (this.statements.selectLastSequence.get() as { seq: number } | undefined)?.seq ?? 0;
    const after = options.afterSequence;
    let nextSequence = after === undefined || after > lastSequence ? lastSequence + 1 : after + 1;
    // A wake-up that arrives while a page is being read must not be lost: it is remembered in `woken`.
    let woken = false;
    let wakeWaiter: (() => void) | undefined;
    const wake = () => {
      woken = true;
      wakeWaiter?.();
    };
    const untilWokenOrPolled = () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollIntervalMs);
        timer.unref();
        wakeWaiter = () => {
          clearTimeout(timer);
          resolve();
        };
      }).finally(() => (wakeWaiter = undefined));
    const subscription = startTail(
      async (deliver, isStopped) => {
        while (!isStopped() && !this.closed) {
          woken = false;
          const rows = this.statements.selectTailOfSource.all(
            options.sourceId,
            nextSequence,
            TAIL_PAGE,
          ) as MessageRow[];
          for (const row of rows) {
            if (isStopped()) return;
            await deliver(toTailedMessage(row));
            nextSequence = row.sequence + 1;
          }
          if (rows.length < TAIL_PAGE && !woken && !isStopped()) await untilWokenOrPolled();
        }
      },
      handler,
      wake,
    );
    this.tails.set(subscription, wake);
    void subscription.ended.then(() => this.tails.delete(subscription));
    return subscription;
  }

  async deleteConsumer(consumerName: string): Promise<boolean> {
    assertConsumerName(consumerName);
    await this.runners.get(consumerName)?.stop();
    return this.writes.enqueue(() => {
      this.statements.deletePendingOfConsumer.run(consumerName);
      this.attemptHistory.forgetConsumer(consumerName);
      return this.statements.deleteConsumer.run(consumerName).changes > 0;
    });
  }

  async consumerLag(consumerName: string): Promise<ConsumerLag> {
    assertConsumerName(consumerName);
    this.assertOpen();
    const consumer = this.statements.selectConsumer.get(consumerName) as ConsumerRow | undefined;
    if (!consumer) throw new ConsumerNotFoundError(consumerName);
    const undelivered = (
      consumer.source_id === null
        ? this.statements.countFrom.get(consumer.next_sequence)
        : this.statements.countFromOfSource.get(consumer.source_id, consumer.next_sequence)
    ) as { count: number };
    const unacknowledged = this.statements.countPending.get(consumerName) as { count: number };
    return { undelivered: undelivered.count, unacknowledged: unacknowledged.count };
  }

  async deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    assertConsumerName(letter.consumerName);
    const { message } = letter;
    const payload = JSON.stringify(message.payload);
    const attempts = JSON.stringify(
      letter.attempts.map((attempt) => ({ at: attempt.at.toISOString(), outcome: attempt.outcome })),
    );
    return this.writes.enqueue((now): DeadLetterOutcome => {
      const existing = this.statements.selectDeadLetterOf.get(letter.consumerName, message.sequence) as
        { dead_letter_sequence: number } | undefined;
      if (existing) return { deadLetterSequence: existing.dead_letter_sequence, duplicate: true };
      const inserted = this.statements.insertDeadLetter.run(
        letter.consumerName,
        message.sequence,
        message.workspaceId,
        message.sourceId,
        message.messageId,
        message.publishedAt.getTime(),
        payload,
        letter.reason,
        attempts,
        now,
      );
      return { deadLetterSequence: Number(inserted.lastInsertRowid), duplicate: false };
    });
  }

  async listDeadLetters(options: ListDeadLettersOptions = {}): Promise<DeadLetter[]> {
    this.assertOpen();
    const after = options.afterSequence ?? 0;
    const limit = options.limit ?? DEFAULT_DEAD_LETTER_PAGE;
    assertPositiveInteger('limit', limit);
    const rows = (
      options.consumerName === undefined
        ? this.statements.listDeadLetters.all(after, limit)
        : this.statements.listDeadLettersOf.all(options.consumerName, after, limit)
    ) as DeadLetterRow[];
    return rows.map(toDeadLetter);
  }

  async readLease(name: string): Promise<LeaseRecord | null> {
    assertLeaseName(name);
    this.assertOpen();
    const row = this.statements.selectLease.get(name) as LeaseRow | undefined;
    return row
      ? { holder: row.holder, data: JSON.parse(row.data) as Record<string, unknown>, revision: row.revision }
      : null;
  }

  async writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    assertLeaseName(name);
    assertLeaseWrite(value, expectedRevision);
    const data = JSON.stringify(value.data);
    return this.writes.enqueue(() => {
      const written =
        expectedRevision === 0
          ? this.statements.insertLease.run(name, value.holder, data)
          : this.statements.updateLease.run(value.holder, data, name, expectedRevision);
      return written.changes === 1 ? expectedRevision + 1 : null;
    });
  }

  async markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    assertSeenOnce(key, ttlMs);
    this.assertOpen();
    const capacity = this.options.seenOnceCapacity ?? DEFAULT_SEEN_ONCE_CAPACITY;
    const s = this.statements;
    // A refusal is returned, not thrown: a throw would roll back every write batched with this one.
    const outcome = await this.writes.enqueue((now): 'recorded' | 'seen' | 'full' => {
      const existing = s.selectSeenOnce.get(key) as { expires_at: number } | undefined;
      if (existing && existing.expires_at > now) return 'seen';
      if (!existing && (s.countSeenOnce.get() as { count: number }).count >= capacity) {
        s.deleteExpiredSeenOnce.run(now);
        if ((s.countSeenOnce.get() as { count: number }).count >= capacity) return 'full';
      }
      s.upsertSeenOnce.run(key, now + ttlMs);
      return 'recorded';
    });
    if (outcome === 'full') throw new SeenOnceCapacityError(capacity);
    return outcome === 'recorded';
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
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    await Promise.all([...this.tails.keys()].map((subscription) => subscription.stop()));
    this.writes.close();
    this.database.close();
  }

  // --- SqliteConsumerStore: used by the runners -------------------------------------------------

  claimDeliveries(consumerName: string, options: ConsumeOptions): Promise<DeliverableRow[]> {
    const s = this.statements;
    return this.writes.enqueue((now) => {
      const consumer = s.selectConsumer.get(consumerName) as ConsumerRow | undefined;
      if (!consumer) return []; // deleted by another process
      const redeliveries = s.selectDue.all(consumerName, now, options.maxInFlight) as DeliverableRow[];
      for (const row of redeliveries) {
        row.delivery_count += 1;
        s.updatePending.run(row.delivery_count, now + options.ackWaitMs, consumerName, row.sequence);
      }
      const outstanding = (s.countPending.get(consumerName) as { count: number }).count;
      const room = options.maxInFlight - outstanding;
      let fresh: DeliverableRow[] = [];
      if (room > 0) {
        fresh = (
          consumer.source_id === null
            ? s.selectNewFrom.all(consumer.next_sequence, room)
            : s.selectNewFromOfSource.all(consumer.source_id, consumer.next_sequence, room)
        ) as DeliverableRow[];
        for (const row of fresh) {
          row.delivery_count = 1;
          s.insertPending.run(consumerName, row.sequence, 1, now + options.ackWaitMs);
        }
        if (fresh.length > 0) s.updateCursor.run(fresh[fresh.length - 1].sequence + 1, consumerName);
      }
      return [...redeliveries, ...fresh].sort((a, b) => a.sequence - b.sequence);
    });
  }

  nextDueAt(consumerName: string): number | null {
    if (this.closed) return null;
    const row = this.statements.selectNextDue.get(consumerName) as { due: number | null };
    return row.due;
  }

  keepInProgress(consumerName: string, sequence: number, ackWaitMs: number): Promise<void> {
    // Only a delivery still outstanding is pushed back: one settled meanwhile has no row to update.
    return this.writes.enqueue((now) => {
      this.statements.extendPending.run(now + ackWaitMs, consumerName, sequence);
    });
  }

  settle(
    consumerName: string,
    sequence: number,
    settlement: { kind: 'done' } | { kind: 'retry'; delayMs: number },
  ): Promise<void> {
    return this.writes.enqueue((now) => {
      if (settlement.kind === 'done') {
        this.statements.deletePending.run(consumerName, sequence);
      } else {
        this.statements.delayPending.run(now + settlement.delayMs, consumerName, sequence);
      }
    });
  }

  // ------------------------------------------------------------------------------------------------

  private createConsumerIfMissing(
    consumerName: string,
    options: ConsumeOptions,
    now: number,
  ): ConsumerMismatchError | null {
    const s = this.statements;
    const existing = s.selectConsumer.get(consumerName) as ConsumerRow | undefined;
    const requestedSourceId = options.sourceId ?? null;
    if (existing) {
      return existing.source_id === requestedSourceId
        ? null
        : new ConsumerMismatchError(consumerName, existing.source_id ?? undefined, options.sourceId);
    }
    const lastSequence = (s.selectLastSequence.get() as { seq: number } | undefined)?.seq ?? 0;
    let nextSequence = lastSequence + 1;
    if (options.deliverFrom) {
      const first = s.selectFirstSequenceAt.get(options.deliverFrom.getTime()) as { sequence: number | null };
      nextSequence = first.sequence ?? nextSequence;
    }
    s.insertConsumer.run(consumerName, requestedSourceId, nextSequence, now);
    return null;
  }

  private deleteExpired(): Promise<void> {
    const { retentionMs } = this.options;
    const s = this.statements;
    return this.writes.enqueue((now) => {
      s.deleteMessagesBefore.run(now - retentionMs);
      s.deleteOrphanPending.run();
      s.deleteExpiredDedupe.run(now);
      s.deleteExpiredSeenOnce.run(now);
      s.deleteDeadLettersBefore.run(now - retentionMs);
      this.protocolsOutcomes.deleteExpired(now);
      this.functionLogs.deleteExpired(now);
      this.attemptHistory.forgetBefore(now - retentionMs);
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new EventLogUnavailableError('the sqlite event log is closed');
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

function toTailedMessage(row: MessageRow) {
  return {
    workspaceId: row.workspace_id,
    sourceId: row.source_id,
    messageId: row.message_id,
    sequence: row.sequence,
    publishedAt: new Date(row.published_at),
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

function toDeadLetter(row: DeadLetterRow): DeadLetter {
  const attempts = JSON.parse(row.attempts) as { at: string; outcome: string }[];
  return {
    deadLetterSequence: row.dead_letter_sequence,
    deadLetteredAt: new Date(row.dead_lettered_at),
    consumerName: row.consumer_name,
    reason: row.reason,
    attempts: attempts.map((attempt) => ({ at: new Date(attempt.at), outcome: attempt.outcome })),
    message: {
      workspaceId: row.workspace_id,
      sourceId: row.source_id,
      messageId: row.message_id,
      sequence: row.sequence,
      publishedAt: new Date(row.published_at),
      payload: JSON.parse(row.payload) as Record<string, unknown>,
    },
  };
}

function prepareStatements(database: Database) {
  const prepare = (sql: string): Statement => database.prepare(sql);
  const deliverableColumns =
    'm.sequence, m.workspace_id, m.source_id, m.message_id, m.payload, m.published_at';
  return {
    selectDedupe: prepare('SELECT sequence, expires_at FROM dedupe WHERE message_id = ?'),
    insertMessage: prepare(
      'INSERT INTO messages (workspace_id, source_id, message_id, payload, published_at) VALUES (?, ?, ?, ?, ?)',
    ),
    upsertDedupe: prepare(
      `INSERT INTO dedupe (message_id, sequence, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (message_id) DO UPDATE SET sequence = excluded.sequence, expires_at = excluded.expires_at`,
    ),
    selectLastSequence: prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'messages'`),
    selectFirstSequenceAt: prepare('SELECT min(sequence) AS sequence FROM messages WHERE published_at >= ?'),
    selectConsumer: prepare('SELECT * FROM consumers WHERE name = ?'),
    insertConsumer: prepare(
      'INSERT INTO consumers (name, source_id, next_sequence, created_at) VALUES (?, ?, ?, ?)',
    ),
    deleteConsumer: prepare('DELETE FROM consumers WHERE name = ?'),
    updateCursor: prepare('UPDATE consumers SET next_sequence = ? WHERE name = ?'),
    selectDue: prepare(
      `SELECT ${deliverableColumns}, p.delivery_count FROM consumer_pending p
       JOIN messages m ON m.sequence = p.sequence
       WHERE p.consumer_name = ? AND p.next_delivery_at <= ? ORDER BY p.sequence LIMIT ?`,
    ),
    selectNewFrom: prepare(
      `SELECT ${deliverableColumns} FROM messages m WHERE m.sequence >= ? ORDER BY m.sequence LIMIT ?`,
    ),
    selectNewFromOfSource: prepare(
      `SELECT ${deliverableColumns} FROM messages m WHERE m.source_id = ? AND m.sequence >= ? ORDER BY m.sequence LIMIT ?`,
    ),
    selectTailOfSource: prepare(
      `SELECT sequence, workspace_id, source_id, message_id, payload, published_at FROM messages
       WHERE source_id = ? AND sequence >= ? ORDER BY sequence LIMIT ?`,
    ),
    countFrom: prepare('SELECT count(*) AS count FROM messages WHERE sequence >= ?'),
    countFromOfSource: prepare(
      'SELECT count(*) AS count FROM messages WHERE source_id = ? AND sequence >= ?',
    ),
    countPending: prepare('SELECT count(*) AS count FROM consumer_pending WHERE consumer_name = ?'),
    selectNextDue: prepare(
      'SELECT min(next_delivery_at) AS due FROM consumer_pending WHERE consumer_name = ?',
    ),
    insertPending: prepare(
      'INSERT INTO consumer_pending (consumer_name, sequence, delivery_count, next_delivery_at) VALUES (?, ?, ?, ?)',
    ),
    updatePending: prepare(
      'UPDATE consumer_pending SET delivery_count = ?, next_delivery_at = ? WHERE consumer_name = ? AND sequence = ?',
    ),
    delayPending: prepare(
      'UPDATE consumer_pending SET next_delivery_at = ? WHERE consumer_name = ? AND sequence = ?',
    ),
    extendPending: prepare(
      'UPDATE consumer_pending SET next_delivery_at = max(next_delivery_at, ?) WHERE consumer_name = ? AND sequence = ?',
    ),
    deletePending: prepare('DELETE FROM consumer_pending WHERE consumer_name = ? AND sequence = ?'),
    deletePendingOfConsumer: prepare('DELETE FROM consumer_pending WHERE consumer_name = ?'),
    deleteMessagesBefore: prepare('DELETE FROM messages WHERE published_at < ?'),
    deleteOrphanPending: prepare(
      'DELETE FROM consumer_pending WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.sequence = consumer_pending.sequence)',
    ),
    deleteExpiredDedupe: prepare('DELETE FROM dedupe WHERE expires_at <= ?'),
    selectDeadLetterOf: prepare(
      'SELECT dead_letter_sequence FROM dead_letters WHERE consumer_name = ? AND sequence = ?',
    ),
    insertDeadLetter: prepare(
      `INSERT INTO dead_letters (consumer_name, sequence, workspace_id, source_id, message_id, published_at, payload,
         reason, attempts, dead_lettered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    listDeadLetters: prepare(
      'SELECT * FROM dead_letters WHERE dead_letter_sequence > ? ORDER BY dead_letter_sequence LIMIT ?',
    ),
    listDeadLettersOf: prepare(
      'SELECT * FROM dead_letters WHERE consumer_name = ? AND dead_letter_sequence > ? ORDER BY dead_letter_sequence LIMIT ?',
    ),
    deleteDeadLettersBefore: prepare('DELETE FROM dead_letters WHERE dead_lettered_at < ?'),
    selectLease: prepare('SELECT * FROM leases WHERE name = ?'),
    insertLease: prepare(
      'INSERT INTO leases (name, holder, data, revision) VALUES (?, ?, ?, 1) ON CONFLICT (name) DO NOTHING',
    ),
    updateLease: prepare(
      'UPDATE leases SET holder = ?, data = ?, revision = revision + 1 WHERE name = ? AND revision = ?',
    ),
    selectSeenOnce: prepare('SELECT expires_at FROM seen_once WHERE key = ?'),
    countSeenOnce: prepare('SELECT count(*) AS count FROM seen_once'),
    upsertSeenOnce: prepare(
      `INSERT INTO seen_once (key, expires_at) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`,
    ),
    deleteExpiredSeenOnce: prepare('DELETE FROM seen_once WHERE expires_at <= ?'),
  };
}
