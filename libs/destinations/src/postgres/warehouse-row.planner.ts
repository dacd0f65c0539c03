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

/**
 * Column name to value, in insertion order (standard columns first), as a plain object: `rowsAsJson`
 * serializes it as it is, and a plain object with the same columns as the row before it shares its
 * layout, where a `Map` per row allocated an entry per value and was copied into an object to be
 * written (the largest share of what a warehouse drain allocated). Own keys only (`Object.hasOwn`);
 * a column named `__proto__` is an own key too (`setColumn`).
 */
export type RowValues<Value = WarehouseValue> = Record<string, Value>;

export interface WarehouseRow {
  readonly table: string;
  /** Each row has an object of its own, which the caller may fit to the table's columns in place. */
  readonly values: RowValues;
}

/** `values[column] = value`, except that `__proto__` becomes a key rather than the object's prototype. */
export function setColumn<Value>(values: RowValues<Value>, column: string, value: Value): void {
  if (column === '__proto__') {
    Object.defineProperty(values, column, { value, enumerable: true, writable: true, configurable: true });
  } else values[column] = value;
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

/**
 * The warehouse rows of one message. Each row's object is filled in place, in the order the columns
 * go (standard columns, then context, then properties or traits): a router holds many messages'
 * rows at once, so no intermediate map is made per step.
 */
export function planWarehouseRows(message: NormalizedMessage, sourceId?: string): WarehousePlan {
  // The standard columns are literal keys, so they never meet `__proto__`.
  const values: RowValues = { id: message.messageId, received_at: message.receivedAt };
  if (message.sentAt !== undefined) values['sent_at'] = message.sentAt;
  if (message.originalTimestamp !== undefined) values['original_timestamp'] = message.originalTimestamp;
  values['timestamp'] = message.timestamp;
  if (sourceId !== undefined) values['source_id'] = sourceId;
  if (message.userId !== undefined) values['user_id'] = message.userId;
  if (message.anonymousId !== undefined) values['anonymous_id'] = message.anonymousId;

  switch (message.type) {
    case 'track': {
      const table = eventTableNames.of('', message.event);
      values['event'] = table;
      setIfDefined(values, 'event_text', message.event);
      flattenInto(values, message.context, 'context');
      // A copy keeps the columns' order; `__proto__` (a context key) stays an own key in it.
      const eventValues: RowValues = {};
      for (const column of Object.keys(values)) setColumn(eventValues, column, values[column]!);
      flattenInto(eventValues, message.properties, '');
      return {
        primary: { table: 'tracks', values },
        eventRow: { table, values: eventValues },
      };
    }
    case 'identify': {
      flattenInto(values, message.context, 'context');
      flattenInto(values, message.traits, '');
      const primary = { table: 'identifies', values };
      if (message.userId === undefined) return { primary };
      // The source is part of the users key: without one (a caller outside the router) it is ''.
      const userValues: RowValues = {
        id: message.userId,
        source_id: sourceId ?? '',
        received_at: message.receivedAt,
        timestamp: message.timestamp,
      };
      flattenInto(userValues, message.traits, '');
      return { primary, userRow: { table: 'users', values: userValues } };
    }
    case 'page':
    case 'screen': {
      setIfDefined(values, 'name', message.name);
      setIfDefined(values, 'category', message.category);
      flattenInto(values, message.context, 'context');
      flattenInto(values, message.properties, '');
      return { primary: { table: message.type === 'page' ? 'pages' : 'screens', values } };
    }
    case 'group': {
      setIfDefined(values, 'group_id', message.groupId);
      flattenInto(values, message.context, 'context');
      flattenInto(values, message.traits, '');
      return { primary: { table: 'groups', values } };
    }
    case 'alias': {
      setIfDefined(values, 'previous_id', message.previousId);
      flattenInto(values, message.context, 'context');
      return { primary: { table: 'aliases', values } };
    }
  }
}

function setIfDefined(values: RowValues, column: string, value: string | undefined): void {
  if (value !== undefined) values[column] = value;
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

function flattenInto(target: RowValues, value: unknown, prefix: string): void {
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
    if (Object.hasOwn(target, column) || STANDARD_COLUMN_TYPES.has(column)) continue;
    if (Array.isArray(child)) setColumn(target, column, JSON.stringify(child));
    else if (typeof child === 'string' || typeof child === 'number' || typeof child === 'boolean')
      setColumn(target, column, child);
    // Anything else (a bigint, a function) cannot come out of JSON and is skipped.
  }
}

/**
 * ISO 8601 date-times (`2026-01-02T03:04:05Z`, with fraction or offset, or naive). Dates alone stay text:
 * a birthday is not an instant, and naive date-times are read as UTC (the session runs in UTC).
 */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}(:?\d{2})?)?$/;

