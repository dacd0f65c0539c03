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
import type { RowValues, WarehouseValue } from './warehouse-row.planner';

/** A row ready to insert: its table and its values, already fitted to the table's columns. */
export interface BatchRow {
  table: string;
  values: Readonly<RowValues<WarehouseValue | null>>;
}

export interface BatchMessageRows {
  primary: BatchRow;
  eventRow?: BatchRow;
  userRow?: BatchRow;
}

/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMETERS = 65_000;

/** A batch ready to write, built from its rows (see `prepareWarehouseBatch`). */
export interface PreparedWarehouseBatch {
  /** The batch goes in a single statement, atomic by itself: no transaction is needed around it. */
  readonly inOneStatement: boolean;
  /**
   * Writes the rows (in the open transaction, unless `inOneStatement`); answers, per message in order,
   * whether it was new (its primary row inserted).
   */
  write(client: PoolClient): Promise<boolean[]>;
}

/**
 * Writes every message's rows in the open transaction (none is needed when `writesInOneStatement`);
 * answers, per message in order, whether it was new (its primary row inserted). Of several messages
 * with the same id in one batch, the first counts.
 *
 * `valuesAsJson`: each group of rows goes as one JSON parameter that `json_populate_recordset` turns
 * into rows of the table's own type, and the primary and event rows of the whole batch go in one
 * statement (the event rows only of the messages whose primary row it inserted). A round trip per
 * table and thousands of parameters per batch cost the database more than the rows themselves. Only
 * for columns whose kind reads a JSON value as its parameter text would be read (text, number,
 * boolean, timestamp), which the caller checks; otherwise each group is a multi-row statement of
 * parameters, as before. When no user has two rows in the batch, the users' upserts go in that one
 * statement too (for the messages it inserted), so the whole batch is one statement.
 */
export function writeWarehouseBatch(
  client: PoolClient,
  schema: string,
  messages: readonly BatchMessageRows[],
  options: { valuesAsJson?: boolean } = {},
): Promise<boolean[]> {
  return prepareWarehouseBatch(schema, messages, options).write(client);
}

/**
 * `writeWarehouseBatch` in two steps. A batch that goes in one statement has its statement built here,
 * and `write` keeps only that text, its parameters and the ids: the rows are garbage while the
 * database works (a thousand messages' rows in flight were copied by every young-generation collection
 * that ran meanwhile). Any other batch keeps its rows for the statements `write` runs.
 */
export function prepareWarehouseBatch(
  schema: string,
  messages: readonly BatchMessageRows[],
  options: { valuesAsJson?: boolean } = {},
): PreparedWarehouseBatch {
  return writesInOneStatement(messages, options)
    ? inOneStatement(schema, messages)
    : { inOneStatement: false, write: (client) => writeInSteps(client, schema, messages, options) };
}

/**
 * A function of its own so that `write` closes over the statement alone: closures of one function
 * share its captured variables, so a closure beside it that captured the rows would keep them alive.
 */
function inOneStatement(schema: string, messages: readonly BatchMessageRows[]): PreparedWarehouseBatch {
  const ids = messages.map(primaryIdOf);
  const { firstOfId, firstMessages, primaries, eventRows } = firstOfEachId(messages);
  const statement = primaryAndEventRowsAsJson(
    schema,
    primaries,
    eventRows,
    firstMessages.filter((rows) => rows.userRow),
  );
  return {
    inOneStatement: true,
    write: async (client) => {
      const result = await client.query<{ id: string }>(statement.text, statement.parameters);
      return newnessOf(ids, firstOfId, new Set(result.rows.map((row) => String(row.id))));
    },
  };
}

