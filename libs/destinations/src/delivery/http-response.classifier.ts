/**
 * Spec §12.2: what a vendor's HTTP status means for a message. Shared by every HTTP adapter so that they
 * all retry and discard alike.
 */
import { delivered, discard, retry, type DeliveryOutcome } from './delivery-adapter.port';

/** Statuses whose `Retry-After` is honoured (the ones where RFC 9110 gives it that meaning). */
const STATUSES_WITH_RETRY_AFTER = new Set([429, 503]);

/**
 * `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date. `undefined` when absent or
 * unreadable, so the router falls back to its own backoff instead of trusting garbage.
 */
export function parseRetryAfter(
  header: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  // An HTTP date names its day and month (`Wed, 21 Oct 2015 07:28:00 GMT`); V8's Date.parse would also
  // read bare numbers such as "-5" as years.
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The outcome of a response with this status. `bodyExcerpt` is kept in the reason of a failure, since a
 * vendor's error body is usually the only explanation the operator gets.
 */
export function classifyHttpStatus(
  status: number,
  retryAfterHeader: string | null | undefined,
  bodyExcerpt: string,
): DeliveryOutcome {
  if (status >= 200 && status < 300) return delivered();
  const reason = bodyExcerpt === '' ? `HTTP ${status}` : `HTTP ${status}: ${bodyExcerpt}`;
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = STATUSES_WITH_RETRY_AFTER.has(status)
      ? parseRetryAfter(retryAfterHeader)
      : undefined;
    return retry(reason, { status, retryAfterMs });
  }
  if (status >= 300 && status < 400) {
    // Redirects are not followed: fetch would turn a redirected POST into a body-less GET on 301/302/303
    // and report a success that never carried the message.
    return discard(`${reason} (redirects are not followed; configure the final URL)`, status);
  }
  return discard(reason, status);
}
