// Every pattern a plan may hold is either refused when the plan is written or runs within its
// budget: generated patterns (quantifiers, ranges, groups, alternation, classes) against 32 KB
// values built to be their worst case, with the time and the memory of each run measured.
import fc from 'fast-check';
import { findRefusedPattern } from './plan-patterns';
import { planPatternProblem, planRegExp } from './plan-regexp';

/** Time one run of one accepted pattern may take on a 32 KB value (measured, on a shared machine). */
const RUN_BUDGET_MS = 1_000;
/** Heap one run may leave behind. */
const RUN_HEAP_BUDGET_BYTES = 64 * 1024 * 1024;

const atom = fc.constantFrom('a', 'b', '1', '.', '[0-9]', '[a-z]', '\\d', '\\w', '[^x]', '(?:a|aa)', '(a|b)');
const range = (maxLow: number, maxWidth: number) =>
  fc
    .tuple(fc.integer({ min: 0, max: maxLow }), fc.integer({ min: 0, max: maxWidth }))
    .map(([low, width]) => `{${low},${low + width}}`);
const quantifier = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('', '*', '+', '?', '*?', '+?', '{2,}') },
  { weight: 3, arbitrary: range(8, 64) },
  { weight: 1, arbitrary: range(200, 800) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 1_200 }).map((count) => `{${count}}`) },
);
const piece: fc.Arbitrary<string> = fc.letrec<{ piece: string }>((tie) => ({
  piece: fc.oneof(
    { depthSize: 'small' },
    fc.tuple(atom, quantifier).map(([a, q]) => a + q),
    fc
      .tuple(fc.array(tie('piece'), { minLength: 1, maxLength: 3 }), quantifier)
      .map(([inner, q]) => `(?:${inner.join('')})${q}`),
    fc.tuple(tie('piece'), tie('piece')).map(([left, right]) => `(?:${left}|${right})`),
  ),
})).piece;
const pattern = fc
  .tuple(fc.boolean(), fc.array(piece, { minLength: 1, maxLength: 5 }), fc.boolean())
  .map(([start, pieces, end]) => `${start ? '^' : ''}${pieces.join('')}${end ? '$' : ''}`);

/** Values that make matching work hardest: long runs of what the pattern repeats, then a mismatch. */
const VALUES = [
  `${'a'.repeat(32 * 1024)}!`,
  `${'1'.repeat(32 * 1024)}x`,
  Array.from({ length: 32 * 1024 }, (_, index) => 'ab1'[index % 3]).join(''),
];

describe('plan patterns: refused at write or run within the budget', () => {
  it('holds for generated patterns against 32 KB worst-case values', () => {
    let accepted = 0;
    let refused = 0;
    let slowest = 0;
    let heaviest = 0;
    fc.assert(
      fc.property(pattern, (source) => {
        const problem = planPatternProblem(source);
        const rules = { global: { properties: { properties: { properties: { x: { pattern: source } } } } } };
        // The write-time check and the run-time compilation agree.
        expect(findRefusedPattern(rules, 'tracking_plan.rules')?.reason).toBe(problem);
        if (problem !== undefined) {
          refused += 1;
          expect(() => planRegExp(source)).toThrow();
          return;
        }
        accepted += 1;
        const matcher = planRegExp(source);
        for (const value of VALUES) {
          const heapBefore = process.memoryUsage().heapUsed;
          const started = performance.now();
          matcher.test(value);
          const elapsed = performance.now() - started;
          const grown = process.memoryUsage().heapUsed - heapBefore;
          slowest = Math.max(slowest, elapsed);
          heaviest = Math.max(heaviest, grown);
          expect(elapsed).toBeLessThan(RUN_BUDGET_MS);
          expect(grown).toBeLessThan(RUN_HEAP_BUDGET_BYTES);
        }
      }),
      { numRuns: 300 },
    );
    // Both sides were exercised: patterns over the budgets, and accepted ones that ran.
    expect(accepted).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(10);
    expect(slowest).toBeLessThan(RUN_BUDGET_MS);
    expect(heaviest).toBeLessThan(RUN_HEAP_BUDGET_BYTES);
  }, 300_000);
});