/** A batch in several statements: values as JSON with users upserted in rounds, or as parameters. */
async function writeInSteps(
  client: PoolClient,
  schema: string,
  messages: readonly BatchMessageRows[],
  options: { valuesAsJson?: boolean },
): Promise<boolean[]> {
  const { firstOfId, primaries, eventRows } = firstOfEachId(messages);
  let insertedIds: Set<string>;
  if (options.valuesAsJson) {
    const statement = primaryAndEventRowsAsJson(schema, primaries, eventRows, []);
    const result = await client.query<{ id: string }>(statement.text, statement.parameters);
    insertedIds = new Set(result.rows.map((row) => String(row.id)));
  } else {
    insertedIds = await insertRows(client, schema, primaries, 'ON CONFLICT (id) DO NOTHING RETURNING id');
  }
  const isNew = newnessOf(messages.map(primaryIdOf), firstOfId, insertedIds);
  const newMessages = messages.filter((_, index) => isNew[index]);
  if (!options.valuesAsJson) {
    await insertRows(
      client,
      schema,
      newMessages.flatMap((rows) => (rows.eventRow ? [rows.eventRow] : [])),
      'ON CONFLICT (id) DO NOTHING',
    );
  }
  await upsertUsers(
    client,
    schema,
    newMessages.flatMap((rows) => (rows.userRow ? [rows.userRow] : [])),
    options.valuesAsJson === true,
  );
  return isNew;
}

/**
 * True when `writeWarehouseBatch` writes the batch in a single statement, which is atomic by itself:
 * values as JSON, and no user with two rows among the messages (one statement cannot upsert a row
 * twice, so several identifies of one user go in rounds).
 */
export function writesInOneStatement(
  messages: readonly BatchMessageRows[],
  options: { valuesAsJson?: boolean },
): boolean {
  if (!options.valuesAsJson) return false;
  const users = new Set<string>();
  for (const index of firstMessageOfEachId(messages).values()) {
    const userRow = messages[index]!.userRow;
    if (!userRow) continue;
    const key = userKeyOf(userRow);
    if (users.has(key)) return false;
    users.add(key);
  }
  return true;
}

/**
 * The first message of each id in the batch (a later one with the same id is a redelivery of it), with
 * their primary and event rows: only those are inserted.
 */
function firstOfEachId(messages: readonly BatchMessageRows[]) {
  const firstOfId = firstMessageOfEachId(messages);
  const firstMessages = [...firstOfId.values()].map((index) => messages[index]!);
  return {
    firstOfId,
    firstMessages,
    primaries: firstMessages.map((rows) => rows.primary),
    eventRows: firstMessages.flatMap((rows) => (rows.eventRow ? [rows.eventRow] : [])),
  };
}

/** Per message: new when it is the first of its id and its primary row was inserted. */
function newnessOf(
  ids: readonly string[],
  firstOfId: ReadonlyMap<string, number>,
  insertedIds: ReadonlySet<string>,
): boolean[] {
  return ids.map((id, index) => firstOfId.get(id) === index && insertedIds.has(id));
}

/** Message id → index of its first message in the batch. */
function firstMessageOfEachId(messages: readonly BatchMessageRows[]): Map<string, number> {
  const firstOfId = new Map<string, number>();
  messages.forEach((rows, index) => {
    const id = primaryIdOf(rows);
    if (!firstOfId.has(id)) firstOfId.set(id, index);
  });
  return firstOfId;
}

function primaryIdOf(rows: BatchMessageRows): string {
  return String(rows.primary.values['id']);
}

function userKeyOf(row: BatchRow): string {
  return `${String(row.values['id'])}\u0000${String(row.values['source_id'])}`;
}

/** The JSON key carrying an identify's message id beside its users row; never a column name we write. */
const MESSAGE_ID_KEY = 'message id';

/**
 * One statement: each group of primary rows inserted from one JSON parameter (`RETURNING id`), then
 * each group of event rows, keeping only those whose id one of the primary inserts returned (an event
 * row goes with a new message only), then the users' upserts of `withUsers` (at most one row per user)
 * whose message it inserted. The statement answers the ids inserted.
 */
