import { backoffDelayMs, parseRetryAfterMs, verdictForStatus } from './retry-policy';

describe('verdictForStatus', () => {
  it.each([200, 204, 299])('%i is a success', (status) => expect(verdictForStatus(status)).toBe('success'));
  it.each([429, 500, 501, 502, 503, 504, 511, 599])('%i is retried', (status) =>
    expect(verdictForStatus(status)).toBe('retry'),
  );
  it.each([301, 400, 401, 403, 404, 408, 413, 415])('%i is final', (status) =>
    expect(verdictForStatus(status)).toBe('give_up'),
  );
});

describe('backoffDelayMs', () => {
  const options = { initialDelayMs: 100, maxDelayMs: 5000 };

  it('doubles per retry, between half and all of the ceiling', () => {
    expect([0, 1, 2, 3].map((retry) => backoffDelayMs(retry, options, () => 0))).toEqual([50, 100, 200, 400]);
    expect([0, 1, 2, 3].map((retry) => backoffDelayMs(retry, options, () => 1))).toEqual([
      100, 200, 400, 800,
    ]);
  });

  it('is capped at maxDelayMs, even for absurd retry numbers', () => {
    expect(backoffDelayMs(10, options, () => 1)).toBe(5000);
    expect(backoffDelayMs(5000, options, () => 0.5)).toBe(3750);
  });

  it('is random within its bounds (jitter)', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelayMs(4, options)));
    expect(delays.size).toBeGreaterThan(5);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(800);
      expect(delay).toBeLessThanOrEqual(1600);
    }
  });
});

describe('parseRetryAfterMs', () => {
  it('reads seconds, whole or fractional', () => {
    expect(parseRetryAfterMs('2', 300_000)).toBe(2000);
    expect(parseRetryAfterMs(' 0.5 ', 300_000)).toBe(500);
    expect(parseRetryAfterMs('0', 300_000)).toBe(0);
  });

  it('reads an HTTP date as the time left until it', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(parseRetryAfterMs('Wed, 21 Oct 2026 07:28:03 GMT', 300_000, () => now)).toBe(3000);
    expect(parseRetryAfterMs('Wed, 21 Oct 2026 07:27:00 GMT', 300_000, () => now)).toBe(0);
  });

  it('caps long waits and ignores what it cannot read', () => {
    expect(parseRetryAfterMs('86400', 300_000)).toBe(300_000);
    expect(parseRetryAfterMs(null, 300_000)).toBeUndefined();
    expect(parseRetryAfterMs('', 300_000)).toBeUndefined();
    expect(parseRetryAfterMs('-3', 300_000)).toBeUndefined();
    expect(parseRetryAfterMs('soon', 300_000)).toBeUndefined();
  });
});
