/**
 * PostgreSQL as a warehouse: every message becomes rows in Segment-style tables (see
 * `warehouse-row.planner.ts`), in the source's own schema (named after its slug) or the one of the
 * destination's `schema` setting (see `postgres-schema.ts`). Tables and columns are created as messages
 * need them; a redelivered message (same messageId) changes nothing, because `id` is every event
 * table's primary key and dependent rows are written only with a new primary row.
 *
 * What a tenant's messages may do to the database is bounded:
 * - Tributary writes only to tables it created (`table-registry.ts`): a table of the same name that
 *   someone else made is refused, never altered or written.
 * - Event tables per schema and columns per table are capped (`maxEventTables`, `maxColumnsPerTable`).
 *   A new event table past the cap is refused (the message is discarded with the reason); a new column
 *   past the cap is not created and the message lands without that value, which is reported.
 * - A value that does not fit its column's type lands as null, reported too; the row is never lost.
 *
 * Outcomes: a connection or server failure is `retry` (nothing was committed for that message); a
 * message the database can never store (a NUL in a string) or a refused table is `discard` with the
 * reason. One pg Pool per connection string, reused across calls; the least recently used pools are
 * closed past `maxPools`, so a tenant cycling through connection strings cannot pile up pools (and
 * their idle connections) in the router.
 */
import { Pool, type PoolClient } from 'pg';
import { KeyedLock } from '@tributary/concurrency';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  deletionOutcomeOf,
  discard,
  delivered,
  egressDenied,
  retry,
  sameOutcomeForAll,
  type UserDeletionOutcome,
  type UserDeletionRequest,
  type DeliveryAdapter,
  type AttemptResult,
  type DeliveryRequest,
  type DeliveryResult,
  type ValueNotStored,
} from '../delivery/delivery-adapter.port';
import { PermanentRowError, quoteIdentifier, sqlState } from './postgres-identifiers';
import { resolveWarehouseSchema } from './postgres-schema';
import {
  TABLE_REGISTRY,
  TableRefusedError,
  createRegisteredTable,
  ensureTableRegistry,
  readTableRegistry,
  type RegisteredTableKind,
} from './table-registry';
import { columnsOfNewTable, readColumns, runDdl } from './table-ddl';
import {
  STANDARD_COLUMN_TYPES,
  STANDARD_TABLES,
  fittedValue,
  inferColumnType,
  planWarehouseRows,
  whyValueDoesNotFit,
  type ColumnKind,
  type RowValues,
  type WarehouseRow,
  type WarehouseValue,
} from './warehouse-row.planner';
import { EgressGuard, isEgressDenied } from '../delivery/egress/egress-guard';
import { pinnedPostgresConnection, withoutServerMessages } from './postgres-connection';
import {
  prepareWarehouseBatch,
  type BatchMessageRows,
  type PreparedWarehouseBatch,
} from './warehouse-batch.writer';

export { quoteIdentifier } from './postgres-identifiers';

/** Connections per pool, when not configured. */
export const DEFAULT_CONNECTIONS_PER_POOL = 4;
/** Event tables (one per track event name) per schema, when not configured. */
export const DEFAULT_MAX_EVENT_TABLES = 200;
/** Columns per table, when not configured; PostgreSQL's own limit is 1,600, dropped columns included. */
export const DEFAULT_MAX_COLUMNS_PER_TABLE = 500;

/**
 * SQLSTATE classes that mean "this row can never be stored": 22 data exception (a NUL byte, a value out
 * of range), 23 integrity constraint, 54 program limit (more than 1,600 columns). Every other failure
 * may pass (a restart, a lock, a permission being granted), so it is retried.
 */
const PERMANENT_SQLSTATE_CLASSES = new Set(['22', '23', '54']);
// 42P10: `users` has no key (id, source_id): it predates that key (README, "Upgrading from a version without the registry").
const PERMANENT_SQLSTATES = new Set(['42804', '42846', '42P10']);
/** The cached table layout is stale (someone dropped a table or column): forget it and retry. */
const STALE_LAYOUT_SQLSTATES = new Set(['42P01', '42703']);

