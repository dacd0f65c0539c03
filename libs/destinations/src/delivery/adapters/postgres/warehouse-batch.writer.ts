/**
 * Many messages' rows in one transaction, each table's rows in multi-row statements: the warehouse's
 * fast path when the router hands the adapter several messages at once. It keeps the one-message
 * path's rules: a primary row (`ON CONFLICT (id) DO NOTHING`) decides whether the message is new; only
 * a new message inserts its event row and upserts its user; a redelivered message changes nothing.
 * Any error rolls the whole transaction back, and the caller then stores the messages one by one, so a
 * bad message still fails alone.
 */
import type { PoolClient } from 'pg';
import { quoteIdentifier } from './postgres-identifiers';
import type { WarehouseValue } from './warehouse-row.planner';

/** A row ready to insert: its table and its values, already fitted to the table's columns. */
export interface BatchRow {
  table: string;
  values: ReadonlyMap<string, WarehouseValue | null>;
}

export interface BatchMessageRows {
  primary: BatchRow;
  eventRow?: BatchRow;
  userRow?: BatchRow;
}

/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMETERS = 65_000;

/**
 * Writes every message's rows in the open transaction; answers, per message in order, whether it was
 * new (its primary row inserted). Of several messages with the same id in one batch, the first counts.
 */
export async function writeWarehouseBatch(
  client: PoolClient,
  schema: string,
  messages: readonly BatchMessageRows[],
): Promise<boolean[]> {
  const firstOfId = new Map<string, number>();
  messages.forEach((rows, index) => {
    const id = String(rows.primary.values.get('id'));
    if (!firstOfId.has(id)) firstOfId.set(id, index);
  });
  const uniquePrimaries = [...firstOfId.values()].map((index) => messages[index]!.primary);
  const insertedIds = await insertRows(
    client,
    schema,
    uniquePrimaries,
    'ON CONFLICT (id) DO NOTHING RETURNING id',
  );
  const isNew = messages.map(
    (rows, index) =>
      firstOfId.get(String(rows.primary.values.get('id'))) === index &&
      insertedIds.has(String(rows.primary.values.get('id'))),
  );
  const newMessages = messages.filter((_, index) => isNew[index]);
  await insertRows(
    client,
    schema,
    newMessages.flatMap((rows) => (rows.eventRow ? [rows.eventRow] : [])),
    'ON CONFLICT (id) DO NOTHING',
  );
  await upsertUsers(
    client,
    schema,
    newMessages.flatMap((rows) => (rows.userRow ? [rows.userRow] : [])),
  );
  return isNew;
}

/** Rows grouped by table and column list, each group in as few statements as the parameter cap allows. */
async function insertRows(
  client: PoolClient,
  schema: string,
  rows: readonly BatchRow[],
  conflictClause: string,
): Promise<Set<string>> {
  const returned = new Set<string>();
  for (const group of groupByShape(rows)) {
    const columns = [...group[0]!.values.keys()];
    for (const part of chunkForParameters(group, columns.length)) {
      const result = await client.query<{ id: string }>(
        `INSERT INTO ${quoteIdentifier(schema)}.${quoteIdentifier(group[0]!.table)} ` +
          `(${columns.map(quoteIdentifier).join(', ')}) VALUES ${placeholders(part.length, columns.length)} ` +
          conflictClause,
        part.flatMap((row) => [...row.values.values()]),
      );
      for (const row of result.rows ?? []) returned.add(String(row.id));
    }
  }
  return returned;
}

/**
 * The users' latest traits, as one upsert per message would leave them: each only sets its own
 * columns, and only over a stored row that is not later. One statement cannot touch a row twice, so
 * several rows of one user go in rounds (the earliest `received_at` first), one statement per round.
 */
async function upsertUsers(client: PoolClient, schema: string, rows: readonly BatchRow[]): Promise<void> {
  const byUser = new Map<string, BatchRow[]>();
  for (const row of rows) {
    const key = `${String(row.values.get('id'))}\u0000${String(row.values.get('source_id'))}`;
    const ofUser = byUser.get(key);
    if (ofUser) ofUser.push(row);
    else byUser.set(key, [row]);
  }
  const rounds: BatchRow[][] = [];
  // Users in the order of their keys: concurrent batches of one destination (the router has several
  // under way) then lock the users they share in the same order, rather than in a cycle that
  // PostgreSQL breaks by failing one of them (whose messages then go one by one).
  const userKeys = [...byUser.keys()].sort();
  for (const key of userKeys) {
    const ofUser = byUser.get(key)!;
    ofUser.sort((left, right) => receivedAtOf(left) - receivedAtOf(right));
    ofUser.forEach((row, index) => (rounds[index] ??= []).push(row));
  }
  for (const round of rounds) {
    for (const group of groupByShape(round)) {
      const columns = [...group[0]!.values.keys()];
      const updates = columns
        .filter((column) => column !== 'id' && column !== 'source_id')
        .map((column) => `${quoteIdentifier(column)} = EXCLUDED.${quoteIdentifier(column)}`);
      for (const part of chunkForParameters(group, columns.length)) {
        await client.query(
          `INSERT INTO ${quoteIdentifier(schema)}.users AS existing (${columns.map(quoteIdentifier).join(', ')}) ` +
            `VALUES ${placeholders(part.length, columns.length)} ` +
            `ON CONFLICT (id, source_id) DO UPDATE SET ${updates.join(', ')}, uuid_ts = now() ` +
            `WHERE existing.received_at IS NULL OR existing.received_at <= EXCLUDED.received_at`,
          part.flatMap((row) => [...row.values.values()]),
        );
      }
    }
  }
}

function receivedAtOf(row: BatchRow): number {
  const value = row.values.get('received_at');
  const time =
    typeof value === 'object' && value !== null && 'getTime' in value
      ? (value as Date).getTime()
      : Date.parse(String(value));
  return Number.isNaN(time) ? -Infinity : time;
}

function groupByShape(rows: readonly BatchRow[]): BatchRow[][] {
  const groups = new Map<string, BatchRow[]>();
  for (const row of rows) {
    const key = `${row.table}\u0000${[...row.values.keys()].join('\u0000')}`;
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return [...groups.values()];
}

function chunkForParameters(rows: readonly BatchRow[], columns: number): BatchRow[][] {
  const size = Math.max(1, Math.floor(MAX_PARAMETERS / Math.max(1, columns)));
  const chunks: BatchRow[][] = [];
  for (let start = 0; start < rows.length; start += size) chunks.push(rows.slice(start, start + size));
  return chunks;
}

/** By `rows x columns`: a router's batches come in a few shapes, each written again and again. */
const placeholderTexts = new Map<string, string>();
const MAX_PLACEHOLDER_TEXTS = 256;

function placeholders(rows: number, columns: number): string {
  const key = `${rows}x${columns}`;
  const known = placeholderTexts.get(key);
  if (known !== undefined) return known;
  const tuples: string[] = [];
  for (let row = 0; row < rows; row += 1) {
    const base = row * columns;
    tuples.push(`(${Array.from({ length: columns }, (_, column) => `$${base + column + 1}`).join(', ')})`);
  }
  const text = tuples.join(', ');
  if (placeholderTexts.size >= MAX_PLACEHOLDER_TEXTS) placeholderTexts.clear();
  placeholderTexts.set(key, text);
  return text;
}
