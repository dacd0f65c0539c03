import { normalized } from '../testing/protocols.fixtures';
import { outcomeFor, SAMPLES_PER_VIOLATION, summarizeViolations } from './violation-summary';

const now = new Date('2026-03-10T12:00:00.000Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
const required = { type: 'Required', field: 'properties.a', description: 'properties.a is required' };
const invalid = {
  type: 'Invalid Type',
  field: 'properties.b',
  description: 'Invalid type. Expected: string, given: integer',
};

describe('summarizeViolations (R13)', () => {
  it('counts per type, event, violation type, field and description, within the window only', () => {
    const track = (event: string) => normalized({ event });
    const recorded = [
      { outcome: outcomeFor(track('Order'), [required, invalid], undefined), recordedAt: minutesAgo(5) },
      { outcome: outcomeFor(track('Order'), [required], 'schema_violation'), recordedAt: minutesAgo(10) },
      { outcome: outcomeFor(track('Signup'), [required], undefined), recordedAt: minutesAgo(20) },
      { outcome: outcomeFor(track('Other'), [], 'unplanned'), recordedAt: minutesAgo(30) },
      // Older than an hour: only in the 24 h window.
      {
        outcome: outcomeFor(track('Order'), [required], 'common_schema_violation'),
        recordedAt: minutesAgo(120),
      },
    ];
    const hour = summarizeViolations(recorded, '1h', now);
    expect(hour.since).toBe(minutesAgo(60).toISOString());
    expect(hour.violations.map((count) => [count.event_name, count.field, count.count])).toEqual([
      ['Order', 'properties.a', 2],
      ['Order', 'properties.b', 1],
      ['Signup', 'properties.a', 1],
    ]);
    expect(hour.violations[0]).toMatchObject({
      message_type: 'track',
      violation_type: 'Required',
      description: 'properties.a is required',
      last_seen: minutesAgo(5).toISOString(),
    });
    expect(hour.blocked).toEqual({
      unplanned: 1,
      schema_violation: 1,
      common_schema_violation: 0,
      unplanned_and_schema_violation: 0,
    });
    expect([hour.total_violations, hour.total_blocked]).toEqual([4, 2]);
    const day = summarizeViolations(recorded, '24h', now);
    expect(day.violations[0].count).toBe(3);
    expect(day.blocked.common_schema_violation).toBe(1);
  });

  it(`keeps the ${SAMPLES_PER_VIOLATION} newest sample payloads per counted violation`, () => {
    const messages = Array.from({ length: 5 }, () => normalized({ event: 'Order' }));
    const recorded = messages.map((message, index) => ({
      outcome: outcomeFor(message, [required], undefined),
      recordedAt: minutesAgo(50 - index),
    }));
    const [count] = summarizeViolations(recorded, '7d', now).violations;
    expect(count.count).toBe(5);
    expect(count.samples.map((sample) => sample.messageId)).toEqual(
      [messages[4], messages[3], messages[2]].map((message) => message.messageId),
    );
  });

  it('is empty when nothing was recorded', () => {
    expect(summarizeViolations([], '7d', now)).toMatchObject({
      violations: [],
      total_violations: 0,
      total_blocked: 0,
    });
  });
});