export interface PostgresAdapterOptions {
  /** Connections per pool (one pool per connection string). Default `DEFAULT_CONNECTIONS_PER_POOL`. */
  maxConnectionsPerPool?: number;
  /** Pools kept open at once; past it the least recently used one is closed. Default 50. */
  maxPools?: number;
  /** How long to wait for a connection before the messages are retried later. Default 5 s. */
  connectionTimeoutMs?: number;
  /** Per statement, so a locked table cannot hold the consumer forever. Default 30 s. */
  statementTimeoutMs?: number;
  /** Event tables Tributary creates per schema; the seven standard tables are not counted. Default 200. */
  maxEventTables?: number;
  /** Columns per table, the ones every table is created with included. Default 500. */
  maxColumnsPerTable?: number;
  /** The egress guard connections go through (see `postgres-connection.ts`). Default: the `open` policy. */
  egressGuard?: EgressGuard;
}

/** A row fitted to its table: the values to write, and the ones left out or set to null. */
interface PreparedRow {
  readonly table: string;
  readonly values: RowValues<WarehouseValue | null>;
  /** Undefined when every value is stored as planned (or widened). */
  notStored: ValueNotStored[] | undefined;
  /**
   * Every column written reads a JSON scalar as it reads the same value's text (`text`, `number`,
   * `boolean`, `timestamp` kinds), so the row may go through `json_populate_recordset`.
   */
  readsJsonAsText: boolean;
}

const KINDS_READING_JSON_AS_TEXT: ReadonlySet<ColumnKind> = new Set([
  'text',
  'number',
  'boolean',
  'timestamp',
]);

/** A database reached through one connection string, with what we know of its tables. */
interface Warehouse {
  pool: Pool;
  /** May the server's messages be shown (see `pinnedPostgresConnection`)? */
  serverMessagesShown: boolean;
  /** Schemas known to exist, each with the tables its registry lists (see `table-registry.ts`). */
  schemas: Map<string, Map<string, RegisteredTableKind>>;
  /** `"schema"."table"` → column name → how it stores values. */
  tables: Map<string, Map<string, ColumnKind>>;
  /** `"schema"."table"` → the DDL on it in progress in this process (see `underTableLock`). */
  tableLocks: KeyedLock;
}

export class PostgresDeliveryAdapter implements DeliveryAdapter {
  readonly slug = 'postgres';
  /** By connection string, least recently used first (a Map keeps insertion order). */
  private readonly warehouses = new Map<string, Warehouse>();
  private readonly egressGuard: EgressGuard;

  constructor(private readonly options: PostgresAdapterOptions = {}) {
    this.egressGuard = options.egressGuard ?? new EgressGuard();
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    const reached: { warehouse?: Warehouse } = {};
    const results = await this.deliverToWarehouse(request, reached);
    const shown = reached.warehouse?.serverMessagesShown !== false;
    return shown ? results : withoutServerMessages(results);
  }

  /** Pools open now (at most `maxPools`). */
  get openPools(): number {
    return this.warehouses.size;
  }

  private async deliverToWarehouse(
    request: DeliveryRequest,
    reached: { warehouse?: Warehouse },
  ): Promise<DeliveryResult[]> {
    if (request.messages.length === 0) return [];
    const connectionString = request.settings['connection_string'];
    if (typeof connectionString !== 'string' || connectionString.trim() === '') {
      return sameOutcomeForAll(
        request.messages,
        discard('destination misconfigured: setting "connection_string" is not set'),
      );
    }
    const resolved = resolveWarehouseSchema(request.settings['schema'], request.sourceSlug);
    if ('problem' in resolved) {
      return sameOutcomeForAll(
        request.messages,
        discard(
          `destination misconfigured: ${resolved.problem}`,
          undefined,
          resolved.systemSchema ? 'system_schema' : undefined,
        ),
      );
    }
    const { schema } = resolved;

    let warehouse: Warehouse;
    let client: PoolClient;
    try {
      warehouse = await this.warehouseFor(connectionString);
      reached.warehouse = warehouse;
      client = await warehouse.pool.connect();
    } catch (error) {
      if (isEgressDenied(error)) return sameOutcomeForAll(request.messages, egressDenied(error.detail));
      return sameOutcomeForAll(
        request.messages,
        retry(`cannot connect to PostgreSQL: ${describeError(error)}`),
      );
    }

    const results: DeliveryResult[] = [];
    let clientBroken: unknown;
    try {
      await this.ensureSchema(client, warehouse, schema);
      const together =
        request.messages.length > 1
          ? await this.storeTogether(client, warehouse, schema, request.messages, request.sourceId)
          : undefined;
      if (together) results.push(...together);
      else
        for (const message of request.messages) {
          const outcome = await this.store(client, warehouse, schema, message, request.sourceId);
          results.push({ messageId: message.messageId, ...outcome.result });
          if (outcome.connectionLost) {
            clientBroken = outcome.connectionLost;
            break;
          }
        }
    } catch (error) {
      clientBroken = error;
    } finally {
      client.release(clientBroken instanceof Error ? clientBroken : clientBroken !== undefined);
    }
    // After a lost connection the rest are not attempted: they would fail alike and retry anyway.
    const remainder = request.messages.slice(results.length);
    const remainderOutcome = outcomeOfError(clientBroken, warehouse);
    return [...results, ...sameOutcomeForAll(remainder, remainderOutcome)];
  }

