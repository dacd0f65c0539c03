import fc from 'fast-check';
import { compilePlan } from '../plan/compile-plan';
import { judgeMessage } from '../enforce/judge-message';
import { normalized, propertiesRule, settings } from '../testing/protocols.fixtures';
import { MAX_PLAN_PATTERN_LENGTH, planPatternProblem, planRegExp } from './plan-regexp';

describe('planRegExp', () => {
  it('never runs consecutive wide ranges on a backtracking engine: over the budget, the rule is skipped', () => {
    // `{0,64}` five times over one class backtracks over every split of the value on V8's engine
    // (about a minute for this message); on RE2 its program is over the budget.
    const plan = compilePlan({
      planId: 'rs_ranges',
      planName: 'Ranges',
      rules: {
        events: [
          {
            name: 'Order',
            rules: propertiesRule({ phone: { type: 'string', pattern: `^${'[0-9]{0,64}'.repeat(5)}$` } }),
          },
        ],
      },
    });
    expect(plan.skipped).toEqual([
      { rule: 'events[Order v1]', error: expect.stringContaining('too large to run') },
    ]);
    const message = normalized({ event: 'Order', properties: { phone: `${'1'.repeat(180)}x` } });

    const started = performance.now();
    const verdict = judgeMessage(plan, settings(), 'src', message);

    expect(performance.now() - started).toBeLessThan(20);
    expect(verdict).toMatchObject({ kind: 'allow', changed: false });
  });

  it('judges consecutive ranges within the budget in linear time, against a 32 KB value', () => {
    const plan = compilePlan({
      planId: 'rs_ranges',
      planName: 'Ranges',
      rules: {
        events: [
          {
            name: 'Order',
            rules: propertiesRule({ phone: { type: 'string', pattern: `^${'[0-9]{0,64}'.repeat(3)}$` } }),
          },
        ],
      },
    });
    expect(plan.skipped).toEqual([]);
    const message = normalized({ event: 'Order', properties: { phone: `${'1'.repeat(32_000)}x` } });

    const started = performance.now();
    const verdict = judgeMessage(plan, settings(), 'src', message);

    expect(performance.now() - started).toBeLessThan(500);
    expect(verdict.violations.map((violation) => violation.field)).toEqual(['properties.phone']);
  });

  it.each([
    ['257 characters', 'x'.repeat(MAX_PLAN_PATTERN_LENGTH + 1), /longer than 256 characters/],
    ['wide ranges', '^[0-9]{0,1000}[0-9]{0,1000}$', /too large to run \(\d+ RE2 instructions, at most 512\)/],
    [
      'nested ranges',
      '((a{0,100}){0,100}){0,100}',
      /not a regular expression RE2 runs .*invalid repeat count/,
    ],
    ['a backreference', '^(a)\\1$', /not a regular expression RE2 runs/],
    ['a lookbehind', '(?<=a)b', /not a regular expression RE2 runs/],
  ])('refuses %s', (_label, pattern, reason) => {
    expect(planPatternProblem(pattern)).toMatch(reason);
    expect(() => planRegExp(pattern)).toThrow(reason);
  });

  it('accepts the patterns of real plans, and a pattern of exactly the longest length', () => {
    for (const pattern of [
      '^ord_[0-9]+$',
      '^[a-z]{2}-[A-Z]{2}$',
      '^\\d{4}-\\d{2}$',
      '^[^@]+@[^@]+\\.[a-z]{2,}$',
    ]) {
      expect(planPatternProblem(pattern)).toBeUndefined();
    }
    expect(planPatternProblem('x'.repeat(MAX_PLAN_PATTERN_LENGTH))).toBeUndefined();
  });

  it('matches like JavaScript regular expressions on ordinary patterns', () => {
    const patterns = [
      '^ord_[0-9]+$',
      'a+b',
      '^(ab|cd)+$',
      '^[a-z]{2}-[A-Z]{2}$',
      'x?y*z',
      '^\\w+@\\w+\\.com$',
      '\\d{3}',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...patterns),
        fc.stringMatching(/^[a-zA-Z0-9_@.\- ]{0,12}$/),
        (pattern, input) => {
          expect(planRegExp(pattern).test(input)).toBe(new RegExp(pattern).test(input));
        },
      ),
      { numRuns: 500 },
    );
    expect(planRegExp('^(ab|cd)+$').test('abcdab')).toBe(true);
    expect(planRegExp('a+b').test('xxaab')).toBe(true);
  });

  it('checks a catastrophic pattern against a 32 KB value in linear time', () => {
    const plan = compilePlan({
      planId: 'rs_redos',
      planName: 'ReDoS',
      rules: {
        events: [
          {
            name: 'E',
            rules: propertiesRule({
              nested: { type: 'string', pattern: '^(a+)+$' },
              quadratic: { type: 'string', pattern: '^\\d*\\d*$' },
              unanchored: { type: 'string', pattern: 'a+b' },
            }),
          },
        ],
      },
    });
    expect(plan.skipped).toEqual([]);
    const long = 'a'.repeat(32_000);
    const message = normalized({
      event: 'E',
      properties: { nested: `${long}!`, quadratic: `${'1'.repeat(32_000)}x`, unanchored: long },
    });
    const started = performance.now();
    const verdict = judgeMessage(plan, settings(), 'src', message);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(verdict.violations.map((violation) => violation.field)).toEqual([
      'properties.nested',
      'properties.quadratic',
      'properties.unanchored',
    ]);
  });

  it('refuses what RE2 cannot run (lookarounds, backreferences), so the rule is skipped', () => {
    expect(() => planRegExp('^(?=a)a$')).toThrow();
    const plan = compilePlan({
      planId: 'rs_look',
      planName: 'Lookahead',
      rules: { events: [{ name: 'E', rules: propertiesRule({ a: { type: 'string', pattern: '^(?!x)' } }) }] },
    });
    expect(plan.skipped.map((skipped) => skipped.rule)).toEqual(['events[E v1]']);
  });
});
