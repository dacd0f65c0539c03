import { gzipSync } from 'node:zlib';
import { parseRetryAfter as parseRetryAfterHeader } from '@tributary/contracts';
import { describeFetchError } from '../shared/config-api.client';

/** One entry of the 200 body's `rejected` array (docs/tracking-api.md §6.5). */
export interface ServerRejection {
  index: number;
  messageId?: string;
  code: string;
  message: string;
}

export type BatchOutcome =
  | { kind: 'accepted'; rejected: ServerRejection[]; attempts: number }
  /** A 4xx other than 408/429: resending the same bytes cannot succeed. */
  | { kind: 'refused'; status: number; code: string; message: string; attempts: number }
  /** Retries ran out, or the import was interrupted while waiting to retry. */
  | { kind: 'gave-up'; reason: string; attempts: number; interrupted: boolean };

export interface BatchSenderOptions {
  baseUrl: string;
  writeKey: string;
  gzip: boolean;
  /** Retries after the first attempt. */
  maxRetries: number;
  /** First backoff step; doubles per retry up to `maxBackoffMs`, with jitter. */
  retryBaseMs: number;
  maxBackoffMs: number;
  requestTimeoutMs: number;
  interrupt?: AbortSignal;
  /** Told before each wait, for the progress output. */
  onRetry?: (attempt: number, reason: string, waitMs: number) => void;
}

/** The longest `Retry-After` honoured; a larger value is treated as this. */
const MAX_RETRY_AFTER_MS = 300_000;

/**
 * Sends one batch to `POST /v1/import` with Basic auth for the write key, retrying what a retry can
 * fix: 408, 429, 5xx, network errors and timeouts. The messages carry their messageIds, so a retry of
 * a request that did reach the log is absorbed by the server's deduplication.
 */
export async function sendBatch(
  messages: readonly object[],
  options: BatchSenderOptions,
): Promise<BatchOutcome> {
  // No `sentAt`: with one, the server would shift each historical `timestamp` by (now − sentAt).
  const json = JSON.stringify({ batch: messages });
  const body = options.gzip ? gzipSync(json) : Buffer.from(json);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`,
    'user-agent': 'tributary-cli',
    ...(options.gzip && { 'content-encoding': 'gzip' }),
  };
  for (let attempt = 1; ; attempt++) {
    let reason: string;
    let retryAfterMs: number | undefined;
    try {
      const response = await fetch(`${options.baseUrl}/v1/import`, {
        method: 'POST',
        headers: { ...headers, ...(attempt > 1 && { 'x-retry-count': String(attempt - 1) }) },
        body,
        signal: AbortSignal.timeout(options.requestTimeoutMs),
      });
      const text = await response.text();
      const parsed = parseJson(text);
      if (response.status === 200) {
        const rejected = Array.isArray(parsed?.rejected) ? (parsed.rejected as ServerRejection[]) : [];
        return { kind: 'accepted', rejected, attempts: attempt };
      }
      const code = typeof parsed?.code === 'string' ? parsed.code : `http_${response.status}`;
      const message =
        typeof parsed?.message === 'string' ? parsed.message : text.slice(0, 200) || response.statusText;
      if (response.status < 500 && response.status !== 408 && response.status !== 429) {
        return { kind: 'refused', status: response.status, code, message, attempts: attempt };
      }
      reason = `HTTP ${response.status} ${code}: ${message}`;
      retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    } catch (error) {
      reason = `network: ${describeFetchError(error)}`;
    }
    if (attempt > options.maxRetries)
      return { kind: 'gave-up', reason, attempts: attempt, interrupted: false };
    const backoffMs = Math.min(options.maxBackoffMs, options.retryBaseMs * 2 ** (attempt - 1));
    const waitMs = retryAfterMs ?? Math.round(backoffMs / 2 + (Math.random() * backoffMs) / 2);
    options.onRetry?.(attempt, reason, waitMs);
    if (!(await sleep(waitMs, options.interrupt))) {
      return {
        kind: 'gave-up',
        reason: `interrupted while waiting to retry (${reason})`,
        attempts: attempt,
        interrupted: true,
      };
    }
  }
}

/** `Retry-After` in milliseconds from now, at most `MAX_RETRY_AFTER_MS`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const delayMs = parseRetryAfterHeader(value, now);
  return delayMs === undefined ? undefined : Math.min(MAX_RETRY_AFTER_MS, delayMs);
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Resolves true after `ms`, or false as soon as the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