  /**
   * A regulation's deletion (docs/regulations.md §4): in the destination's schema, in every table the
   * registry lists (never another), the rows of the source whose `user_id` is a user's (`users`:
   * whose `id` is), in one transaction. A schema Tributary never wrote to holds nothing to delete.
   */
  async deleteUsers(request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    const connectionString = request.settings['connection_string'];
    if (typeof connectionString !== 'string' || connectionString.trim() === '') {
      return {
        outcome: 'failed',
        reason: 'destination misconfigured: setting "connection_string" is not set',
      };
    }
    const resolved = resolveWarehouseSchema(request.settings['schema'], request.sourceSlug);
    if ('problem' in resolved)
      return { outcome: 'failed', reason: `destination misconfigured: ${resolved.problem}` };
    const { schema } = resolved;
    let warehouse: Warehouse;
    let client: PoolClient;
    try {
      warehouse = await this.warehouseFor(connectionString);
      client = await warehouse.pool.connect();
    } catch (error) {
      if (isEgressDenied(error)) return { outcome: 'failed', reason: egressDenied(error.detail).reason };
      return { outcome: 'retry', reason: `cannot connect to PostgreSQL: ${describeError(error)}` };
    }
    let broken: unknown;
    try {
      const registry = await client.query<{ registry: string | null }>('SELECT to_regclass($1) AS registry', [
        `${quoteIdentifier(schema)}.${quoteIdentifier(TABLE_REGISTRY)}`,
      ]);
      if (registry.rows[0]?.registry === null) return { outcome: 'deleted' };
      const tables = await readTableRegistry(client, schema);
      const columns = await client.query<{ table_name: string; column_name: string }>(
        `SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = $1 AND column_name IN ('id', 'user_id', 'source_id')`,
        [schema],
      );
      const columnsOf = (table: string) =>
        new Set(columns.rows.filter((row) => row.table_name === table).map((row) => row.column_name));
      const userIds = request.users.map((user) => user.userId);
      await client.query('BEGIN');
      for (const table of tables.keys()) {
        const userColumn = table === 'users' ? 'id' : 'user_id';
        const has = columnsOf(table);
        // A registered table dropped behind Tributary's back, or one without users' rows.
        if (!has.has(userColumn) || !has.has('source_id')) continue;
        await client.query(
          `DELETE FROM ${quoteIdentifier(schema)}.${quoteIdentifier(table)} ` +
            `WHERE ${quoteIdentifier(userColumn)} = ANY($1::text[]) AND source_id = $2`,
          [userIds, request.sourceId],
        );
      }
      await client.query('COMMIT');
      return { outcome: 'deleted' };
    } catch (error) {
      broken = error;
      await client.query('ROLLBACK').catch(() => undefined);
      const outcome = deletionOutcomeOf(outcomeOfError(error, warehouse));
      return !warehouse.serverMessagesShown && outcome.outcome !== 'deleted'
        ? { ...outcome, reason: 'PostgreSQL refused the deletion' }
        : outcome;
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.warehouses.values()].map((warehouse) => warehouse.pool);
    this.warehouses.clear();
    await Promise.allSettled(pools.map((pool) => pool.end()));
  }

