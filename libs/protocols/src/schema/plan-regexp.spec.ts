import fc from 'fast-check';
import { compilePlan } from '../plan/compile-plan';
import { judgeMessage } from '../enforce/judge-message';
import { normalized, propertiesRule, settings } from '../testing/protocols.fixtures';
import { planRegExp, runsLinearlyOnBacktracking } from './plan-regexp';

describe('planRegExp', () => {
  it.each([
    ['^ord_[0-9]+$', true],
    ['^[a-z]{2}-[A-Z]{2}$', true],
    ['^\\d{4}-\\d{2}$', true],
    ['^[a-z|]+$', true],
    ['a+b', false], // unanchored: every start position is tried again
    ['^\\d*\\d*$', false], // two unbounded quantifiers
    ['^(a+)+$', false], // quantified group
    ['^(ab|cd)$', false], // alternation
    ['^a{1,1000}b{1,1000}$', false], // wide ranges count as unbounded
    ['^(a)\\1$', false], // backreference
  ])('runs %s on the backtracking engine: %s', (pattern, linear) => {
    expect(runsLinearlyOnBacktracking(pattern)).toBe(linear);
  });

  it('matches like JavaScript regular expressions on ordinary patterns, whichever engine runs them', () => {
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
