import type { NormalizedMessage } from '@tributary/contracts';
import type { RoutingDecision } from '../delivery/delivery.decider';
import {
  decideRedriveSettlement,
  decideSettlement,
  MAX_RETRY_DELAY_MS,
  retryDelayMs,
  type Settlement,
  type SettlementFacts,
} from './settlement.decider';

const STORED_AT = new Date('2026-03-10T08:00:00.000Z');
const WINDOW_MS = 4 * 60 * 60 * 1000;
const SENT: RoutingDecision = { outcome: 'deliver', message: {} as NormalizedMessage };

function facts(overrides: Partial<SettlementFacts> = {}): SettlementFacts {
  return {
    routing: SENT,
    attempt: { outcome: 'retry', reason: 'HTTP 500' },
    deliveryCount: 1,
    storedAt: STORED_AT,
    firstFailedAt: null,
    attemptsKept: 1,
    now: new Date(STORED_AT.getTime() + 1_000),
    retryWindowMs: WINDOW_MS,
    jitter: 0.5,
    ...overrides,
  };
}

const after = (ms: number) => new Date(STORED_AT.getTime() + ms);
const ACK = { kind: 'ack' } as const;

describe('decideSettlement', () => {
  // Every outcome, each from the facts that lead to it, on a first delivery and on a redelivery.
  const rows: { name: string; given: Partial<SettlementFacts>; settlement: Settlement }[] = [
    {
      name: 'routing skipped it (a disabled destination)',
      given: {
        routing: { outcome: 'skip', reason: 'disabled', detail: 'destination hook is disabled' },
        attempt: undefined,
      },
      settlement: { outcome: 'skipped', log: ACK, forgetsHistory: false },
    },
    {
      name: 'a skip of a redelivered message drops its history',
      given: {
        routing: { outcome: 'skip', reason: 'integrations', detail: 'integrations say no' },
        attempt: undefined,
        deliveryCount: 3,
      },
      settlement: { outcome: 'skipped', log: ACK, forgetsHistory: true },
    },
    {
      name: 'a destination filter dropped it',
      given: {
        routing: { outcome: 'filter', reason: 'dropped', filterId: 'f1', filterTitle: 'no bots' },
        attempt: undefined,
      },
      settlement: { outcome: 'filtered', log: ACK, forgetsHistory: false },
    },
    {
      name: 'the poison rule gave up on it before any attempt',
      given: {
        poison: {
          action: 'dead-letter',
          unsettledDeliveries: 3,
          reason: 'poison: 3 deliveries never settled',
        },
        attempt: undefined,
        deliveryCount: 4,
      },
      settlement: {
        outcome: 'dead_lettered',
        log: { kind: 'deadLetter', reason: 'poison: 3 deliveries never settled' },
        reason: 'poison: 3 deliveries never settled',
        deadLetterCause: 'poison',
        forgetsHistory: true,
      },
    },
    {
      name: 'delivered at the first delivery',
      given: { attempt: { outcome: 'delivered' } },
      settlement: { outcome: 'delivered', log: ACK, forgetsHistory: false },
    },
    {
      name: 'delivered after failures, whatever its history (past the window too)',
      given: {
        attempt: { outcome: 'delivered' },
        poison: { action: 'attempt', unsettledDeliveries: 0, suspect: false },
        deliveryCount: 9,
        firstFailedAt: after(0),
        now: after(WINDOW_MS * 2),
      },
      settlement: { outcome: 'delivered', log: ACK, forgetsHistory: true },
    },
    {
      name: "the destination's own subscriptions took none of it",
      given: { attempt: { outcome: 'filtered', reason: 'no subscription matches' } },
      settlement: { outcome: 'filtered', log: ACK, reason: 'no subscription matches', forgetsHistory: false },
    },
    {
      name: 'refused for good: discarded at once, even inside the retry window',
      given: { attempt: { outcome: 'discard', reason: 'HTTP 400', status: 400 } },
      settlement: { outcome: 'discarded', log: ACK, reason: 'HTTP 400', forgetsHistory: false },
    },
    {
      name: "a discard keeps the guard's cause",
      given: {
        attempt: { outcome: 'discard', reason: 'egress_denied: 10.0.0.5', cause: 'egress_denied' },
        deliveryCount: 2,
      },
      settlement: {
        outcome: 'discarded',
        log: ACK,
        reason: 'egress_denied: 10.0.0.5',
        discardCause: 'egress_denied',
        forgetsHistory: true,
      },
    },
    {
      name: 'a first failure is retried with the first backoff step, keeping its history',
      given: { jitter: 0 },
      settlement: {
        outcome: 'retried',
        log: { kind: 'nak', delayMs: 500 },
        reason: 'HTTP 500',
        forgetsHistory: false,
      },
    },
    {
      name: 'a failure past the window is dead-lettered with the count of its attempts',
      given: { deliveryCount: 20, firstFailedAt: after(0), attemptsKept: 20, now: after(WINDOW_MS) },
      settlement: {
        outcome: 'dead_lettered',
        log: { kind: 'deadLetter', reason: 'retries exhausted after 20 attempts: HTTP 500' },
        reason: 'HTTP 500',
        deadLetterCause: 'retries_exhausted',
        forgetsHistory: true,
      },
    },
    {
      name: 'a first failure with a window of zero is dead-lettered, and its recorded failure dropped',
      given: { retryWindowMs: 0 },
      settlement: {
        outcome: 'dead_lettered',
        log: { kind: 'deadLetter', reason: 'retries exhausted after 1 attempts: HTTP 500' },
        reason: 'HTTP 500',
        deadLetterCause: 'retries_exhausted',
        forgetsHistory: true,
      },
    },
  ];

  it.each(rows)('$name', ({ given, settlement }) => {
    expect(decideSettlement(facts(given))).toEqual(settlement);
  });

  it('speaks every outcome word', () => {
    expect(new Set(rows.map((row) => row.settlement.outcome))).toEqual(
      new Set(['delivered', 'discarded', 'retried', 'filtered', 'skipped', 'dead_lettered']),
    );
  });

  const delayOf = (settlement: Settlement) => (settlement.log.kind === 'nak' ? settlement.log.delayMs : NaN);

  it('retries a first failure with the first backoff step', () => {
    expect(delayOf(decideSettlement(facts({ jitter: 0 })))).toBe(500);
    expect(delayOf(decideSettlement(facts({ jitter: 0.999999 })))).toBe(1_000);
  });

  it('doubles the backoff with the delivery count, up to the cap', () => {
    const firstFailedAt = after(0);
    const delays = [1, 2, 3, 4, 5, 12, 30].map((deliveryCount) =>
      delayOf(decideSettlement(facts({ deliveryCount, firstFailedAt, jitter: 0.999999, now: after(1) }))),
    );
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, MAX_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS]);
  });

  it('counts the window from the first failed attempt, not from the delivery or the store time', () => {
    const firstFailedAt = after(60 * 60 * 1000);
    expect(
      decideSettlement(
        facts({ deliveryCount: 20, firstFailedAt, now: new Date(firstFailedAt.getTime() + WINDOW_MS - 1) }),
      ),
    ).toMatchObject({ outcome: 'retried', log: { kind: 'nak', delayMs: 1 } });
    expect(
      decideSettlement(
        facts({ deliveryCount: 20, firstFailedAt, now: new Date(firstFailedAt.getTime() + WINDOW_MS) }),
      ),
    ).toMatchObject({ outcome: 'dead_lettered', deadLetterCause: 'retries_exhausted' });
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
    expect(decision.log).toEqual({ kind: 'nak', delayMs: 30_000 });
  });

  it('honours a Retry-After longer than the backoff, within the window', () => {
    const asked = decideSettlement(
      facts({ attempt: { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 120_000 } }),
    );
    expect(asked.log).toEqual({ kind: 'nak', delayMs: 120_000 });
    const shortWindow = decideSettlement(
      facts({
        attempt: { outcome: 'retry', reason: 'HTTP 429', retryAfterMs: 120_000 },
        retryWindowMs: 60_000,
      }),
    );
    expect(shortWindow.log).toEqual({ kind: 'nak', delayMs: 60_000 });
  });

  it('clamps a Retry-After to the longest backoff (the only place it is clamped)', () => {
    const asked = decideSettlement(
      facts({ attempt: { outcome: 'retry', reason: 'HTTP 503', retryAfterMs: 24 * 60 * 60 * 1000 } }),
    );
    expect(asked.log).toEqual({ kind: 'nak', delayMs: MAX_RETRY_DELAY_MS });
  });

  it('never dates the first failure before the message was stored (clock skew between replicas)', () => {
    const decision = decideSettlement(
      facts({ firstFailedAt: after(-WINDOW_MS), now: after(1_000), deliveryCount: 2, jitter: 0 }),
    );
    expect(decision.log).toEqual({ kind: 'nak', delayMs: 1_000 });
  });

  it('refuses invalid dates instead of retrying forever', () => {
    expect(() => decideSettlement(facts({ now: new Date('nonsense') }))).toThrow(/now is an invalid Date/);
    expect(() => decideSettlement(facts({ firstFailedAt: new Date('x') }))).toThrow(/firstFailedAt/);
  });

  it('refuses a sent message without an attempt', () => {
    expect(() => decideSettlement(facts({ attempt: undefined }))).toThrow(/no attempt/);
  });

  it('is the same decision for the same facts (no clock, no randomness of its own)', () => {
    const given = facts({ deliveryCount: 4, firstFailedAt: after(0), now: after(30_000), jitter: 0.3 });
    expect(decideSettlement(given)).toEqual(decideSettlement(given));
  });
});