function primaryAndEventRowsAsJson(
  schema: string,
  primaries: readonly BatchRow[],
  eventRows: readonly BatchRow[],
  withUsers: readonly BatchMessageRows[],
): { text: string; parameters: string[] } {
  const parameters: string[] = [];
  const steps: string[] = [];
  const primaryGroups = groupByShape(primaries);
  primaryGroups.forEach((group, index) => {
    parameters.push(rowsAsJson(group));
    steps.push(
      `p${index} AS (${insertFromJson(schema, group, parameters.length)} ON CONFLICT (id) DO NOTHING RETURNING id)`,
    );
  });
  const inserted = primaryGroups.map((_, index) => `SELECT id FROM p${index}`).join(' UNION ALL ');
  steps.push(`inserted AS (${inserted})`);
  groupByShape(eventRows).forEach((group, index) => {
    parameters.push(rowsAsJson(group));
    steps.push(
      `e${index} AS (${insertFromJson(schema, group, parameters.length)} ` +
        'WHERE id IN (SELECT id FROM inserted) ON CONFLICT (id) DO NOTHING)',
    );
  });
  // Users in key order (see `upsertUsers`), each group keeping only the rows of inserted messages.
  // Each key made once, not once per comparison: the sort compares n log n times.
  const users = withUsers
    .map((rows) => ({ rows, key: userKeyOf(rows.userRow!) }))
    .sort((left, right) => compareText(left.key, right.key))
    .map(({ rows }) => rows);
  groupByShape(users.map((rows) => rows.userRow!)).forEach((group, index) => {
    const ofGroup = new Set(group);
    const rows = users.filter((each) => ofGroup.has(each.userRow!));
    parameters.push(
      rowsAsJson(
        rows.map((each) => each.userRow!),
        rows.map(primaryIdOf),
      ),
    );
    const table = `${quoteIdentifier(schema)}.users`;
    const columns = Object.keys(group[0]!.values).map(quoteIdentifier);
    steps.push(
      `u${index} AS (INSERT INTO ${table} AS existing (${columns.join(', ')}) ` +
        `SELECT ${columns.map((column) => `user_row.${column}`).join(', ')} ` +
        `FROM json_array_elements($${parameters.length}) WITH ORDINALITY AS user_json(fields, position), ` +
        `json_populate_record(NULL::${table}, user_json.fields) AS user_row ` +
        `WHERE user_json.fields->>'${MESSAGE_ID_KEY}' IN (SELECT id FROM inserted) ` +
        // The join with `inserted` may reorder the rows; the upserts must keep the key order.
        `ORDER BY user_json.position ${userUpsertClause(columns)})`,
    );
  });
  return { text: `WITH ${steps.join(', ')} SELECT id FROM inserted`, parameters };
}

/** `INSERT INTO table (columns) SELECT columns FROM` the rows of parameter `$n`, typed as the table's rows. */
function insertFromJson(schema: string, group: readonly BatchRow[], parameter: number): string {
  const table = `${quoteIdentifier(schema)}.${quoteIdentifier(group[0]!.table)}`;
  const columns = Object.keys(group[0]!.values).map(quoteIdentifier).join(', ');
  return (
    `INSERT INTO ${table} (${columns}) ` +
    `SELECT ${columns} FROM json_populate_recordset(NULL::${table}, $${parameter})`
  );
}

/**
 * The rows as a JSON array of objects keyed by column name (`json_populate_recordset` reads keys by
 * name): the rows' own value objects, serialized by a single `JSON.stringify` (its native serializer
 * allocates about a third less than writing the text value by value). With `messageIds`, each row
 * also carries its message's id under `MESSAGE_ID_KEY`, in a copy (the row itself is left as it is).
 * Values `JSON.stringify` cannot write (undefined) leave their key out.
 */
