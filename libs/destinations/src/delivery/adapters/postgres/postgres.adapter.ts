/**
 * PostgreSQL as a warehouse: every message becomes rows in Segment-style tables (see
 * `warehouse-row.planner.ts`), in the schema of the destination's `schema` setting. Tables and columns
 * are created as messages need them; a redelivered message (same messageId) changes nothing, because
 * `id` is every table's primary key and dependent rows are written only with a new primary row.
 *
 * Outcomes: a connection or server failure is `retry` (nothing was committed for that message); a value
 * the database cannot store (a type that does not fit its column, a NUL in a string, too many columns)
 * is `discard` with the reason. One pg Pool per connection string, reused across calls.
 */
import { Pool, type PoolClient } from 'pg';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  discard,
  delivered,
  egressDenied,
  retry,
  sameOutcomeForAll,
  type DeliveryAdapter,
  type DeliveryOutcome,
  type DeliveryRequest,
  type DeliveryResult,
} from '../../delivery-adapter.port';
import {
  STANDARD_COLUMN_TYPES,
  columnKindOf,
  fitValueToColumn,
  inferColumnType,
  planWarehouseRows,
  type ColumnKind,
  type WarehouseRow,
  type WarehouseValue,
} from './warehouse-row.planner';
import { EgressGuard, isEgressDenied } from '../../egress/egress-guard';
import { pinnedPostgresConnection, withoutServerMessages } from './postgres-connection';

/** The catalog's pattern for the `schema` setting, checked again here because the value reaches SQL. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * SQLSTATE classes that mean "this row can never be stored": 22 data exception (a NUL byte, a value out
 * of range), 23 integrity constraint, 54 program limit (more than 1,600 columns). Every other failure
 * may pass (a restart, a lock, a permission being granted), so it is retried.
 */
const PERMANENT_SQLSTATE_CLASSES = new Set(['22', '23', '54']);
const PERMANENT_SQLSTATES = new Set(['42804', '42846']);
/** The cached table layout is stale (someone dropped a table or column): forget it and retry. */
const STALE_LAYOUT_SQLSTATES = new Set(['42P01', '42703']);
/** Raised by concurrent `CREATE ... IF NOT EXISTS` of the same object; running it again is a no-op. */
const CONCURRENT_DDL_SQLSTATES = new Set(['23505', '42P06', '42P07', '42701', '40P01']);

export interface PostgresAdapterOptions {
  /** Connections per pool (one pool per connection string). Default 4. */
  maxConnectionsPerPool?: number;
  /** How long to wait for a connection before the messages are retried later. Default 5 s. */
  connectionTimeoutMs?: number;
  /** Per statement, so a locked table cannot hold the consumer forever. Default 30 s. */
  statementTimeoutMs?: number;
  /** The egress guard connections go through (see `postgres-connection.ts`). Default: the `open` policy. */
  egressGuard?: EgressGuard;
}

/** A database reached through one connection string, with what we know of its tables. */
interface Warehouse {
  pool: Pool;
  /** Schemas known to exist. */
  schemas: Set<string>;
  /** `"schema"."table"` → column name → how it stores values. */
  tables: Map<string, Map<string, ColumnKind>>;
  /** `"schema"."table"` → the DDL on it in progress in this process (see `underTableLock`). */
  tableLocks: Map<string, Promise<void>>;
}

class PermanentRowError extends Error {}

export class PostgresDeliveryAdapter implements DeliveryAdapter {
  readonly slug = 'postgres';
  private readonly warehouses = new Map<string, Warehouse>();
  private readonly egressGuard: EgressGuard;
  /** Per connection string: may the server's messages be shown (see `pinnedPostgresConnection`)? */
  private readonly serverMessagesShown = new Map<string, boolean>();

  constructor(private readonly options: PostgresAdapterOptions = {}) {
    this.egressGuard = options.egressGuard ?? new EgressGuard();
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    const results = await this.deliverToWarehouse(request);
    const connectionString = request.settings['connection_string'];
    const shown =
      typeof connectionString !== 'string' || this.serverMessagesShown.get(connectionString) !== false;
    return shown ? results : withoutServerMessages(results);
  }

  private async deliverToWarehouse(request: DeliveryRequest): Promise<DeliveryResult[]> {
    if (request.messages.length === 0) return [];
    const connectionString = request.settings['connection_string'];
    if (typeof connectionString !== 'string' || connectionString.trim() === '') {
      return sameOutcomeForAll(
        request.messages,
        discard('destination misconfigured: setting "connection_string" is not set'),
      );
    }
    const rawSchema = request.settings['schema'];
    const schema = rawSchema === undefined || rawSchema === null || rawSchema === '' ? 'public' : rawSchema;
    if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
      return sameOutcomeForAll(
        request.messages,
        discard('destination misconfigured: setting "schema" must match ^[A-Za-z_][A-Za-z0-9_]*$'),
      );
    }

