/** The first retry waits about this long; each further one doubles it, up to the cap. */
const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 10 * 60_000;

/**
 * Randomized exponential backoff ("full jitter"): a delay drawn uniformly between half and all of
 * `base * 2^(attempt-1)`, so that many messages failing together do not retry together. A
 * destination's `Retry-After` is honoured when it asks for longer.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.round(exponential / 2 + random() * (exponential / 2));
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_DELAY_MS));
}

/** Retries stop once the message has been failing for the whole retry window (spec §12.2: 4 hours). */
export function retryWindowExhausted(firstAttemptAt: number, now: number, retryWindowMs: number): boolean {
  return now - firstAttemptAt >= retryWindowMs;
}
