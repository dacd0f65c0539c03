/**
 * The DDL of the PostgreSQL destination's tables: the columns a new table starts with, what a table
 * has, and statements that may meet the same DDL of another delivery or router replica. Which tables
 * Tributary may write is `table-registry.ts`.
 */
import type { PoolClient } from 'pg';
import { sqlState } from './postgres-identifiers';
import { columnKindOf, type ColumnKind } from './warehouse-row.planner';

/** Raised by concurrent `CREATE ... IF NOT EXISTS` of the same object; running it again is a no-op. */
const CONCURRENT_DDL_SQLSTATES = new Set(['23505', '42P06', '42P07', '42701', '40P01']);

/** The columns a new table starts with: every message has them, so queries on them work from the start. */
export function columnsOfNewTable(table: string): string {
  const tracking = 'uuid_ts timestamptz NOT NULL DEFAULT now()';
  if (table === 'users') {
    // Keyed by user and source: sources sharing a schema each keep their own users.
    return (
      'id text NOT NULL, source_id text NOT NULL, received_at timestamptz, "timestamp" timestamptz, ' +
      `${tracking}, PRIMARY KEY (id, source_id)`
    );
  }
  return (
    'id text PRIMARY KEY, received_at timestamptz, sent_at timestamptz, original_timestamp timestamptz, ' +
    `"timestamp" timestamptz, user_id text, anonymous_id text, ${tracking}`
  );
}

/** The table's columns, each with how it stores values. */
export async function readColumns(
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

/** Runs DDL once more when it met the same DDL running elsewhere (a no-op the second time). */
export async function runDdl(client: PoolClient, sql: string): Promise<void> {
  try {
    await client.query(sql);
  } catch (error) {
    if (!CONCURRENT_DDL_SQLSTATES.has(sqlState(error) ?? '')) throw error;
    await client.query(sql);
  }
}