    let warehouse: Warehouse;
    let client: PoolClient;
    try {
      warehouse = await this.warehouseFor(connectionString);
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

  async close(): Promise<void> {
    const pools = [...this.warehouses.values()].map((warehouse) => warehouse.pool);
    this.warehouses.clear();
    this.serverMessagesShown.clear();
    await Promise.allSettled(pools.map((pool) => pool.end()));
  }

  /** The pool connects to the address the guard checked when it was created (no DNS rebinding). */
  private async warehouseFor(connectionString: string): Promise<Warehouse> {
    const existing = this.warehouses.get(connectionString);
    if (existing) return existing;
    const connection = await pinnedPostgresConnection(connectionString, this.egressGuard);
    const createdMeanwhile = this.warehouses.get(connectionString);
    if (createdMeanwhile) return createdMeanwhile;
    this.serverMessagesShown.set(connectionString, connection.serverMessagesShown);
    const pool = new Pool({
      ...connection.poolConfig,
      max: this.options.maxConnectionsPerPool ?? 4,
      connectionTimeoutMillis: this.options.connectionTimeoutMs ?? 5_000,
      statement_timeout: this.options.statementTimeoutMs ?? 30_000,
      // Naive date-times in properties are read as UTC, whatever the server's default time zone.
      options: '-c TimeZone=UTC',
    });
    // An idle connection dropped by the server emits here; unhandled, it would crash the process.
    pool.on('error', () => undefined);
    const warehouse: Warehouse = { pool, schemas: new Set(), tables: new Map(), tableLocks: new Map() };
    this.warehouses.set(connectionString, warehouse);
    return warehouse;
  }

  /** One message in one transaction: all its rows, or none. */
  private async store(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    message: NormalizedMessage,
    sourceId: string | undefined,
  ): Promise<{ result: DeliveryOutcome; connectionLost?: unknown }> {
    let inTransaction = false;
    try {
      const plan = planWarehouseRows(message, sourceId);
      const rows = [plan.primary, plan.eventRow, plan.userRow].filter((row) => row !== undefined);
      const fitted = new Map<WarehouseRow, Map<string, WarehouseValue>>();
      for (const row of rows) fitted.set(row, await this.prepareRow(client, warehouse, schema, row));

      await client.query('BEGIN');
      inTransaction = true;
      const inserted = await insertRow(client, schema, plan.primary.table, fitted.get(plan.primary)!);
      if (inserted) {
        if (plan.eventRow) await insertRow(client, schema, plan.eventRow.table, fitted.get(plan.eventRow)!);
        if (plan.userRow) await upsertUser(client, schema, fitted.get(plan.userRow)!);
      }
      await client.query('COMMIT');
      return { result: delivered() };
    } catch (error) {
      if (inTransaction) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          return { result: outcomeOfError(rollbackError, warehouse), connectionLost: rollbackError };
        }
      }
      const result = outcomeOfError(error, warehouse);
      return isSqlError(error) || error instanceof PermanentRowError
        ? { result }
        : { result, connectionLost: error };
    }
  }

  private async ensureSchema(client: PoolClient, warehouse: Warehouse, schema: string): Promise<void> {
    if (warehouse.schemas.has(schema)) return;
    // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
    const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (found.rowCount === 0) await runDdl(client, `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`);
    warehouse.schemas.add(schema);
  }

  /** The table and every column `row` needs, created where missing; answers the table's columns. */
  private async createTableOrColumns(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    row: WarehouseRow,
  ): Promise<Map<string, ColumnKind>> {
    const tableKey = `${quoteIdentifier(schema)}.${quoteIdentifier(row.table)}`;
    // Read again under the lock: the delivery that held it may just have added what this row needs.
    let columns = warehouse.tables.get(tableKey);
    if (!columns) {
      // The columns every message has are created up front, so queries on them work from the start.
      const commonColumns =
        row.table === 'users'
          ? 'received_at timestamptz, "timestamp" timestamptz'
          : 'received_at timestamptz, sent_at timestamptz, original_timestamp timestamptz, "timestamp" timestamptz, ' +
            'user_id text, anonymous_id text';
      await runDdl(
        client,
        `CREATE TABLE IF NOT EXISTS ${tableKey} (` +
          `id text PRIMARY KEY, ${commonColumns}, uuid_ts timestamptz NOT NULL DEFAULT now())`,
      );
      columns = await readColumns(client, schema, row.table);
      warehouse.tables.set(tableKey, columns);
    }

    const missing = [...row.values.entries()].filter(([column]) => !columns!.has(column));
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
   * Creates the table and any missing column, then fits every value to its column's type. Runs outside
   * the message's transaction so that no ALTER TABLE lock is held while rows are written.
   */
  private async prepareRow(
    client: PoolClient,
    warehouse: Warehouse,
    schema: string,
    row: WarehouseRow,
  ): Promise<Map<string, WarehouseValue>> {
    const tableKey = `${quoteIdentifier(schema)}.${quoteIdentifier(row.table)}`;
    const known = warehouse.tables.get(tableKey);
    const columns =
      known && [...row.values.keys()].every((column) => known.has(column))
        ? known
        : await underTableLock(warehouse, tableKey, () =>
            this.createTableOrColumns(client, warehouse, schema, row),
          );

    const fitted = new Map<string, WarehouseValue>();
    for (const [column, value] of row.values) {
      const fit = fitValueToColumn(column, columns.get(column) ?? 'other', value);
      if (!fit.fits) throw new PermanentRowError(`table "${row.table}": ${fit.reason}`);
      fitted.set(column, fit.value);
    }
    return fitted;
  }
}