export function isIsoDateTime(value: string): boolean {
  if (isPlainUtcTimestamp(value)) return true;
  return ISO_DATE_TIME.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T')));
}

const DIGIT_POSITIONS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];

/**
 * `YYYY-MM-DDTHH:mm:ss.sssZ` (what `toISOString` writes, so most of the timestamps the warehouse
 * writes: ingest stores `receivedAt` and normalized times this way) with every field in a range that
 * `Date.parse` always accepts (days up to 28): true without parsing, which cost more than the rest of a
 * row's fitting. Anything else, valid or not, is left to the full check.
 */
function isPlainUtcTimestamp(value: string): boolean {
  if (value.length !== 24) return false;
  if (
    value.charCodeAt(4) !== 0x2d /* - */ ||
    value.charCodeAt(7) !== 0x2d ||
    value.charCodeAt(10) !== 0x54 /* T */ ||
    value.charCodeAt(13) !== 0x3a /* : */ ||
    value.charCodeAt(16) !== 0x3a ||
    value.charCodeAt(19) !== 0x2e /* . */ ||
    value.charCodeAt(23) !== 0x5a /* Z */
  ) {
    return false;
  }
  for (const position of DIGIT_POSITIONS) {
    const code = value.charCodeAt(position);
    if (code < 0x30 || code > 0x39) return false;
  }
  const twoDigits = (position: number) =>
    (value.charCodeAt(position) - 0x30) * 10 + (value.charCodeAt(position + 1) - 0x30);
  const month = twoDigits(5);
  const day = twoDigits(8);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= 28 &&
    twoDigits(11) <= 23 &&
    twoDigits(14) <= 59 &&
    twoDigits(17) <= 59
  );
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
  const fitted = fittedValue(kind, value);
  if (fitted !== undefined) return { fits: true, value: fitted };
  return { fits: false, reason: whyValueDoesNotFit(column, kind, value) };
}

/** The reason `fitValueToColumn` gives for a value that does not fit. */
export function whyValueDoesNotFit(column: string, kind: ColumnKind, value: WarehouseValue): string {
  return `column "${column}" holds ${KIND_HOLDS[kind]}, but the message has ${describeValue(value)}`;
}

const KIND_HOLDS: Record<ColumnKind, string> = {
  text: 'text',
  number: 'numbers',
  boolean: 'booleans',
  timestamp: 'timestamps',
  json: 'JSON',
  other: 'values',
};

/**
 * `fitValueToColumn`'s value, or undefined when the value does not fit: the adapter fits every value
 * of every row it writes, and only a refusal needs more than the value.
 */
export function fittedValue(kind: ColumnKind, value: WarehouseValue): WarehouseValue | undefined {
  switch (kind) {
    case 'text':
      return typeof value === 'string' ? value : String(value);
    case 'number':
      if (typeof value === 'number') return value;
      if (typeof value === 'string' && DECIMAL_NUMBER.test(value)) return value.trim();
      return undefined;
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) {
        return value.trim().toLowerCase() === 'true';
      }
      return undefined;
    case 'timestamp':
      if (typeof value === 'string' && isIsoDateTime(value.trim())) return value.trim();
      return undefined;
    case 'json':
      return JSON.stringify(value);
    case 'other':
      // A column someone else created with a type we do not know: let the database judge the text.
      return String(value);
  }
}

function describeValue(value: WarehouseValue): string {
  const shown = JSON.stringify(value);
  return `${typeof value} ${shown.length > 60 ? `${shown.slice(0, 60)}…` : shown}`;
}
