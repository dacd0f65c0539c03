/**
 * Which tables of a schema Tributary created, so that it writes to those and no others. Each schema
 * Tributary writes to holds a registry table, `_tributary_tables`, with one row per table Tributary
 * created there; the row is inserted in the same transaction as the CREATE TABLE, so a table is in the
 * registry exactly when Tributary created it. A table of the same name that exists without a registry
 * row belongs to someone else (another application's `users`, a view, a table made by hand) and is
 * never written to, altered or adopted.
 *
 * The registry lives in the schema it describes rather than in one schema for the whole database:
 * Tributary already needs CREATE on the schema it writes to and no more, and dropping a source's schema
 * drops its registry with it. (No table can clash with it: event and property names are snake_cased
 * with leading underscores removed.)
 */
import type { PoolClient } from 'pg';
import { quoteIdentifier } from './postgres-identifiers';
import { runDdl } from './table-ddl';

export const TABLE_REGISTRY = '_tributary_tables';

/** `standard`: the seven Segment tables every schema may get; `event`: one per track event name. */
export type RegisteredTableKind = 'standard' | 'event';

export type TableRefusalCause = 'foreign_table' | 'table_limit';

/** Tributary will not write this table: it is someone else's, or it would pass the table limit. */
export class TableRefusedError extends Error {
  constructor(
    readonly refusal: TableRefusalCause,
    message: string,
  ) {
    super(message);
  }
}

const registryOf = (schema: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(TABLE_REGISTRY)}`;

/** Creates the schema's registry when it has none. */
export async function ensureTableRegistry(client: PoolClient, schema: string): Promise<void> {
  await runDdl(
    client,
    `CREATE TABLE IF NOT EXISTS ${registryOf(schema)} (` +
      'table_name text PRIMARY KEY, kind text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
}

/** The tables Tributary created in `schema`, by name. */
export async function readTableRegistry(
  client: PoolClient,
  schema: string,
): Promise<Map<string, RegisteredTableKind>> {
  const result = await client.query<{ table_name: string; kind: RegisteredTableKind }>(
    `SELECT table_name, kind FROM ${registryOf(schema)}`,
  );
  return new Map(result.rows.map((row) => [row.table_name, row.kind]));
}

export interface TableToCreate {
  readonly schema: string;
  readonly table: string;
  readonly kind: RegisteredTableKind;
  /** The column definitions inside `CREATE TABLE ... ( )`. */
  readonly columnsSql: string;
  /** Event tables allowed in the schema; standard tables are not counted. */
  readonly maxEventTables: number;
}

/**
 * Creates a table and registers it, in one transaction, or refuses. The registry is locked for the
 * transaction, so concurrent creations (other deliveries, other router replicas) run one after the
 * other and the table limit holds exactly. Answers without creating anything when the table is
 * already registered and exists (another process created it meanwhile).
 */
export async function createRegisteredTable(client: PoolClient, table: TableToCreate): Promise<void> {
  const qualified = `${quoteIdentifier(table.schema)}.${quoteIdentifier(table.table)}`;
  await client.query('BEGIN');
  try {
    // Conflicts with itself, not with reads of the registry: creations queue, deliveries do not wait.
    await client.query(`LOCK TABLE ${registryOf(table.schema)} IN SHARE ROW EXCLUSIVE MODE`);
    const registered = await readTableRegistry(client, table.schema);
    const existing = await client.query(
      'SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ' +
        'WHERE n.nspname = $1 AND c.relname = $2',
      [table.schema, table.table],
    );
    if (existing.rowCount !== 0) {
      await client.query('COMMIT');
      if (registered.has(table.table)) return;
      throw new TableRefusedError(
        'foreign_table',
        `table "${table.schema}"."${table.table}" exists but Tributary did not create it (it is not in ` +
          `"${table.schema}"."${TABLE_REGISTRY}"); Tributary writes only to tables it created: ` +
          'choose another schema for this destination (if an earlier Tributary version created the table, ' +
          'register it as the README says under "Upgrading from a version without the registry")',
      );
    }
    if (!registered.has(table.table) && table.kind === 'event') {
      const eventTables = [...registered.values()].filter((kind) => kind === 'event').length;
      if (eventTables >= table.maxEventTables) {
        await client.query('COMMIT');
        throw new TableRefusedError(
          'table_limit',
          `schema "${table.schema}" already has ${eventTables} event tables, the most this destination ` +
            `may create (POSTGRES_DESTINATION_MAX_TABLES); the table "${table.table}" is not created`,
        );
      }
    }
    await client.query(`CREATE TABLE ${qualified} (${table.columnsSql})`);
    // A registered table that was dropped behind Tributary's back is created again under its old row.
    await client.query(
      `INSERT INTO ${registryOf(table.schema)} (table_name, kind) VALUES ($1, $2) ON CONFLICT (table_name) DO NOTHING`,
      [table.table, table.kind],
    );
    await client.query('COMMIT');
  } catch (error) {
    if (!(error instanceof TableRefusedError)) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
