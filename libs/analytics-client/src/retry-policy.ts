/**
 * Which answers are retried and how long to wait (docs/tracking-api.md §10): 429, every 5xx, network errors and timeouts
 * are retried with exponential backoff and jitter, or after the server's `Retry-After`; any other non-2xx
 * is final, since sending the same bytes again would get the same answer.
 */

export type AttemptVerdict = 'success' | 'retry' | 'give_up';

export function verdictForStatus(status: number): AttemptVerdict {
  if (status >= 200 && status < 300) return 'success';
  if (status === 429 || (status >= 500 && status < 600)) return 'retry';
  return 'give_up';
}

/**
 * The delay before retry number `retry` (0 for the first): a random value between half and all of
 * `min(maxDelayMs, initialDelayMs × 2^retry)`. The jitter spreads clients that failed together; the
 * lower half-bound keeps the growth, so retries never come back-to-back.
 */
export function backoffDelayMs(
  retry: number,
  options: { initialDelayMs: number; maxDelayMs: number },
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** Math.min(retry, 52));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/**
 * A `Retry-After` header in milliseconds: seconds from now (what Tributary sends, docs/tracking-api.md §9.1), or an HTTP
 * date. Undefined when absent or unreadable; cut to `maxMs`.
 */
export function parseRetryAfterMs(
  header: string | null | undefined,
  maxMs: number,
  now: () => number = Date.now,
): number | undefined {
  if (header === null || header === undefined || header.trim() === '') return undefined;
  const text = header.trim();
  let delay: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    delay = Number(text) * 1000;
  } else {
    // An HTTP date names its month ("Wed, 21 Oct 2026 07:28:00 GMT"); without letters, Date.parse would
    // read text such as "-3" as a year.
    if (!/[a-z]/i.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    delay = Math.max(0, at - now());
  }
  return Math.min(Math.round(delay), maxMs);
}
