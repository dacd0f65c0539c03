/**
 * What a function's result means to its caller (specs/functions.md §5), decided without I/O:
 * - `decideDestinationOutcome`: a destination function's result as the router's delivery outcome (§5.2);
 * - `decideBatchOutcomes`: a destination function's `onBatch` result as one outcome per message (§5.2);
 * - `decideInsertOutcome`: an insert function's result, the message that goes on or the outcome (§5.3);
 * - `decideSourceAnswer`: a source function's result as the HTTP answer of its webhook (§5.1);
 * - `decideDeletionOutcome`: a destination function's `onDelete` result as a regulation's deletion (§5.2).
 */
import type { AttemptResult, UserDeletionOutcome } from '@tributary/destinations';
import type { EmittedMessage, FunctionResult } from './function-runner.port';

/** Thrown classes a function uses to say the message is wrong (Segment's "Message Rejected"). */
const REJECTING_ERRORS = new Set(['ValidationError', 'InvalidEventPayload']);

/** The reason of an insert function that dropped the message. */
export const INSERT_FUNCTION_DROPPED = 'insert_function: dropped';

const timeoutReason = (limitMs: number) => `function_timeout: exceeded ${limitMs} ms`;
const MEMORY_REASON = 'function_memory_exceeded';
const thrown = (name: string, message: string) => `${name}: ${message}`;

/** §5.2: a destination function's result → `delivered | discard | retry | filtered`. */
export function decideDestinationOutcome(result: FunctionResult): AttemptResult {
  switch (result.status) {
    case 'resolved':
      return { outcome: 'delivered' };
    case 'no_handler':
      return { outcome: 'filtered', reason: 'EventNotSupported: the function has no handler for this type' };
    case 'threw':
      if (result.name === 'EventNotSupported') {
        return { outcome: 'filtered', reason: thrown(result.name, result.message) };
      }
      if (result.name === 'RetryError')
        return { outcome: 'retry', reason: thrown(result.name, result.message) };
      if (REJECTING_ERRORS.has(result.name)) {
        return { outcome: 'discard', reason: thrown('ValidationError', result.message) };
      }
      return { outcome: 'discard', reason: thrown(result.name, result.message) };
    case 'timeout':
      return { outcome: 'retry', reason: timeoutReason(result.limitMs) };
    case 'memory_exceeded':
      return { outcome: 'discard', reason: MEMORY_REASON };
    case 'unavailable':
      return { outcome: 'retry', reason: `function_unavailable: ${result.reason}` };
  }
}

/** The most messages one `onBatch` invocation is given (§5.2). */
export const BATCH_MAX_MESSAGES = 100;

/** What an `onBatch` invocation meant: one outcome per message, in order, and its own for the metrics. */
export interface BatchDecision {
  readonly outcomes: readonly AttemptResult[];
  /** `delivered` when the function answered per message as it should, else the outcome all share. */
  readonly invocation: AttemptResult['outcome'];
}

/**
 * §5.2: `onBatch(events, settings)`'s result for `count` messages. It answers
 * `[{status, errormessage}]`, one per event in order: 2xx delivered, 429 and 5xx retried, other 4xx
 * discarded with `errormessage` as the reason. Resolving with nothing (`undefined`, `null`) delivers
 * them all, as a per-type handler that resolves does. A throw, a timeout or running out of memory is
 * every message's outcome, as for one message. Anything else (not an array, another length, an entry
 * without a 2xx, 4xx or 5xx `status`) is the function's bug: every message is discarded saying so, rather
 * than retried into the same answer.
 */
export function decideBatchOutcomes(result: FunctionResult, count: number): BatchDecision {
  const all = (outcome: AttemptResult): BatchDecision => ({
    outcomes: Array.from({ length: count }, () => outcome),
    invocation: outcome.outcome,
  });
  if (result.status !== 'resolved') {
    // The per-type rows, said of the batch: "no handler for this type" becomes "no onBatch".
    if (result.status === 'no_handler') {
      return all({ outcome: 'filtered', reason: 'EventNotSupported: the function has no onBatch handler' });
    }
    return all(decideDestinationOutcome(result));
  }
  const value = result.value;
  if (value === undefined || value === null) return all({ outcome: 'delivered' });
  const wrong = wrongBatchAnswer(value, count);
  if (wrong !== undefined) return all({ outcome: 'discard', reason: `onBatch: ${wrong}` });
  const outcomes = (value as readonly { status: number; errormessage?: unknown }[]).map(
    ({ status, errormessage }): AttemptResult => {
      if (status < 300) return { outcome: 'delivered' };
      const reason =
        typeof errormessage === 'string' && errormessage !== ''
          ? errormessage
          : `onBatch answered status ${status}`;
      return status === 429 || status >= 500 ? { outcome: 'retry', reason } : { outcome: 'discard', reason };
    },
  );
  return { outcomes, invocation: 'delivered' };
}

/** Why an `onBatch` answer is not one `{status}` per event, or `undefined` when it is. */
function wrongBatchAnswer(value: unknown, count: number): string | undefined {
  const expected = `an array of ${count} {status, errormessage} (one per event, in order)`;
  if (!Array.isArray(value)) return `expected ${expected}, got ${typeof value}`;
  if (value.length !== count) return `expected ${expected}, got ${value.length} entries`;
  const index = value.findIndex((entry) => {
    const status = (entry as { status?: unknown } | null)?.status;
    return !(Number.isInteger(status) && /^[245]\d\d$/.test(String(status)));
  });
  if (index >= 0) {
    return `expected ${expected}, entry ${index} has no 2xx, 4xx or 5xx status: ${describe(value[index])}`;
  }
  return undefined;
}

