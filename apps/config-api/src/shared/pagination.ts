import { ConfigApiError } from '@tributary/config-api-access';

export interface PageRequest {
  page_size?: string | number;
  page_token?: string;
}

/**
 * Offset pagination behind an opaque token. The last page carries `next_page_token: ""`: the
 * TypeScript SDK loops while the token is non-empty (docs/config-api.md §1.5).
 */
export function paginate<T>(items: readonly T[], request: PageRequest, defaultPageSize = 100) {
  const pageSize = parsePageSize(request.page_size, defaultPageSize);
  const offset = parsePageToken(request.page_token);
  const page = items.slice(offset, offset + pageSize);
  const nextOffset = offset + page.length;
  const nextPageToken =
    nextOffset < items.length ? Buffer.from(`offset:${nextOffset}`).toString('base64url') : '';
  return { page, nextPageToken };
}

export function parsePageSize(raw: string | number | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const size = Number(raw);
  if (!Number.isInteger(size) || size < 0 || size > 1000) {
    throw ConfigApiError.invalidArgument('page_size must be an integer between 0 and 1000');
  }
  return size === 0 ? fallback : size;
}

function parsePageToken(token: string | undefined): number {
  if (!token) return 0;
  const match = /^offset:(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (!match) throw ConfigApiError.invalidArgument('page_token is not a token this API returned');
  return Number(match[1]);
}