function rowsAsJson(rows: readonly BatchRow[], messageIds?: readonly string[]): string {
  const objects = new Array<Readonly<RowValues<unknown>>>(rows.length);
  for (let index = 0; index < rows.length; index += 1) {
    const values = rows[index]!.values;
    // Spread copies an own `__proto__` key as a key, not as the prototype.
    objects[index] = messageIds ? { ...values, [MESSAGE_ID_KEY]: messageIds[index] } : values;
  }
  return JSON.stringify(objects);
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
    const columns = Object.keys(group[0]!.values);
    for (const part of chunkForParameters(group, columns.length)) {
      const result = await client.query<{ id: string }>(
        `INSERT INTO ${quoteIdentifier(schema)}.${quoteIdentifier(group[0]!.table)} ` +
          `(${columns.map(quoteIdentifier).join(', ')}) VALUES ${placeholders(part.length, columns.length)} ` +
          conflictClause,
        part.flatMap((row) => Object.values(row.values)),
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
async function upsertUsers(
  client: PoolClient,
  schema: string,
  rows: readonly BatchRow[],
  valuesAsJson: boolean,
): Promise<void> {
  const byUser = new Map<string, BatchRow[]>();
  for (const row of rows) {
    const key = userKeyOf(row);
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
      const columns = Object.keys(group[0]!.values);
      const upsert = userUpsertClause(columns.map(quoteIdentifier));
      if (valuesAsJson) {
        const table = `${quoteIdentifier(schema)}.users`;
        const quoted = columns.map(quoteIdentifier).join(', ');
        await client.query(
          `INSERT INTO ${table} AS existing (${quoted}) ` +
            `SELECT ${quoted} FROM json_populate_recordset(NULL::${table}, $1) ${upsert}`,
          [rowsAsJson(group)],
        );
        continue;
      }
      for (const part of chunkForParameters(group, columns.length)) {
        await client.query(
          `INSERT INTO ${quoteIdentifier(schema)}.users AS existing (${columns.map(quoteIdentifier).join(', ')}) ` +
            `VALUES ${placeholders(part.length, columns.length)} ${upsert}`,
          part.flatMap((row) => Object.values(row.values)),
        );
      }
    }
  }
}

/**
 * Each upsert only sets its own columns, and only over a stored row that is not later (messages can
 * arrive out of order, and a replay brings old ones back). `quotedColumns` are quoted identifiers.
 */
function userUpsertClause(quotedColumns: readonly string[]): string {
  const updates = quotedColumns
    .filter((column) => column !== '"id"' && column !== '"source_id"')
    .map((column) => `${column} = EXCLUDED.${column}`);
  return (
    `ON CONFLICT (id, source_id) DO UPDATE SET ${updates.join(', ')}, uuid_ts = now() ` +
    'WHERE existing.received_at IS NULL OR existing.received_at <= EXCLUDED.received_at'
  );
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}

function receivedAtOf(row: BatchRow): number {
  const value = row.values['received_at'];
  const time =
    typeof value === 'object' && value !== null && 'getTime' in value
      ? (value as Date).getTime()
      : Date.parse(String(value));
  return Number.isNaN(time) ? -Infinity : time;
}

/**
 * Rows by table and column list (in order), the groups in the order of their first row. A row is
 * compared with the columns of each group of its table, key by key: no key list per row, and a
 * table's rows come in a few shapes.
 */
function groupByShape(rows: readonly BatchRow[]): BatchRow[][] {
  const groups: BatchRow[][] = [];
  const groupsOfTable = new Map<string, Array<{ columns: string[]; rows: BatchRow[] }>>();
  for (const row of rows) {
    let ofTable = groupsOfTable.get(row.table);
    if (!ofTable) {
      ofTable = [];
      groupsOfTable.set(row.table, ofTable);
    }
    const group = ofTable.find((candidate) => hasColumnsInOrder(row.values, candidate.columns));
    if (group) group.rows.push(row);
    else {
      const rowsOfShape = [row];
      ofTable.push({ columns: Object.keys(row.values), rows: rowsOfShape });
      groups.push(rowsOfShape);
    }
  }
  return groups;
}

function hasColumnsInOrder(values: Readonly<RowValues<unknown>>, columns: readonly string[]): boolean {
  let index = 0;
  // `for...in` over a plain object's own keys walks V8's cached key list, with no array per row.
  for (const column in values) if (columns[index++] !== column) return false;
  return index === columns.length;
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
