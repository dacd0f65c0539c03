import { assertSubjectToken } from './event-log.validation';
import {
  FUNCTION_LOG_LEVELS,
  FUNCTION_LOG_MAX_PAGE_SIZE,
  FUNCTION_LOG_MESSAGE_MAX_BYTES,
  InvalidFunctionLogPageTokenError,
  type FunctionLogEntry,
  type ListFunctionLogsOptions,
} from './ports/function-logs.port';

/**
 * Checks and shapes shared by both adapters of `FunctionLogStore`, so that both store, refuse and
 * page the same way.
 */

const LEVELS: ReadonlySet<string> = new Set(FUNCTION_LOG_LEVELS);

/** Throws `TypeError` naming the first malformed entry; nothing of the batch is stored then. */
export function assertFunctionLogEntries(entries: FunctionLogEntry[]): void {
  if (!Array.isArray(entries)) throw new TypeError('function log entries must be an array');
  entries.forEach((entry, index) => {
    const at = `function log entry ${index}`;
    if (typeof entry !== 'object' || entry === null) throw new TypeError(`${at} is not an object`);
    assertSubjectToken('workspaceId', entry.workspaceId);
    assertSubjectToken('functionId', entry.functionId);
    if (typeof entry.time !== 'string' || Number.isNaN(Date.parse(entry.time))) {
      throw new TypeError(`${at}: time must be an ISO 8601 date, got ${JSON.stringify(entry.time)}`);
    }
    if (!LEVELS.has(entry.level)) {
      throw new TypeError(`${at}: level must be one of ${FUNCTION_LOG_LEVELS.join(', ')}`);
    }
    if (typeof entry.message !== 'string') throw new TypeError(`${at}: message must be a string`);
    if (entry.instance !== undefined && typeof entry.instance !== 'string') {
      throw new TypeError(`${at}: instance must be a string when present`);
    }
    if (entry.messageId !== undefined && typeof entry.messageId !== 'string') {
      throw new TypeError(`${at}: messageId must be a string when present`);
    }
    if (!Number.isSafeInteger(entry.version) || entry.version < 0) {
      throw new TypeError(`${at}: version must be a non-negative integer`);
    }
    if (typeof entry.invocationId !== 'string' || entry.invocationId.length === 0) {
      throw new TypeError(`${at}: invocationId must be a non-empty string`);
    }
  });
}

/** What is stored of an entry: its known fields only, the message cut to its byte limit. */
export function storedFunctionLogEntry(entry: FunctionLogEntry): FunctionLogEntry {
  return {
    workspaceId: entry.workspaceId,
    functionId: entry.functionId,
    time: entry.time,
    level: entry.level,
    message: cutToUtf8Bytes(entry.message, FUNCTION_LOG_MESSAGE_MAX_BYTES),
    ...(entry.instance !== undefined && { instance: entry.instance }),
    ...(entry.messageId !== undefined && { messageId: entry.messageId }),
    version: entry.version,
    invocationId: entry.invocationId,
  };
}

/** The text cut to at most `maxBytes` of UTF-8, never inside a character. */
export function cutToUtf8Bytes(text: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: most messages are answered without encoding them.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) to the first byte of the character cut in two.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return bytes.subarray(0, end).toString('utf8');
}

export function assertListFunctionLogs(
  workspaceId: string,
  functionId: string,
  options: ListFunctionLogsOptions,
): void {
  assertSubjectToken('workspaceId', workspaceId);
  assertSubjectToken('functionId', functionId);
  const { pageSize, instance } = options;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > FUNCTION_LOG_MAX_PAGE_SIZE) {
    throw new TypeError(
      `pageSize must be an integer from 1 to ${FUNCTION_LOG_MAX_PAGE_SIZE}, got ${pageSize}`,
    );
  }
  if (instance !== undefined && typeof instance !== 'string') {
    throw new TypeError('instance must be a string when present');
  }
}

/**
 * The page token: the store's position of the last entry answered (a JetStream sequence, a SQLite
 * row id, both increasing with each entry stored), so the next page starts before it.
 */
export function functionLogPageToken(position: number): string {
  return Buffer.from(`before:${position}`).toString('base64url');
}

/** The position a token names, or undefined for the first page; throws for a token no page answered. */
export function positionOfFunctionLogPageToken(token: string | undefined): number | undefined {
  if (token === undefined || token === '') return undefined;
  const match =
    typeof token === 'string' && token.length <= 64
      ? /^before:([1-9]\d{0,15})$/.exec(Buffer.from(token, 'base64url').toString('utf8'))
      : null;
  const position = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(position)) throw new InvalidFunctionLogPageTokenError();
  return position;
}
