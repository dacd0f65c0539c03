/**
 * Which write key a tracking request is for (docs/tracking-api.md §4.3). Only resolution happens here; whether the key
 * exists and whether a bearer token is valid is for the caller to check against its stores.
 */
import { failure, success, type IngestResult } from '../ingest-result';

export type WriteKeyResolution =
  /** `Authorization: Basic base64("<writeKey>:")`, or the same without the colon. */
  | { scheme: 'basic'; writeKey: string }
  /** No usable `Authorization` header; `writeKey` came from the JSON body. */
  | { scheme: 'body'; writeKey: string }
  /** `Authorization: Bearer <token>` plus the body's `writeKey`; the token still has to be checked (§11.6). */
  | { scheme: 'bearer'; writeKey: string; bearerToken: string };

/**
 * 1. A Basic header wins: the key is the decoded text before the first `:`, or all of it without a colon.
 * 2. Otherwise the body's `writeKey`.
 * 3. Bearer: the key comes from the body, and the token is returned for checking.
 * 4. No header is ever required.
 * 5. No key at all: `invalid_write_key` (401).
 *
 * A Basic header that does not decode to a non-empty key, and any scheme other than Basic or Bearer, count
 * as no header [decision]: rule 4 says the header is optional, so a broken one should not hide a body key.
 * Scheme names are case-insensitive (RFC 9110 §11.1).
 */
export function resolveWriteKey(
  authorization: string | undefined,
  body: unknown,
): IngestResult<WriteKeyResolution> {
  const bodyWriteKey = readBodyWriteKey(body);
  const credentials = parseAuthorization(authorization);

  if (credentials?.scheme === 'bearer') {
    if (credentials.token === '') {
      return failure('unauthorized', 'The Bearer token in the Authorization header is empty');
    }
    if (bodyWriteKey === undefined) {
      return failure(
        'invalid_write_key',
        'A request with a Bearer token must carry its writeKey in the body',
      );
    }
    return success({ scheme: 'bearer', writeKey: bodyWriteKey, bearerToken: credentials.token });
  }
  if (credentials?.scheme === 'basic') {
    const writeKey = decodeBasicWriteKey(credentials.token);
    if (writeKey !== undefined) return success({ scheme: 'basic', writeKey });
  }
  if (bodyWriteKey !== undefined) return success({ scheme: 'body', writeKey: bodyWriteKey });
  return failure(
    'invalid_write_key',
    'No write key: send it as Basic auth (base64 of "<writeKey>:") or as "writeKey" in the JSON body',
  );
}

/** The body's top-level `writeKey` when it is a non-empty string; anything else counts as absent. */
export function readBodyWriteKey(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const writeKey = (body as Record<string, unknown>).writeKey;
  return typeof writeKey === 'string' && writeKey.length > 0 ? writeKey : undefined;
}

/**
 * `<scheme> <token>` with surrounding whitespace ignored. Scanned by hand rather than with a regular
 * expression: the header is the client's, and `/^\s*(\S+)(?:\s+(.*?))?\s*$/` backtracked quadratically
 * over a long run of inner whitespace. A line break inside the token makes the header unusable, as the
 * expression's `.` did.
 */
export function parseAuthorization(
  header: string | undefined,
): { scheme: 'basic' | 'bearer'; token: string } | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed === '') return undefined;
  let schemeEnd = 0;
  while (schemeEnd < trimmed.length && !isWhitespace(trimmed.charCodeAt(schemeEnd))) schemeEnd++;
  const scheme = trimmed.slice(0, schemeEnd).toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') return undefined;
  const token = trimmed.slice(schemeEnd).trimStart();
  if (hasLineBreak(token)) return undefined;
  return { scheme, token };
}

/** What `\s` and `String.prototype.trim` call whitespace: JavaScript's WhiteSpace and LineTerminator. */
function isWhitespace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** The characters `.` does not match. */
function hasLineBreak(text: string): boolean {
  return text.includes('\n') || text.includes('\r') || text.includes('\u2028') || text.includes('\u2029');
}

// Standard or URL-safe alphabet, padding optional: decoders in the wild differ, the key does not.
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

function decodeBasicWriteKey(token: string): string | undefined {
  if (!BASE64.test(token)) return undefined;
  const decoded = Buffer.from(token, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const writeKey = colon === -1 ? decoded : decoded.slice(0, colon);
  return writeKey.length > 0 ? writeKey : undefined;
}
