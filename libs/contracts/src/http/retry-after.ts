/**
 * `Retry-After` (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an HTTP date.
 * `undefined` when absent or unreadable, so that the caller falls back to its own backoff instead of
 * trusting garbage. The client library (`libs/analytics-client`) keeps its own copy: it depends on
 * nothing of ours.
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
