/**
 * Pure: which warehouse rows a message becomes, laid out like Segment's warehouses
 * (segment-docs `connections/storage/warehouses/schema.md`):
 *
 * - identify → `identifies`, plus an upsert of the latest traits into `users` (keyed by user id and
 *   source, so that two sources writing to one schema keep their users apart)
 * - track    → `tracks` (common columns only) and the event's own table (plus its properties)
 * - page → `pages`, screen → `screens`, group → `groups`, alias → `aliases`
 *
 * Every row has `id` = messageId. Properties and traits become un-prefixed snake_case columns, context
 * fields `context_*` columns; nested objects are flattened with `_`, arrays stored as JSON text, and
 * nulls create nothing (Segment creates a column only for a non-null value). A property whose column
 * would shadow a standard column (`user_id`, `id`, ...) is dropped, as Segment does.
 */
import type { NormalizedMessage } from '@tributary/contracts';

/** A column type the adapter creates, inferred from the first non-null value. */
export type WarehouseColumnType = 'text' | 'double precision' | 'boolean' | 'timestamptz';

/** A flattened value: arrays are already JSON text, objects are flattened away. */
export type WarehouseValue = string | number | boolean;

export interface WarehouseRow {
  readonly table: string;
  /** Column name to value, in insertion order; standard columns first. */
  readonly values: ReadonlyMap<string, WarehouseValue>;
}

export interface WarehousePlan {
  /** Inserted first, `ON CONFLICT (id) DO NOTHING`; when it already exists the message is a redelivery. */
  readonly primary: WarehouseRow;
  /** The track event's own table; inserted only with a new primary row. */
  readonly eventRow?: WarehouseRow;
  /** The `users` row (id = user id, with `source_id`); upserted only with a new primary row. */
  readonly userRow?: WarehouseRow;
}

/** Postgres truncates longer identifiers (NAMEDATALEN - 1 bytes); we truncate first, predictably. */
const MAX_IDENTIFIER_BYTES = 63;

/** Tables the adapter owns; an event whose name maps to one of these gets `_event` appended. */
export const STANDARD_TABLES: ReadonlySet<string> = new Set([
  'tracks',
  'identifies',
  'users',
  'pages',
  'screens',
  'groups',
  'aliases',
  'accounts',
]);

/** Columns with a fixed type, created with the table. Everything else is inferred from its first value. */
export const STANDARD_COLUMN_TYPES: ReadonlyMap<string, WarehouseColumnType> = new Map([
  ['id', 'text'],
  ['received_at', 'timestamptz'],
  ['sent_at', 'timestamptz'],
  ['original_timestamp', 'timestamptz'],
  ['timestamp', 'timestamptz'],
  ['uuid_ts', 'timestamptz'],
  ['source_id', 'text'],
  ['user_id', 'text'],
  ['anonymous_id', 'text'],
  ['event', 'text'],
  ['event_text', 'text'],
  ['name', 'text'],
  ['category', 'text'],
  ['group_id', 'text'],
  ['previous_id', 'text'],
]);

/**
 * `Order Completed` → `order_completed`, `accountType` → `account_type`, `HTMLParser` → `html_parser`.
 * Anything but letters and digits becomes `_`, so the result never needs more than plain quoting.
 * Empty when nothing usable is left.
 */