describe('decideRedriveSettlement', () => {
  it.each([
    {
      name: 'delivered: it leaves the dead letters',
      given: { attempt: { outcome: 'delivered' as const } },
      settlement: { outcome: 'delivered' },
    },
    {
      name: 'refused: it stays a dead letter with the reason',
      given: { attempt: { outcome: 'discard' as const, reason: 'HTTP 404' } },
      settlement: { outcome: 'dead_lettered', reason: 'HTTP 404' },
    },
    {
      name: 'failed: it stays a dead letter, not retried',
      given: { attempt: { outcome: 'retry' as const, reason: 'HTTP 503' } },
      settlement: { outcome: 'dead_lettered', reason: 'HTTP 503' },
    },
    {
      name: 'filtered by its subscriptions: it stays a dead letter',
      given: { attempt: { outcome: 'filtered' as const, reason: 'no subscription matches' } },
      settlement: { outcome: 'dead_lettered', reason: 'no subscription matches' },
    },
    {
      name: 'still poison: it stays a dead letter, unsent',
      given: { poison: { reason: 'poison: 3 deliveries never settled' } },
      settlement: {
        outcome: 'dead_lettered',
        reason: 'poison: 3 deliveries never settled',
        deadLetterCause: 'poison',
      },
    },
  ])('$name', ({ given, settlement }) => {
    expect(decideRedriveSettlement(given)).toEqual(settlement);
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
