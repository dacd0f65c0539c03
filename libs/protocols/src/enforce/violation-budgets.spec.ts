// Per-message budgets of what violations cost (docs/protocols.md R10, R12): a message can break its
// schema thousands of times, and each violation used to be stored, forwarded and looked up again.
import { compilePlan } from '../plan/compile-plan';
import { normalized, propertiesRule, settings } from '../testing/protocols.fixtures';
import { violationForwards } from './forwards';
import { judgeMessage, MAX_VIOLATIONS_PER_MESSAGE } from './judge-message';

const origin = {
  source: { id: 'src_A', slug: 'web', name: 'Web' },
  plan: { id: 'rs_1', name: 'Main' },
  now: '2026-02-03T04:00:01.000Z',
};

describe('violation budgets', () => {
  it('reports at most 100 violations of an array of 16,000 wrong items, counts the rest, and forwards one track', () => {
    const plan = compilePlan({
      planId: 'rs_1',
      planName: 'Main',
      rules: {
        events: [
          { name: 'Order', rules: propertiesRule({ a: { type: 'array', items: { type: 'string' } } }) },
        ],
      },
    });
    const message = normalized({
      event: 'Order',
      properties: { a: Array.from({ length: 16_000 }, () => 1) },
    });
    const inputSize = JSON.stringify(message).length;

    const started = performance.now();
    const verdict = judgeMessage(plan, settings(), 'src_A', message);
    const elapsed = performance.now() - started;

    if (verdict.kind !== 'allow' || !verdict.changed) throw new Error(`unexpected verdict ${verdict.kind}`);
    expect(verdict.violations).toHaveLength(MAX_VIOLATIONS_PER_MESSAGE);
    expect(verdict.violationsTruncated).toBe(16_000 - MAX_VIOLATIONS_PER_MESSAGE);
    const protocols = (verdict.message.context as Record<string, any>).protocols;
    expect(protocols.violations).toHaveLength(MAX_VIOLATIONS_PER_MESSAGE);
    expect(protocols.violations_truncated).toBe(15_900);
    expect(JSON.stringify(verdict.message).length).toBeLessThan(2 * inputSize);

    const forwards = violationForwards(message, verdict.violations, origin, verdict.violationsTruncated);
    expect(forwards).toHaveLength(1);
    expect(forwards[0].properties).toMatchObject({ violationCount: 16_000 });
    expect(JSON.stringify(forwards).length).toBeLessThan(2 * inputSize);
    // Ajv still reads every item once; what follows from each violation no longer multiplies.
    expect(elapsed).toBeLessThan(2_000);
  });

  it('omits the keys of 3,500 violations in linear time', () => {
    const plan = compilePlan({
      planId: 'rs_1',
      planName: 'Main',
      rules: {
        events: [
          { name: 'Order', rules: propertiesRule({}, [], { additionalProperties: { type: 'number' } }) },
        ],
      },
    });
    const properties = Object.fromEntries(
      Array.from({ length: 3_500 }, (_, index) => [`key${index}`, 'text']),
    );
    const message = normalized({ event: 'Order', properties: { ...properties, kept: 1 } });

    const started = performance.now();
    const verdict = judgeMessage(
      plan,
      settings({ allow_track_properties_on_violations: false }),
      'src_A',
      message,
    );
    const elapsed = performance.now() - started;

    if (verdict.kind !== 'allow' || !verdict.changed) throw new Error(`unexpected verdict ${verdict.kind}`);
    expect(verdict.omittedOnViolation).toHaveLength(3_500);
    expect(verdict.message.properties).toEqual({ kept: 1 });
    expect(verdict.violations).toHaveLength(MAX_VIOLATIONS_PER_MESSAGE);
    expect(elapsed).toBeLessThan(1_500);
  });

  it('names the longest key a violation path starts with, keys holding dots included', () => {
    const plan = compilePlan({
      planId: 'rs_1',
      planName: 'Main',
      rules: {
        events: [
          {
            name: 'Order',
            rules: propertiesRule({}, [], {
              additionalProperties: { type: 'object', additionalProperties: { type: 'number' } },
            }),
          },
        ],
      },
    });
    const message = normalized({
      event: 'Order',
      properties: { 'a.b': { c: 'x' }, a: { ok: 1 }, fine: { n: 2 } },
    });
    const verdict = judgeMessage(
      plan,
      settings({ allow_track_properties_on_violations: false }),
      'src_A',
      message,
    );
    if (verdict.kind !== 'allow' || !verdict.changed) throw new Error(`unexpected verdict ${verdict.kind}`);
    expect(verdict.violations.map((violation) => violation.field)).toEqual(['properties.a.b.c']);
    expect(verdict.omittedOnViolation).toEqual(['a.b']);
    expect(verdict.message.properties).toEqual({ a: { ok: 1 }, fine: { n: 2 } });
  });
});
