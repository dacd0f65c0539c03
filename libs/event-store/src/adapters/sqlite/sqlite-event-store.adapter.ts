import { Database, type Statement, type Transaction } from '@tributary/sqlite';
import { assertAppendable, assertPageSize, serializeEventPayloads } from '../../append-validation';
import {
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllBackwardsOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from '../../event-store.port';
import { SqliteAllSubscription, type SqliteEventPages } from './sqlite-all-subscription';

export interface SqliteEventStoreOptions {
  /** How often idle subscriptions look for appends made by another process on the same file. */
  pollIntervalMs?: number;
}

const DEFAULT_POLL_INTERVAL_MS = 200;

// `position` is the rowid: AUTOINCREMENT guarantees a position is never handed out twice, even after
// the newest rows are gone. SQLite has one writer at a time, so positions are committed in order and
// a reader never sees position n+1 before n.
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    position    INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_name TEXT    NOT NULL,
    revision    INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    metadata    TEXT    NOT NULL,
    UNIQUE (stream_name, revision)
  ) STRICT
`;

interface EventRow {
  position: bigint;
  stream_name: string;
  revision: bigint;
  type: string;
  data: string;
  metadata: string;
}

/**
 * The embedded event store: one SQLite file in WAL mode, so several processes (or several instances
 * in one process) can share it; appends are serialized by SQLite's write lock.
 */
export class SqliteEventStore implements EventStore {
  private readonly db: Database;
  private readonly subscriptions = new Set<SqliteAllSubscription>();
  private readonly pollIntervalMs: number;
  private closed = false;

  private readonly selectLastRevision: Statement<[string], { revision: number | null }>;
  private readonly insertEvent: Statement<[string, number, string, string, string]>;
  private readonly selectStream: Statement<[string], EventRow>;
  private readonly selectPage: Statement<[bigint, number], EventRow>;
  private readonly selectHead: Statement<[], { head: bigint }>;
  private readonly selectPageBackwards: Statement<[bigint, number], EventRow>;
  private readonly appendInTransaction: Transaction<
    (streamName: string, events: NewEvent[], expectedRevision: ExpectedRevision) => AppendResult
  >;

  constructor(filePath: string, options: SqliteEventStoreOptions = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    // `timeout`: how long a writer waits for another process's write lock before failing.
    this.db = new Database(filePath, { timeout: 5000 });
    this.db.pragma('journal_mode = WAL');
    this.db.exec(SCHEMA);

    this.selectLastRevision = this.db.prepare(
      'SELECT MAX(revision) AS revision FROM events WHERE stream_name = ?',
    );
    this.insertEvent = this.db.prepare(
      'INSERT INTO events (stream_name, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)',
    );
    this.selectStream = this.db
      .prepare<[string], EventRow>(
        'SELECT position, stream_name, revision, type, data, metadata FROM events WHERE stream_name = ? ORDER BY revision',
      )
      .safeIntegers(true);
    this.selectPage = this.db
      .prepare<[bigint, number], EventRow>(
        'SELECT position, stream_name, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?',
      )
      .safeIntegers(true);
    this.selectPageBackwards = this.db
      .prepare<[bigint, number], EventRow>(
        'SELECT position, stream_name, revision, type, data, metadata FROM events WHERE position < ? ORDER BY position DESC LIMIT ?',
      )
      .safeIntegers(true);
    this.selectHead = this.db
      .prepare<[], { head: bigint }>('SELECT COALESCE(MAX(position), 0) AS head FROM events')
      .safeIntegers(true);
    this.appendInTransaction = this.db.transaction((streamName, events, expectedRevision) =>
      this.appendChecked(streamName, events, expectedRevision),
    );
  }

  async append(
    streamName: string,
    events: NewEvent[],
    expectedRevision: ExpectedRevision,
  ): Promise<AppendResult> {
    this.assertOpen('append');
    assertAppendable(streamName, events, expectedRevision);
    // IMMEDIATE takes the write lock before reading the current revision, so a writer in another
    // process cannot slip in between the check and the insert.
    const result = this.appendInTransaction.immediate(streamName, events, expectedRevision);
    for (const subscription of this.subscriptions) subscription.notifyAppended();
    return result;
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    this.assertOpen('readStream');
    return this.selectStream.all(streamName).map(toRecordedEvent);
  }

  async readAllBackwards(options: ReadAllBackwardsOptions): Promise<RecordedEvent[]> {
    this.assertOpen('readAllBackwards');
    assertPageSize(options.maxCount);
    // Positions are rowids, at most 2^63 - 1: a bound above every position reads from the newest.
    const before = options.before ?? NO_UPPER_POSITION;
    return this.selectPageBackwards.all(before, options.maxCount).map(toRecordedEvent);
  }

  subscribeToAll(
    handler: (event: RecordedEvent) => void | Promise<void>,
    options: SubscribeToAllOptions = {},
  ): Subscription {
    this.assertOpen('subscribeToAll');
    const pages: SqliteEventPages = {
      readPage: (afterPosition, limit) => this.selectPage.all(afterPosition, limit).map(toRecordedEvent),
      headPosition: () => this.selectHead.get()?.head ?? 0n,
    };
    const subscription = new SqliteAllSubscription(pages, handler, options, this.pollIntervalMs, (finished) =>
      this.subscriptions.delete(finished),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    this.db.close();
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new Error(`SqliteEventStore: ${operation} after close()`);
  }

  private appendChecked(
    streamName: string,
    events: NewEvent[],
    expectedRevision: ExpectedRevision,
  ): AppendResult {
    const lastRevision = this.selectLastRevision.get(streamName)?.revision ?? null;
    const actual = lastRevision === null ? 'no_stream' : lastRevision;
    if (expectedRevision !== 'any' && expectedRevision !== actual) {
      throw new WrongExpectedRevisionError(streamName, expectedRevision, actual);
    }
    let revision = lastRevision ?? -1;
    let position = 0n;
    for (const event of events) {
      revision += 1;
      // Serializing inside the transaction: an event that is not JSON rolls back the ones before it.
      const { data, metadata } = serializeEventPayloads(event);
      const inserted = this.insertEvent.run(streamName, revision, event.type, data, metadata);
      position = BigInt(inserted.lastInsertRowid);
    }
    return { revision, position };
  }
}

const NO_UPPER_POSITION = (1n << 63n) - 1n;

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    streamName: row.stream_name,
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
    metadata: JSON.parse(row.metadata) as EventMetadata,
    revision: Number(row.revision),
    position: row.position,
  };
}