export function toSnakeCase(name: string): string {
  const snake = name
    .replace(/(?<!\p{Lu})(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2')
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1_$2')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_]+/gu, '_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  return truncateToBytes(snake, MAX_IDENTIFIER_BYTES);
}

function truncateToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let result = '';
  for (const character of text) {
    if (Buffer.byteLength(result + character, 'utf8') > maxBytes) break;
    result += character;
  }
  return result.replace(/_$/, '');
}

/** The table of a track event: its snake_case name, kept clear of the standard tables. */
export function eventTableName(event: string): string {
  const snake = toSnakeCase(event);
  if (snake === '') return 'unnamed_event';
  return STANDARD_TABLES.has(snake) ? `${snake}_event` : snake;
}

/** The warehouse rows of one message. */
export function planWarehouseRows(message: NormalizedMessage, sourceId?: string): WarehousePlan {
  const common = new Map<string, WarehouseValue>();
  common.set('id', message.messageId);
  common.set('received_at', message.receivedAt);
  if (message.sentAt !== undefined) common.set('sent_at', message.sentAt);
  if (message.originalTimestamp !== undefined) common.set('original_timestamp', message.originalTimestamp);
  common.set('timestamp', message.timestamp);
  if (sourceId !== undefined) common.set('source_id', sourceId);
  if (message.userId !== undefined) common.set('user_id', message.userId);
  if (message.anonymousId !== undefined) common.set('anonymous_id', message.anonymousId);

  switch (message.type) {
    case 'track': {
      const table = eventTableNames.of('', message.event);
      const trackColumns = withContext(
        withEntries(common, [
          ['event', table],
          ['event_text', message.event],
        ]),
        message.context,
      );
      return {
        primary: { table: 'tracks', values: trackColumns },
        eventRow: { table, values: withData(trackColumns, message.properties) },
      };
    }
    case 'identify': {
      const values = withData(withContext(common, message.context), message.traits);
      const plan: WarehousePlan = { primary: { table: 'identifies', values } };
      if (message.userId === undefined) return plan;
      // The source is part of the users key: without one (a caller outside the router) it is ''.
      const userColumns = new Map<string, WarehouseValue>([
        ['id', message.userId],
        ['source_id', sourceId ?? ''],
        ['received_at', message.receivedAt],
        ['timestamp', message.timestamp],
      ]);
      return { ...plan, userRow: { table: 'users', values: withData(userColumns, message.traits) } };
    }
    case 'page':
    case 'screen': {
      const named = withEntries(common, [
        ['name', message.name],
        ['category', message.category],
      ]);
      const values = withData(withContext(named, message.context), message.properties);
      return { primary: { table: message.type === 'page' ? 'pages' : 'screens', values } };
    }
    case 'group': {
      const values = withData(
        withContext(withEntries(common, [['group_id', message.groupId]]), message.context),
        message.traits,
      );
      return { primary: { table: 'groups', values } };
    }
    case 'alias': {
      const values = withContext(withEntries(common, [['previous_id', message.previousId]]), message.context);
      return { primary: { table: 'aliases', values } };
    }
  }
}

function withEntries(
  base: ReadonlyMap<string, WarehouseValue>,
  entries: Array<[string, string | undefined]>,
): Map<string, WarehouseValue> {
  const result = new Map(base);
  for (const [column, value] of entries) if (value !== undefined) result.set(column, value);
  return result;
}

function withContext(
  base: ReadonlyMap<string, WarehouseValue>,
  context: unknown,
): Map<string, WarehouseValue> {
  const result = new Map(base);
  flattenInto(result, context, 'context');
  return result;
}

/** Properties or traits as un-prefixed columns; never replacing a column already set. */
function withData(base: ReadonlyMap<string, WarehouseValue>, data: unknown): Map<string, WarehouseValue> {
  const result = new Map(base);
  flattenInto(result, data, '');
  return result;
}

/**
 * Names worked out from a message's keys, remembered by prefix and key: messages of one source repeat
 * the same few hundred keys, and the snake_case conversion (four Unicode regular expressions and a byte
 * count) was a large share of a warehouse write's CPU. Bounded: a source sending ever new keys only
 * refills it.
 */
class RememberedNames {
  private static readonly MAX_NAMES = 10_000;
  private readonly byPrefix = new Map<string, Map<string, string>>();
  private size = 0;

  constructor(private readonly work: (prefix: string, key: string) => string) {}

  of(prefix: string, key: string): string {
    let ofPrefix = this.byPrefix.get(prefix);
    const known = ofPrefix?.get(key);
    if (known !== undefined) return known;
    const name = this.work(prefix, key);
    if (this.size >= RememberedNames.MAX_NAMES) {
      this.byPrefix.clear();
      this.size = 0;
      ofPrefix = undefined;
    }
    if (!ofPrefix) {
      ofPrefix = new Map();
      this.byPrefix.set(prefix, ofPrefix);
    }
    ofPrefix.set(key, name);
    this.size += 1;
    return name;
  }
}

/** `prefix_key` in snake_case, truncated like every identifier; empty when the key has nothing usable. */
const columnNames = new RememberedNames((prefix, key) => {
  const part = toSnakeCase(key);
  if (part === '') return '';
  return truncateToBytes(prefix === '' ? part : `${prefix}_${part}`, MAX_IDENTIFIER_BYTES);
});

const eventTableNames = new RememberedNames((_, event) => eventTableName(event));

function flattenInto(target: Map<string, WarehouseValue>, value: unknown, prefix: string): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const key in value as Record<string, unknown>) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const child = (value as Record<string, unknown>)[key];
    const column = columnNames.of(prefix, key);
    if (column === '') continue;
    if (child === null || child === undefined) continue;
    if (typeof child === 'object' && !Array.isArray(child)) {
      flattenInto(target, child, column);
      continue;
    }
    // Standard columns and values already placed (an earlier key with the same snake_case) win.
    if (target.has(column) || STANDARD_COLUMN_TYPES.has(column)) continue;
    if (Array.isArray(child)) target.set(column, JSON.stringify(child));
    else if (typeof child === 'string' || typeof child === 'number' || typeof child === 'boolean')
      target.set(column, child);
    // Anything else (a bigint, a function) cannot come out of JSON and is skipped.
  }
}