/** `"name"` with embedded quotes doubled: safe for any string without a NUL byte (the planner strips those). */
export function quoteIdentifier(name: string): string {
  if (name.includes('\u0000')) throw new PermanentRowError('identifier contains a NUL byte');
  return `"${name.replace(/"/g, '""')}"`;
}

async function readColumns(
  client: PoolClient,
  schema: string,
  table: string,
): Promise<Map<string, ColumnKind>> {
  const result = await client.query<{ column_name: string; data_type: string }>(
    'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schema, table],
  );
  return new Map(result.rows.map((column) => [column.column_name, columnKindOf(column.data_type)]));
}

/**
 * DDL on one table runs one statement at a time in this process. Messages in flight together often bring
 * the same new columns, and concurrent ALTER TABLEs on one table conflict in PostgreSQL often enough that
 * `runDdl`'s one retry was not always enough: the message then went through a delivery retry with backoff
 * (seen in the suite under load). Other processes (router replicas) still meet the conflict handling.
 */
async function underTableLock<T>(warehouse: Warehouse, tableKey: string, work: () => Promise<T>): Promise<T> {
  const previous = warehouse.tableLocks.get(tableKey) ?? Promise.resolve();
  const running = previous.then(work);
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  warehouse.tableLocks.set(tableKey, settled);
  try {
    return await running;
  } finally {
    if (warehouse.tableLocks.get(tableKey) === settled) warehouse.tableLocks.delete(tableKey);
  }
}

async function runDdl(client: PoolClient, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (error) {
    if (!CONCURRENT_DDL_SQLSTATES.has(sqlState(error) ?? '')) throw error;
    await client.query(sql);
  }
}

/** True when the row was new; false when a row with this id already existed (a redelivery). */
async function insertRow(
  client: PoolClient,
  schema: string,
  table: string,
  values: ReadonlyMap<string, WarehouseValue>,
): Promise<boolean> {
  const columns = [...values.keys()];
  const result = await client.query(
    `INSERT INTO ${quoteIdentifier(schema)}.${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) ` +
      `VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')}) ON CONFLICT (id) DO NOTHING`,
    [...values.values()],
  );
  return result.rowCount === 1;
}

/**
 * The user's latest traits: the given columns replace the stored ones, unless the stored row comes from a
 * later identify (messages can arrive out of order, and a replay brings old ones back).
 */
async function upsertUser(
  client: PoolClient,
  schema: string,
  values: ReadonlyMap<string, WarehouseValue>,
): Promise<void> {
  const columns = [...values.keys()];
  const updates = columns
    .filter((column) => column !== 'id')
    .map((column) => `${quoteIdentifier(column)} = EXCLUDED.${quoteIdentifier(column)}`);
  await client.query(
    `INSERT INTO ${quoteIdentifier(schema)}.users AS existing (${columns.map(quoteIdentifier).join(', ')}) ` +
      `VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')}) ` +
      `ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}, uuid_ts = now() ` +
      `WHERE existing.received_at IS NULL OR existing.received_at <= EXCLUDED.received_at`,
    [...values.values()],
  );
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** A server-side error: the connection is still usable after a ROLLBACK. */
function isSqlError(error: unknown): boolean {
  return sqlState(error) !== undefined;
}

function outcomeOfError(error: unknown, warehouse: Warehouse): DeliveryOutcome {
  if (error === undefined) return retry('not attempted');
  if (error instanceof PermanentRowError) return discard(`cannot store the message: ${error.message}`);
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
