import { PublicApiError } from './public-api.error';

/** Query values by key, each key in dotted form (`pagination.count`, `rules.0.type`). */
export type PublicQuery = ReadonlyMap<string, string[]>;

/**
 * Reads a query however the Public API's clients encode it (docs/public-api.md, "Pagination"): Go
 * sends `pagination[count]` with literal brackets, the TypeScript SDK percent-encodes them, typewriter
 * the dotted `pagination.count`; arrays come as `x.0`, `x[0]`, `x[]` or a repeated `x`, and objects in
 * arrays as `x[0][field]`. Every form becomes the dotted key; a repeated or `[]` key keeps every value,
 * and `x[]` values are numbered (`x.0`, `x.1`) like the indexed forms.
 */
export function readPublicQuery(url: string): PublicQuery {
  const queryStart = url.indexOf('?');
  const query = new Map<string, string[]>();
  if (queryStart < 0) return query;
  const appended = new Map<string, number>();
  for (const [rawKey, value] of new URLSearchParams(url.slice(queryStart + 1))) {
    let key = rawKey.replace(/\[([^[\]]*)\]/g, (_, inner: string) => `.${inner}`);
    if (key.endsWith('.')) {
      const base = key.slice(0, -1);
      const index = appended.get(base) ?? 0;
      appended.set(base, index + 1);
      key = `${base}.${index}`;
    }
    query.set(key, [...(query.get(key) ?? []), value]);
  }
  return query;
}

/** The single value of `key`, or undefined. */
export function queryValue(query: PublicQuery, key: string): string | undefined {
  return query.get(key)?.[0];
}

/** The objects of an array parameter (`rules.0.type`, `rules.0.key`, ...), in index order. */
export function queryObjects(query: PublicQuery, name: string): Record<string, string>[] {
  const byIndex = new Map<number, Record<string, string>>();
  for (const [key, values] of query) {
    const match = new RegExp(`^${name}\\.(\\d+)\\.(.+)$`).exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    byIndex.set(index, { ...byIndex.get(index), [match[2]]: values[0] });
  }
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, object]) => object);
}

export const DEFAULT_PAGE_COUNT = 200;
export const MAX_PAGE_COUNT = 1_000;

export interface PublicPage<T> {
  items: T[];
  pagination: { current: string; next?: string; previous?: string; totalEntries: number };
}

/** Segment's cursors are base64 offsets (`MA==` is 0); this API hands out the same. */
function cursorOf(offset: number): string {
  return Buffer.from(String(offset)).toString('base64');
}

function offsetOf(cursor: string): number {
  const decoded = Buffer.from(cursor, 'base64').toString('utf8');
  if (!/^(0|[1-9]\d{0,8})$/.test(decoded) || cursorOf(Number(decoded)) !== cursor) {
    throw PublicApiError.validation(
      `pagination.cursor "${cursor}" is not a cursor this API handed out`,
      'pagination.cursor',
    );
  }
  return Number(decoded);
}

/**
 * One page of `items` (already in creation order) as `pagination.count` and `pagination.cursor` ask;
 * `next` is left out on the last page and `previous` on the first (typewriter loops while `next` is
 * there).
 */
export function paginatePublic<T>(items: readonly T[], query: PublicQuery): PublicPage<T> {
  const countText = queryValue(query, 'pagination.count');
  const count = countText === undefined ? DEFAULT_PAGE_COUNT : Number(countText);
  if (!Number.isInteger(count) || count < 1 || count > MAX_PAGE_COUNT || !/^\d+$/.test(countText ?? '1')) {
    throw PublicApiError.validation(
      `pagination.count must be a whole number from 1 to ${MAX_PAGE_COUNT}`,
      'pagination.count',
    );
  }
  const cursor = queryValue(query, 'pagination.cursor');
  const offset = cursor === undefined || cursor === '' ? 0 : offsetOf(cursor);
  const end = offset + count;
  return {
    items: items.slice(offset, end),
    pagination: {
      current: cursorOf(offset),
      ...(end < items.length && { next: cursorOf(end) }),
      ...(offset > 0 && { previous: cursorOf(Math.max(0, offset - count)) }),
      totalEntries: items.length,
    },
  };
}