  /** The pool connects to the address the guard checked when it was created (no DNS rebinding). */
  private async warehouseFor(connectionString: string): Promise<Warehouse> {
    const existing = this.warehouses.get(connectionString);
    if (existing) return this.touched(connectionString, existing);
    const connection = await pinnedPostgresConnection(connectionString, this.egressGuard);
    const createdMeanwhile = this.warehouses.get(connectionString);
    if (createdMeanwhile) return this.touched(connectionString, createdMeanwhile);
    const pool = new Pool({
      ...connection.poolConfig,
      max: this.maxConnectionsPerPool,
      connectionTimeoutMillis: this.options.connectionTimeoutMs ?? 5_000,
      statement_timeout: this.options.statementTimeoutMs ?? 30_000,
      // Naive date-times in properties are read as UTC, whatever the server's default time zone.
      options: '-c TimeZone=UTC',
    });
    // An idle connection dropped by the server emits here; unhandled, it would crash the process.
    pool.on('error', () => undefined);
    const warehouse: Warehouse = {
      pool,
      serverMessagesShown: connection.serverMessagesShown,
      schemas: new Map(),
      tables: new Map(),
      tableLocks: new KeyedLock(),
    };
    this.warehouses.set(connectionString, warehouse);
    this.closeLeastRecentlyUsed();
    return warehouse;
  }

  /** Moves the warehouse to the most recently used end. */
  private touched(connectionString: string, warehouse: Warehouse): Warehouse {
    this.warehouses.delete(connectionString);
    this.warehouses.set(connectionString, warehouse);
    return warehouse;
  }

  /**
   * Closes pools past `maxPools`, least recently used first. A delivery still holding one of its
   * connections finishes: `end()` waits for checked-out clients to be released.
   */
  private closeLeastRecentlyUsed(): void {
    const maxPools = Math.max(1, this.options.maxPools ?? 50);
    for (const [connectionString, warehouse] of this.warehouses) {
      if (this.warehouses.size <= maxPools) return;
      this.warehouses.delete(connectionString);
      void warehouse.pool.end().catch(() => undefined);
    }
  }

  /**
   * Every message in one transaction, each table's rows in multi-row statements; undefined, having
   * written nothing, when anything goes wrong, and the caller then stores them one by one so that a
   * bad message fails alone.
   */
  private async storeTogether(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    messages: readonly NormalizedMessage[],
    sourceId: string | undefined,
  ): Promise<DeliveryResult[] | undefined> {
    // Prepared in a call of its own: an async function keeps its locals alive across every await,
    // and the rows must not outlive the statement built from them (see `prepareWarehouseBatch`).
    const prepared = await this.prepareTogether(client, warehouse, schema, messages, sourceId);
    if (!prepared) return undefined;
    const { batch, notStored } = prepared;
    // One statement is atomic by itself: no transaction round trips around it.
    const inTransaction = !batch.inOneStatement;
    try {
      if (inTransaction) await client.query('BEGIN');
      const isNew = await batch.write(client);
      if (inTransaction) await client.query('COMMIT');
      // A redelivery stored nothing, so it reports nothing: each value left out is counted once.
      return messages.map((message, index) => ({
        messageId: message.messageId,
        ...delivered(isNew[index] ? notStored[index] : []),
      }));
    } catch {
      if (inTransaction) await client.query('ROLLBACK').catch(() => undefined);
      return undefined;
    }
  }

  /** The messages' rows fitted to their tables, as a batch to write; undefined when one cannot be. */
  private async prepareTogether(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    messages: readonly NormalizedMessage[],
    sourceId: string | undefined,
  ): Promise<{ batch: PreparedWarehouseBatch; notStored: ValueNotStored[][] } | undefined> {
    const rows: BatchMessageRows[] = [];
    const notStored: ValueNotStored[][] = [];
    let valuesAsJson = true;
    try {
      for (const message of messages) {
        const plan = planWarehouseRows(message, sourceId);
        // Rows of tables that have their columns already are fitted at once, without a promise each.
        const primary =
          this.fitToKnownTable(warehouse, schema, plan.primary) ??
          (await this.prepareRow(client, warehouse, schema, plan.primary));
        const eventRow =
          plan.eventRow &&
          (this.fitToKnownTable(warehouse, schema, plan.eventRow) ??
            (await this.prepareRow(client, warehouse, schema, plan.eventRow)));
        const userRow =
          plan.userRow &&
          (this.fitToKnownTable(warehouse, schema, plan.userRow) ??
            (await this.prepareRow(client, warehouse, schema, plan.userRow)));
        rows.push({ primary, eventRow, userRow });
        notStored.push(
          primary.notStored || eventRow?.notStored || userRow?.notStored
            ? [...(primary.notStored ?? []), ...(eventRow?.notStored ?? []), ...(userRow?.notStored ?? [])]
            : NOTHING_LEFT_OUT,
        );
        valuesAsJson &&=
          primary.readsJsonAsText &&
          eventRow?.readsJsonAsText !== false &&
          userRow?.readsJsonAsText !== false;
      }
      return { batch: prepareWarehouseBatch(schema, rows, { valuesAsJson }), notStored };
    } catch {
      return undefined;
    }
  }