/**
 * ISO 8601 date-times (`2026-01-02T03:04:05Z`, with fraction or offset, or naive). Dates alone stay text:
 * a birthday is not an instant, and naive date-times are read as UTC (the session runs in UTC).
 */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;

export function isIsoDateTime(value: string): boolean {
  return ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T')));
}

/** The type a new column gets from its first value. */
export function inferColumnType(value: WarehouseValue): WarehouseColumnType {
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'double precision';
  return isIsoDateTime(value) ? 'timestamptz' : 'text';
}

/** How an existing column stores values, read from `information_schema.columns.data_type`. */
export type ColumnKind = 'text' | 'number' | 'boolean' | 'timestamp' | 'json' | 'other';

export function columnKindOf(dataType: string): ColumnKind {
  switch (dataType) {
    case 'text':
    case 'character varying':
    case 'character':
      return 'text';
    case 'double precision':
    case 'real':
    case 'numeric':
    case 'bigint':
    case 'integer':
    case 'smallint':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'timestamp with time zone':
    case 'timestamp without time zone':
    case 'date':
      return 'timestamp';
    case 'json':
    case 'jsonb':
      return 'json';
    default:
      return 'other';
  }
}

const DECIMAL_NUMBER = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * The value as the column can store it, or why it cannot. Widening is done where nothing is lost (any
 * value into text, a numeric string into a number, "true" into a boolean); anything else is refused
 * here rather than failing inside the database.
 */
export function fitValueToColumn(
  column: string,
  kind: ColumnKind,
  value: WarehouseValue,
): { fits: true; value: WarehouseValue } | { fits: false; reason: string } {
  const refuse = (what: string) => ({
    fits: false as const,
    reason: `column "${column}" holds ${what}, but the message has ${describeValue(value)}`,
  });
  switch (kind) {
    case 'text':
      return { fits: true, value: typeof value === 'string' ? value : String(value) };
    case 'number':
      if (typeof value === 'number') return { fits: true, value };
      if (typeof value === 'string' && DECIMAL_NUMBER.test(value)) return { fits: true, value: value.trim() };
      return refuse('numbers');
    case 'boolean':
      if (typeof value === 'boolean') return { fits: true, value };
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
        return { fits: true, value: value.trim().toLowerCase() === 'true' };
      }
      return refuse('booleans');
    case 'timestamp':
      if (typeof value === 'string' && isIsoDateTime(value.trim()))
        return { fits: true, value: value.trim() };
      return refuse('timestamps');
    case 'json':
      return { fits: true, value: JSON.stringify(value) };
    case 'other':
      // A column someone else created with a type we do not know: let the database judge the text.
      return { fits: true, value: String(value) };
  }
}

function describeValue(value: WarehouseValue): string {
  const shown = JSON.stringify(value);
  return `${typeof value} ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}`;
}
