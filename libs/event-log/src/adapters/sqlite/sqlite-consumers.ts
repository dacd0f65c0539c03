import type { Database, Statement } from '@tributary/sqlite';
import { assertConsumerName, assertPositiveInteger, assertSubjectToken } from '../../event-log.validation';
import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  type ConsumeOptions,
  type ConsumerLag,
  type ConsumerSubscription,
  type DeliveryHandler,
} from '../../ports/tracking-log.port';
import type { SqliteAttemptHistory } from './sqlite-attempt-history';
import { SqliteConsumerRunner, type SqliteConsumerStore } from './sqlite-consumer.runner';
import type { ConsumerRow, DeliverableRow } from './sqlite-event-log.schema';
import type { EnqueueWrite } from './sqlite-write.batcher';

/**
 * Durable consumers of the embedded log: a cursor per consumer (table `consumers`) and its
 * outstanding deliveries (`consumer_pending`), each consumer delivered by one runner in this process.
 */
export class SqliteConsumers implements SqliteConsumerStore {
  private readonly runners = new Map<string, SqliteConsumerRunner>();
  private readonly statements: ReturnType<typeof prepareStatements>;

  constructor(
    database: Database,
    private readonly enqueueWrite: EnqueueWrite,
    private readonly attemptHistory: SqliteAttemptHistory,
    private readonly pollIntervalMs: number,
    private readonly isClosed: () => boolean,
    private readonly assertOpen: () => void,
  ) {
    this.statements = prepareStatements(database);
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
    const mismatch = await this.enqueueWrite((now) =>
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

  async deleteConsumer(consumerName: string): Promise<boolean> {
    assertConsumerName(consumerName);
    await this.runners.get(consumerName)?.stop();
    return this.enqueueWrite(() => {
      this.statements.deletePendingOfConsumer.run(consumerName);
      this.attemptHistory.forgetConsumer(consumerName);
      return this.statements.deleteConsumer.run(consumerName).changes > 0;
    });
  }

  consumerLag(consumerName: string): ConsumerLag {
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

  /** Messages were stored: every runner claims what is new. */
  wakeAll(): void {
    this.runners.forEach((runner) => runner.wake());
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
  }

  /** Inside a write: drops the outstanding deliveries of messages retention deleted. */
  deleteOrphanPending(): void {
    this.statements.deleteOrphanPending.run();
  }

  // --- SqliteConsumerStore: used by the runners -------------------------------------------------

  claimDeliveries(consumerName: string, options: ConsumeOptions): Promise<DeliverableRow[]> {
    const s = this.statements;
    return this.enqueueWrite((now) => {
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
    if (this.isClosed()) return null;
    const row = this.statements.selectNextDue.get(consumerName) as { due: number | null };
    return row.due;
  }

  keepInProgress(consumerName: string, sequence: number, ackWaitMs: number): Promise<void> {
    // Only a delivery still outstanding is pushed back: one settled meanwhile has no row to update.
    return this.enqueueWrite((now) => {
      this.statements.extendPending.run(now + ackWaitMs, consumerName, sequence);
    });
  }

  settle(
    consumerName: string,
    sequence: number,
    settlement: { kind: 'done' } | { kind: 'retry'; delayMs: number },
  ): Promise<void> {
    return this.enqueueWrite((now) => {
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
}

function assertConsumeOptions(options: ConsumeOptions): void {
  if (options.sourceId !== undefined) assertSubjectToken('sourceId', options.sourceId);
  assertPositiveInteger('ackWaitMs', options.ackWaitMs);
  assertPositiveInteger('maxInFlight', options.maxInFlight);
  if (options.deliverFrom !== undefined && Number.isNaN(options.deliverFrom.getTime())) {
    throw new TypeError('deliverFrom is an invalid date');
  }
}

function prepareStatements(database: Database) {
  const prepare = (sql: string): Statement => database.prepare(sql);
  const deliverableColumns =
    'm.sequence, m.workspace_id, m.source_id, m.message_id, m.payload, m.published_at';
  return {
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
    deleteOrphanPending: prepare(
      'DELETE FROM consumer_pending WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.sequence = consumer_pending.sequence)',
    ),
  };
}
