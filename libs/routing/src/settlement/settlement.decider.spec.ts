import {
  decideSettlement,
  MAX_RETRY_DELAY_MS,
  retryDelayMs,
  type SettlementFacts,
} from './settlement.decider';

const STORED_AT = new Date('2026-03-10T08:00:00.000Z');
const WINDOW_MS = 4 * 60 * 60 * 1000;

function facts(overrides: Partial<SettlementFacts> = {}): SettlementFacts {
  return {
    attempt: { outcome: 'retry', reason: 'HTTP 500' },
    deliveryCount: 1,
    storedAt: STORED_AT,
    firstFailedAt: null,
    now: new Date(STORED_AT.getTime() + 1_000),
    retryWindowMs: WINDOW_MS,
    jitter: 0.5,
    ...overrides,
  };
}

const after = (ms: number) => new Date(STORED_AT.getTime() + ms);

describe('decideSettlement', () => {
  it('acknowledges a delivered message, whatever its history', () => {
    expect(decideSettlement(facts({ attempt: { outcome: 'delivered' } }))).toEqual({ action: 'delivered' });
    expect(
      decideSettlement(
        facts({
          attempt: { outcome: 'delivered' },
          deliveryCount: 9,
          firstFailedAt: after(0),
          now: after(WINDOW_MS * 2),
        }),
      ),
    ).toEqual({ action: 'delivered' });
  });

  it('discards a refused message at once, even inside the retry window', () => {
    expect(decideSettlement(facts({ attempt: { outcome: 'discard', reason: 'HTTP 400' } }))).toEqual({
      action: 'discard',
      reason: 'HTTP 400',
    });
  });

  it('retries a first failure with the first backoff step', () => {
    expect(decideSettlement(facts({ jitter: 0 }))).toEqual({ action: 'retry', delayMs: 500 });
    expect(decideSettlement(facts({ jitter: 0.999999 }))).toEqual({ action: 'retry', delayMs: 1_000 });
  });

  it('doubles the backoff with the delivery count, up to the cap', () => {
    const firstFailedAt = after(0);
    const delays = [1, 2, 3, 4, 5, 12, 30].map((deliveryCount) => {
      const decision = decideSettlement(
        facts({ deliveryCount, firstFailedAt, jitter: 0.999999, now: after(1) }),
      );
      return decision.action === 'retry' ? decision.delayMs : NaN;
    });
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, MAX_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS]);
  });

  it('counts the window from the first failed attempt, not from the delivery or the store time', () => {
    const firstFailedAt = after(60 * 60 * 1000);
    expect(
      decideSettlement(
        facts({ deliveryCount: 20, firstFailedAt, now: new Date(firstFailedAt.getTime() + WINDOW_MS - 1) }),
      ),
    ).toEqual({ action: 'retry', delayMs: 1 });
    expect(
      decideSettlement(
        facts({ deliveryCount: 20, firstFailedAt, now: new Date(firstFailedAt.getTime() + WINDOW_MS) }),
      ),
    ).toEqual({ action: 'dead-letter', reason: `retry window of ${WINDOW_MS} ms exhausted: HTTP 500` });
  });

  it('schedules the last retry at the end of the window, never past it', () => {
    const firstFailedAt = after(0);
    const decision = decideSettlement(
      facts({
        deliveryCount: 15,
        firstFailedAt,
        now: new Date(firstFailedAt.getTime() + WINDOW_MS - 30_000),
      }),
    );
    expect(decision).toEqual({ action: 'retry', delayMs: 30_000 });
  });

  it('honours a Retry-After longer than the backoff, within the window', () => {
    const asked = decideSettlement(
      facts({ attempt: { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 120_000 } }),
    );
    expect(asked).toEqual({ action: 'retry', delayMs: 120_000 });
    const shortWindow = decideSettlement(
      facts({
        attempt: { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 120_000 },
        retryWindowMs: 60_000,
      }),
    );
    expect(shortWindow).toEqual({ action: 'retry', delayMs: 60_000 });
  });

  it('never dates the first failure before the message was stored (clock skew between replicas)', () => {
    const decision = decideSettlement(
      facts({ firstFailedAt: after(-WINDOW_MS), now: after(1_000), deliveryCount: 2, jitter: 0 }),
    );
    expect(decision).toEqual({ action: 'retry', delayMs: 1_000 });
  });

  it('dead-letters at once when the window is zero', () => {
    expect(decideSettlement(facts({ retryWindowMs: 0 }))).toMatchObject({ action: 'dead-letter' });
  });

  it('refuses invalid dates instead of retrying forever', () => {
    expect(() => decideSettlement(facts({ now: new Date('nonsense') }))).toThrow(/now is an invalid Date/);
    expect(() => decideSettlement(facts({ firstFailedAt: new Date('x') }))).toThrow(/firstFailedAt/);
  });

  it('is the same decision for the same facts (no clock, no randomness of its own)', () => {
    const given = facts({ deliveryCount: 4, firstFailedAt: after(0), now: after(30_000), jitter: 0.3 });
    expect(decideSettlement(given)).toEqual(decideSettlement(given));
  });
});

describe('retryDelayMs', () => {
  it('stays between half and all of the step for any jitter', () => {
    for (const jitter of [-1, 0, 0.25, 0.5, 0.99, 2]) {
      const delay = retryDelayMs(3, undefined, jitter);
      expect(delay).toBeGreaterThanOrEqual(2_000);
      expect(delay).toBeLessThanOrEqual(4_000);
    }
  });

  it('caps a Retry-After at the longest backoff', () => {
    expect(retryDelayMs(1, 24 * 60 * 60 * 1000, 0)).toBe(MAX_RETRY_DELAY_MS);
  });
});
