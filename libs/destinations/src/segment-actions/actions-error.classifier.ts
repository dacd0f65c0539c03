/**
 * What an Actions destination's failure means for the message (docs/tracking-api.md §12.2), from the errors
 * `@segment/actions-core` throws: `HTTPError` (the vendor's status, `Retry-After`), `RetryableError`,
 * `InvalidAuthenticationError`, `PayloadValidationError`, `IntegrationError`, timeouts and connection
 * errors. Authentication failures are retried, not discarded: they outlast the retry window as dead
 * letters, which an operator can redrive once the key is fixed.
 */
import { discard, egressDenied, retry, type AttemptResult } from '../delivery/delivery-adapter.port';
import { classifyHttpStatus } from '../delivery/http-response.classifier';

const AUTH_STATUSES = new Set([401, 403]);
const MAX_MESSAGE_CHARS = 200;

/** Bytes of one response an action may read, after decompression (node-fetch's `size`). */
export const MAX_ACTIONS_RESPONSE_BYTES = 1_048_576;

/** Said in place of what a host on an internal address answered. */
export const HIDDEN_ANSWER = 'the answer of an internal address is not shown';

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  status?: unknown;
  detail?: unknown;
  type?: unknown;
  response?: { status?: unknown; headers?: { get?(name: string): string | null } };
}

/**
 * The outcome of an action's failure. `showAnswer` is false when the action reached a host whose
 * answers are hidden (a loopback or private address the `open` mode lets through, docs/egress.md):
 * destinations copy response bodies into their errors, so the reason then keeps the status and the
 * kind of error only.
 */
export function classifyActionsError(error: unknown, showAnswer = true): AttemptResult {
  const failure = (error ?? {}) as ErrorLike;
  const name = typeof failure.name === 'string' ? failure.name : 'Error';
  const said = shorten(typeof failure.message === 'string' ? failure.message : String(error));
  if (failure.code === 'EGRESS_DENIED') {
    return egressDenied(typeof failure.detail === 'string' ? failure.detail : said);
  }
  // node-fetch wraps a refused connection and keeps the cause's code.
  if (typeof failure.message === 'string' && failure.message.includes('egress to ')) {
    return egressDenied(said);
  }
  const message = showAnswer ? said : HIDDEN_ANSWER;
  if (failure.type === 'max-size') {
    // Sending again would read the same answer: final.
    return discard(`the response is larger than the ${MAX_ACTIONS_RESPONSE_BYTES} bytes an action may read`);
  }
  const responseStatus = typeof failure.response?.status === 'number' ? failure.response.status : undefined;
  if (name === 'HTTPError' && responseStatus !== undefined) {
    if (AUTH_STATUSES.has(responseStatus)) {
      return retry(`HTTP ${responseStatus}: authentication refused (fix the key, then redrive)`, {
        status: responseStatus,
      });
    }
    return classifyHttpStatus(responseStatus, failure.response?.headers?.get?.('retry-after'), '');
  }
  const status = typeof failure.status === 'number' ? failure.status : undefined;
  switch (name) {
    case 'InvalidAuthenticationError':
      return retry(`authentication refused: ${message} (fix the key, then redrive)`, { status });
    case 'RetryableError':
      return retry(`${name}: ${message}`, { status });
    case 'PayloadValidationError':
    case 'AggregateAjvError':
    case 'ValidationError':
      return discard(`the message does not fit the action's fields: ${message}`, status);
    case 'TimeoutError':
    case 'RequestTimeoutError':
    case 'RequestClientError':
    case 'AbortError':
      return retry(`timeout: ${message}`);
    case 'FetchError':
      return retry(`connection error: ${message}`);
  }
  if (status !== undefined) {
    if (AUTH_STATUSES.has(status))
      return retry(`${name} ${status}: ${message} (fix the key, then redrive)`, { status });
    if (status === 408 || status === 429 || status >= 500)
      return retry(`${name} ${status}: ${message}`, { status });
    if (status >= 400) return discard(`${name} ${status}: ${message}`, status);
  }
  if (name === 'IntegrationError') return discard(`${name}: ${message}`);
  // Anything else is a fault in the destination's code or the network: retried, so it ends as a dead
  // letter that can be redriven rather than being lost.
  return retry(`${name}: ${message}`);
}

/** The outcome of one entry of an `onBatch` multistatus. */
export function classifyMultiStatus(entry: { status: number; errormessage?: string }): AttemptResult {
  if (entry.status >= 200 && entry.status < 300) return { outcome: 'delivered' };
  const reason = entry.errormessage ? shorten(entry.errormessage) : '';
  if (AUTH_STATUSES.has(entry.status)) {
    return retry(`HTTP ${entry.status}: authentication refused${reason ? `: ${reason}` : ''}`, {
      status: entry.status,
    });
  }
  return classifyHttpStatus(entry.status, undefined, reason);
}

function shorten(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}…` : line;
}
