import { MAX_REMEMBERED_OUTCOMES, RecentMessageOutcomes } from './recent-message-outcomes';

describe('RecentMessageOutcomes', () => {
  it('keeps the latest outcome per destination of a message, a final one replacing a retry', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const outcomes = new RecentMessageOutcomes(10, () => now);
    outcomes.record('src1', 'm1', 'webhooks', 'retried', 'HTTP 503');
    outcomes.record('src1', 'm1', 'postgres', 'filtered');
    now += 1000;
    outcomes.record('src1', 'm1', 'webhooks', 'delivered');
    expect(outcomes.outcomesOf('src1', 'm1')).toEqual([
      { destinationSlug: 'webhooks', outcome: 'delivered', at: '2026-01-01T00:00:01.000Z' },
      { destinationSlug: 'postgres', outcome: 'filtered', at: '2026-01-01T00:00:00.000Z' },
    ]);
    expect(outcomes.outcomesOf('src2', 'm1')).toEqual([]);
    expect(outcomes.outcomesOf('src1', 'unknown')).toEqual([]);
  });

  it('forgets the oldest messages beyond its capacity and shortens long details', () => {
    const outcomes = new RecentMessageOutcomes(2);
    outcomes.record('s', 'a', 'webhooks', 'delivered');
    outcomes.record('s', 'b', 'webhooks', 'discarded', 'x'.repeat(1000));
    outcomes.record('s', 'c', 'webhooks', 'delivered');
    expect(outcomes.outcomesOf('s', 'a')).toEqual([]);
    expect(outcomes.outcomesOf('s', 'b')[0].detail).toHaveLength(300);
    expect(outcomes.outcomesOf('s', 'c')).toHaveLength(1);
  });

  it('counts its capacity in outcomes and reads a message whose outcomes span the wrap of the ring', () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const outcomes = new RecentMessageOutcomes(3, () => now);
    outcomes.record('s', 'old', 'webhooks', 'delivered');
    outcomes.record('s', 'm', 'webhooks', 'retried', 'HTTP 500');
    outcomes.record('s', 'm', 'postgres', 'delivered');
    now += 1000;
    // Wraps: takes the slot of 'old'.
    outcomes.record('s', 'm', 'webhooks', 'dead_lettered', 'retries exhausted');
    expect(outcomes.outcomesOf('s', 'old')).toEqual([]);
    expect(outcomes.outcomesOf('s', 'm')).toEqual([
      {
        destinationSlug: 'webhooks',
        outcome: 'dead_lettered',
        at: '2026-01-01T00:00:01.000Z',
        detail: 'retries exhausted',
      },
      { destinationSlug: 'postgres', outcome: 'delivered', at: '2026-01-01T00:00:00.000Z' },
    ]);
    expect(new RecentMessageOutcomes(0).outcomesOf('s', 'm')).toEqual([]);
  });

  it('answers several messages at once, each as it would alone', () => {
    const outcomes = new RecentMessageOutcomes(8);
    outcomes.record('s', 'a', 'webhooks', 'retried', 'HTTP 500');
    outcomes.record('s', 'b', 'webhooks', 'delivered');
    outcomes.record('other', 'a', 'webhooks', 'delivered');
    outcomes.record('s', 'a', 'postgres', 'filtered');
    outcomes.record('s', 'a', 'webhooks', 'delivered');
    const many = outcomes.outcomesOfMessages('s', ['a', 'b', 'unknown', 'a']);
    expect([...many.keys()].sort()).toEqual(['a', 'b']);
    expect(many.get('a')).toEqual(outcomes.outcomesOf('s', 'a'));
    expect(many.get('a')?.map((outcome) => [outcome.destinationSlug, outcome.outcome])).toEqual([
      ['webhooks', 'delivered'],
      ['postgres', 'filtered'],
    ]);
    expect(many.get('b')).toEqual(outcomes.outcomesOf('s', 'b'));
    expect(outcomes.outcomesOfMessages('s', []).size).toBe(0);
  });

  it('walks a full ring once for a request of 100 messages, not once per message', () => {
    const outcomes = new RecentMessageOutcomes();
    for (let index = 0; index < MAX_REMEMBERED_OUTCOMES; index += 1) {
      outcomes.record('s', `m${index}`, 'webhooks', 'delivered');
    }
    const hundred = Array.from({ length: 100 }, (_, index) => `m${index * 997}`);
    const fastest = (lookup: () => unknown) => {
      let best = Infinity;
      for (let round = 0; round < 5; round += 1) {
        const started = performance.now();
        lookup();
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const one = fastest(() => outcomes.outcomesOfMessages('s', [hundred[0]!]));
    const many = fastest(() => outcomes.outcomesOfMessages('s', hundred));
    expect(outcomes.outcomesOfMessages('s', hundred).size).toBe(100);
    // One walk each: about the same time (a walk per message would be about 100 times as long).
    expect(many).toBeLessThan(one * 10 + 5);
  });
});