  /** One message in one transaction: all its rows, or none. */
  private async store(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    message: NormalizedMessage,
    sourceId: string | undefined,
  ): Promise<{ result: AttemptResult; connectionLost?: unknown }> {
    let inTransaction = false;
    try {
      const plan = planWarehouseRows(message, sourceId);
      const rows = [plan.primary, plan.eventRow, plan.userRow].filter((row) => row !== undefined);
      const prepared = new Map<WarehouseRow, PreparedRow>();
      for (const row of rows) prepared.set(row, await this.prepareRow(client, warehouse, schema, row));

      await client.query('BEGIN');
      inTransaction = true;
      const inserted = await insertRow(
        client,
        schema,
        plan.primary.table,
        prepared.get(plan.primary)!.values,
      );
      if (inserted) {
        if (plan.eventRow)
          await insertRow(client, schema, plan.eventRow.table, prepared.get(plan.eventRow)!.values);
        if (plan.userRow) await upsertUser(client, schema, prepared.get(plan.userRow)!.values);
      }
      await client.query('COMMIT');
      // A redelivery stored nothing, so it reports nothing: each value left out is counted once.
      return {
        result: delivered(inserted ? [...prepared.values()].flatMap((row) => row.notStored ?? []) : []),
      };
    } catch (error) {
      if (inTransaction) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          return { result: outcomeOfError(rollbackError, warehouse), connectionLost: rollbackError };
        }
      }
      const result = outcomeOfError(error, warehouse);
      return isSqlError(error) || error instanceof PermanentRowError || error instanceof TableRefusedError
        ? { result }
        : { result, connectionLost: error };
    }
  }

  /** The schema and its table registry, created where missing; the registry's tables are remembered. */
  private async ensureSchema(client: PoolClient, warehouse: Warehouse, schema: string): Promise<void> {
    if (warehouse.schemas.has(schema)) return;
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
    const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (found.rowCount === 0) await runDdl(client, `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    await ensureTableRegistry(client, schema);
    warehouse.schemas.set(schema, await readTableRegistry(client, schema));
  }

  private get maxConnectionsPerPool(): number {
    return Math.max(1, this.options.maxConnectionsPerPool ?? DEFAULT_CONNECTIONS_PER_POOL);
  }

  private get maxColumnsPerTable(): number {
    return this.options.maxColumnsPerTable ?? DEFAULT_MAX_COLUMNS_PER_TABLE;
  }

  /**
   * The table and the columns `row` needs, created where missing and within the caps; answers the
   * table's columns. Refuses (`TableRefusedError`) a table Tributary did not create or one past the cap.
   */
  private async createTableOrColumns(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    row: WarehouseRow,
  ): Promise<Map<string, ColumnKind>> {
    const tableKey = qualifiedTableName(schema, row.table);
    // Read again under the lock: the delivery that held it may just have added what this row needs.
    let columns = warehouse.tables.get(tableKey);
    if (!columns) {
      const registered = warehouse.schemas.get(schema) ?? (await readTableRegistry(client, schema));
      columns = registered.has(row.table) ? await readColumns(client, schema, row.table) : new Map();
      // Not registered, or registered but dropped behind Tributary's back: create (or refuse) it.
      if (columns.size === 0) {
        const kind: RegisteredTableKind = STANDARD_TABLES.has(row.table) ? 'standard' : 'event';
        await createRegisteredTable(client, {
          schema,
          table: row.table,
          kind,
          columnsSql: columnsOfNewTable(row.table),
          maxEventTables: this.options.maxEventTables ?? DEFAULT_MAX_EVENT_TABLES,
        });
        registered.set(row.table, kind);
        warehouse.schemas.set(schema, registered);
        columns = await readColumns(client, schema, row.table);
      }
      warehouse.tables.set(tableKey, columns);
    }

    const room = Math.max(0, this.maxColumnsPerTable - columns.size);
    const missing = Object.entries(row.values)
      .filter(([column]) => !columns!.has(column))
      .slice(0, room);
    if (missing.length > 0) {
      const additions = missing.map(
        ([column, value]) =>
          `ADD COLUMN IF NOT EXISTS ${quoteIdentifier(column)} ${STANDARD_COLUMN_TYPES.get(column) ?? inferColumnType(value)}`,
      );
      await runDdl(client, `ALTER TABLE ${tableKey} ${additions.join(', ')}`);
      // Read back rather than assume: a concurrent writer may have created a column with another type.
      columns = await readColumns(client, schema, row.table);
      warehouse.tables.set(tableKey, columns);
    }
    return columns;
  }

  /**
   * Creates the table and any missing column the cap allows, then fits every value to its column's
   * type: a value that does not fit is written as null, one without a column is left out, and both are
   * reported. Runs outside the message's transaction so that no ALTER TABLE lock is held while rows
   * are written.
   */
  private async prepareRow(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    row: WarehouseRow,
  ): Promise<PreparedRow> {
    const tableKey = qualifiedTableName(schema, row.table);
    const columns =
      this.columnsWithoutDdl(warehouse.tables.get(tableKey), row) ??
      (await underTableLock(warehouse, tableKey, () =>
        this.createTableOrColumns(client, warehouse, schema, row),
      ));
    return fitRow(row, columns);
  }

  /** `prepareRow` without a promise, when the table is known and needs no DDL; otherwise undefined. */
  private fitToKnownTable(warehouse: Warehouse, schema: string, row: WarehouseRow): PreparedRow | undefined {
    const columns = this.columnsWithoutDdl(warehouse.tables.get(qualifiedTableName(schema, row.table)), row);
    return columns && fitRow(row, columns);
  }

  /** The known columns when the row needs no new one, or the table is at its column cap (no DDL to attempt). */
  private columnsWithoutDdl(
    known: Map<string, ColumnKind> | undefined,
    row: WarehouseRow,
  ): Map<string, ColumnKind> | undefined {
    return known && (known.size >= this.maxColumnsPerTable || hasEveryColumn(known, row.values))
      ? known
      : undefined;
  }
}

const NOTHING_LEFT_OUT: ValueNotStored[] = [];

/**
 * Fits the row's values to its table's columns, in place: the plan's map is this delivery's own, and
 * a router holds many messages' rows at once.
 */
function fitRow(row: WarehouseRow, columns: ReadonlyMap<string, ColumnKind>): PreparedRow {
  const values: RowValues<WarehouseValue | null> = row.values;
  const prepared: PreparedRow = { table: row.table, values, notStored: undefined, readsJsonAsText: true };
  for (const column of Object.keys(values)) {
    const value = values[column] as WarehouseValue;
    const kind = columns.get(column);
    if (kind === undefined) {
      (prepared.notStored ??= []).push({
        cause: 'column_limit',
        table: row.table,
        column,
        reason:
          `table "${row.table}" has ${columns.size} columns, the most this destination may create ` +
          `(POSTGRES_DESTINATION_MAX_COLUMNS); column "${column}" is not created and its value not stored`,
      });
      delete values[column];
      continue;
    }
    if (!KINDS_READING_JSON_AS_TEXT.has(kind)) prepared.readsJsonAsText = false;
    const fitted = fittedValue(kind, value);
    if (fitted !== undefined) {
      // An own key already (`__proto__` included), so a plain assignment replaces its value.
      if (fitted !== value) values[column] = fitted;
      continue;
    }
    values[column] = null;
    (prepared.notStored ??= []).push({
      cause: 'type_conflict',
      table: row.table,
      column,
      reason: `table "${row.table}": ${whyValueDoesNotFit(column, kind, value)}; stored null`,
    });
  }
  return prepared;
}

/** `"schema"."table"` by schema and table: looked up for every row of every message. */
const qualifiedTableNames = new Map<string, Map<string, string>>();
const MAX_QUALIFIED_TABLE_NAMES = 10_000;
let qualifiedTableNameCount = 0;

function qualifiedTableName(schema: string, table: string): string {
  let ofSchema = qualifiedTableNames.get(schema);
  const known = ofSchema?.get(table);
  if (known !== undefined) return known;
  const name = `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;
  if (qualifiedTableNameCount >= MAX_QUALIFIED_TABLE_NAMES) {
    qualifiedTableNames.clear();
    qualifiedTableNameCount = 0;
    ofSchema = undefined;
  }
  if (!ofSchema) {
    ofSchema = new Map();
    qualifiedTableNames.set(schema, ofSchema);
  }
  ofSchema.set(table, name);
  qualifiedTableNameCount += 1;
  return name;
}

function hasEveryColumn(columns: ReadonlyMap<string, ColumnKind>, values: RowValues): boolean {
  for (const column in values) if (!columns.has(column)) return false;
  return true;
}

/**
 * DDL on one table runs one statement at a time in this process. Messages in flight together often bring
 * the same new columns, and concurrent ALTER TABLEs on one table conflict in PostgreSQL often enough that
 * `runDdl`'s one retry is not always enough, and the message would then go through a delivery retry with
 * backoff. Other processes (router replicas) still meet the conflict handling.
 */
function underTableLock<T>(warehouse: Warehouse, tableKey: string, work: () => Promise<T>): Promise<T> {
  return warehouse.tableLocks.run(tableKey, work);
}

/** True when the row was new; false when a row with this id already existed (a redelivery). */
async function insertRow(
  client: PoolClient,
  schema: string,
  table: string,
  values: Readonly<RowValues<WarehouseValue | null>>,
): Promise<boolean> {
  const columns = Object.keys(values);
  const result = await client.query(
    `INSERT INTO ${quoteIdentifier(schema)}.${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) ` +
      `VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')}) ON CONFLICT (id) DO NOTHING`,
    Object.values(values),
  );
  return result.rowCount === 1;
}

/**
 * The user's latest traits in this source: the given columns replace the stored ones, unless the stored
 * row comes from a later identify (messages can arrive out of order, and a replay brings old ones back).
 */
async function upsertUser(
  client: PoolClient,
  schema: string,
  values: Readonly<RowValues<WarehouseValue | null>>,
): Promise<void> {
  const columns = Object.keys(values);
  const updates = columns
    .filter((column) => column !== 'id' && column !== 'source_id')
    .map((column) => `${quoteIdentifier(column)} = EXCLUDED.${quoteIdentifier(column)}`);
  await client.query(
    `INSERT INTO ${quoteIdentifier(schema)}.users AS existing (${columns.map(quoteIdentifier).join(', ')}) ` +
      `VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')}) ` +
      `ON CONFLICT (id, source_id) DO UPDATE SET ${updates.join(', ')}, uuid_ts = now() ` +
      `WHERE existing.received_at IS NULL OR existing.received_at <= EXCLUDED.received_at`,
    Object.values(values),
  );
}

/** A server-side error: the connection is still usable after a ROLLBACK. */
function isSqlError(error: unknown): boolean {
  return sqlState(error) !== undefined;
}

function outcomeOfError(error: unknown, warehouse: Warehouse): AttemptResult {
  if (error === undefined) return retry('not attempted');
  if (error instanceof PermanentRowError) return discard(`cannot store the message: ${error.message}`);
  if (error instanceof TableRefusedError) return discard(error.message, undefined, error.refusal);
  const state = sqlState(error);
  if (state === undefined) return retry(`PostgreSQL connection error: ${describeError(error)}`);
  const described = `PostgreSQL error ${state}: ${describeError(error)}`;
  if (PERMANENT_SQLSTATE_CLASSES.has(state.slice(0, 2)) || PERMANENT_SQLSTATES.has(state)) {
    return discard(`cannot store the message: ${described}`);
  }
  if (STALE_LAYOUT_SQLSTATES.has(state) || state === '3F000') {
    warehouse.tables.clear();
    warehouse.schemas.clear();
  }
  return retry(described);
}

function describeError(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && !text.includes(code) && sqlState(error) === undefined
    ? `${code} ${text}`
    : text;
}
