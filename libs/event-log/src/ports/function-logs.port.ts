/**
 * Tenant functions' logs (specs/functions.md §7): each `console.*` line of an invocation, and each
 * error a function throws, kept in the log's own store so that every process running functions (the
 * router, the tracking API) writes to, and every Config API replica reads, one place. Tenant data:
 * read back only through the workspace's `logs` route, never printed on Tributary's own output.
 *
 * Bounded per function: the newest `FUNCTION_LOGS_KEPT_PER_FUNCTION` entries, none older than
 * `FUNCTION_LOG_RETENTION_MS` (a decision of the spec: Segment keeps 100 errors for 30 days).
 */

/** How long an entry is kept. */
export const FUNCTION_LOG_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How many entries of one function are kept: older ones go as newer ones come. */
export const FUNCTION_LOGS_KEPT_PER_FUNCTION = 1000;
/** A message longer than this (UTF-8 bytes) is cut to it when stored; the runtime cuts it first. */
export const FUNCTION_LOG_MESSAGE_MAX_BYTES = 4096;
/** Largest page `listFunctionLogs` answers. */
export const FUNCTION_LOG_MAX_PAGE_SIZE = 1000;

export const FUNCTION_LOG_LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;
export type FunctionLogLevel = (typeof FUNCTION_LOG_LEVELS)[number];

export interface FunctionLogEntry {
  workspaceId: string;
  functionId: string;
  /** When the line was written, ISO 8601 (the invocation's clock). */
  time: string;
  level: FunctionLogLevel;
  message: string;
  /** The instance's resource name (`workspaces/acme/sources/web/destinations/dfn_…`); absent in a preview. */
  instance?: string;
  messageId?: string;
  /** The function version that ran. */
  version: number;
  invocationId: string;
}

export interface ListFunctionLogsOptions {
  /** Only the entries of this instance. */
  instance?: string;
  /** 1..`FUNCTION_LOG_MAX_PAGE_SIZE`. */
  pageSize: number;
  /** A `nextPageToken` an earlier page answered; absent or empty for the first page. */
  pageToken?: string;
}

export interface FunctionLogPage {
  /** Newest first. */
  entries: FunctionLogEntry[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface FunctionLogStore {
  /**
   * Stores the entries (of any functions), keeping each function's newest 1,000. Rejects with
   * `TypeError` for a malformed entry (nothing is stored) and with `EventLogUnavailableError` when
   * the store cannot be reached. Never blocks a delivery for long: callers on a hot path do not
   * await it (they catch its failure and count it).
   */
  appendFunctionLogs(entries: FunctionLogEntry[]): Promise<void>;
  /**
   * One page of a function's entries, newest first. Pages are stable while new entries are stored
   * (the token is a position, not an offset). Rejects with `InvalidFunctionLogPageTokenError` for a
   * token no page answered, and with `TypeError` for a page size out of range.
   */
  listFunctionLogs(
    workspaceId: string,
    functionId: string,
    options: ListFunctionLogsOptions,
  ): Promise<FunctionLogPage>;
  /** Erases every entry of the function (when the function is deleted). Idempotent. */
  eraseFunctionLogs(workspaceId: string, functionId: string): Promise<void>;
}

/** DI token of the function log store: the event log of the process, which implements it. */
export const FUNCTION_LOG_STORE = Symbol('FunctionLogStore');

/** A `pageToken` that no `listFunctionLogs` answered (a client's typo, a token of another route). */
export class InvalidFunctionLogPageTokenError extends TypeError {
  constructor() {
    super('page_token is not a token this API returned');
    this.name = 'InvalidFunctionLogPageTokenError';
  }
}
