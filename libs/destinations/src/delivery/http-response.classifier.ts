/**
 * Spec §12.2: what a vendor's HTTP status means for a message. Shared by every HTTP adapter so that they
 * all retry and discard alike.
 */
import { parseRetryAfter } from '@tributary/contracts';
import { delivered, discard, retry, type AttemptResult } from './delivery-adapter.port';

export { parseRetryAfter };

/** Statuses whose `Retry-After` is honoured (the ones where RFC 9110 gives it that meaning). */
const STATUSES_WITH_RETRY_AFTER = new Set([429, 503]);

/**
 * The outcome of a response with this status. `bodyExcerpt` is kept in the reason of a failure, since a
 * vendor's error body is usually the only explanation the operator gets.
 */
export function classifyHttpStatus(
  status: number,
  retryAfterHeader: string | null | undefined,
  bodyExcerpt: string,
): AttemptResult {
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