function describe(entry: unknown): string {
  const text = JSON.stringify(entry) ?? String(entry);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
}

/**
 * §5.3: the message that goes on to the destination, or what became of it. `unchanged`: the function
 * returned the message as it came (`valueUnchanged`), so it is the original, which may go as stored.
 */
export type InsertDecision =
  | { readonly outcome: 'continue'; readonly message: Record<string, unknown>; readonly unchanged?: true }
  | AttemptResult;

export function decideInsertOutcome(
  result: FunctionResult,
  original: Readonly<{ messageId: string; type: string }>,
): InsertDecision {
  switch (result.status) {
    case 'resolved': {
      const value = result.value;
      if (value === undefined || value === null)
        return { outcome: 'filtered', reason: INSERT_FUNCTION_DROPPED };
      if (typeof value !== 'object' || Array.isArray(value)) {
        return {
          outcome: 'discard',
          reason: `TypeError: an insert function must return the event object, got ${Array.isArray(value) ? 'an array' : typeof value}`,
        };
      }
      const same = value as Record<string, unknown>;
      if (
        result.valueUnchanged === true &&
        same.messageId === original.messageId &&
        same.type === original.type
      )
        return { outcome: 'continue', message: same, unchanged: true };
      return {
        outcome: 'continue',
        message: {
          ...(value as Record<string, unknown>),
          messageId: original.messageId,
          type: original.type,
        },
      };
    }
    case 'no_handler':
      return { outcome: 'filtered', reason: INSERT_FUNCTION_DROPPED };
    case 'threw':
      if (result.name === 'DropEvent') return { outcome: 'filtered', reason: INSERT_FUNCTION_DROPPED };
      if (result.name === 'RetryError')
        return { outcome: 'retry', reason: thrown(result.name, result.message) };
      if (REJECTING_ERRORS.has(result.name)) {
        return { outcome: 'discard', reason: thrown('ValidationError', result.message) };
      }
      return { outcome: 'discard', reason: thrown(result.name, result.message) };
    case 'timeout':
      return { outcome: 'retry', reason: timeoutReason(result.limitMs) };
    case 'memory_exceeded':
      return { outcome: 'discard', reason: MEMORY_REASON };
    case 'unavailable':
      return { outcome: 'retry', reason: `function_unavailable: ${result.reason}` };
  }
}

/** §5.1: the webhook's answer; `emitted` is what to store (only on `200`). */
export interface SourceAnswer {
  readonly status: 200 | 400 | 500 | 503;
  readonly body: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly emitted: readonly EmittedMessage[];
}

export function decideSourceAnswer(result: FunctionResult): SourceAnswer {
  const answer = (
    status: SourceAnswer['status'],
    body: Record<string, unknown>,
    headers = {},
  ): SourceAnswer => ({
    status,
    body,
    headers,
    emitted: [],
  });
  const later = (error: string) => answer(503, { error }, { 'Retry-After': '60' });
  switch (result.status) {
    case 'resolved':
      return { status: 200, body: { success: true }, headers: {}, emitted: result.emitted ?? [] };
    case 'no_handler':
      return answer(500, { error: 'EventNotSupported: the function has no onRequest handler' });
    case 'threw':
      if (REJECTING_ERRORS.has(result.name))
        return answer(400, { error: thrown(result.name, result.message) });
      if (result.name === 'RetryError') return later(thrown(result.name, result.message));
      return answer(500, { error: thrown(result.name, result.message) });
    case 'timeout':
      return later(timeoutReason(result.limitMs));
    case 'memory_exceeded':
      return later(MEMORY_REASON);
    case 'unavailable':
      return later(`function_unavailable: ${result.reason}`);
  }
}

/**
 * §5.2: `onDelete(event, settings)`'s result for one user of a regulation, as the deletion outcome a
 * destination adapter gives: resolving deletes; no `onDelete` (or `EventNotSupported`) is a function
 * without deletion; `RetryError`, a timeout or an unavailable sandbox are tried again; anything else
 * (another throw, running out of memory) fails the deletion with the reason.
 */
export function decideDeletionOutcome(result: FunctionResult): UserDeletionOutcome {
  switch (result.status) {
    case 'resolved':
      return { outcome: 'deleted' };
    case 'no_handler':
      return { outcome: 'not_supported', reason: 'the function has no onDelete' };
    case 'threw':
      if (result.name === 'EventNotSupported')
        return { outcome: 'not_supported', reason: thrown(result.name, result.message) };
      if (result.name === 'RetryError')
        return { outcome: 'retry', reason: thrown(result.name, result.message) };
      return { outcome: 'failed', reason: thrown(result.name, result.message) };
    case 'timeout':
      return { outcome: 'retry', reason: timeoutReason(result.limitMs) };
    case 'memory_exceeded':
      return { outcome: 'failed', reason: MEMORY_REASON };
    case 'unavailable':
      return { outcome: 'retry', reason: `function_unavailable: ${result.reason}` };
  }
}
