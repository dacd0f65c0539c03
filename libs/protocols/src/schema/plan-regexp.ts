import { RE2JS } from 're2js';

/** What Ajv needs of a compiled pattern. */
export interface PatternMatcher {
  test(input: string): boolean;
}

/**
 * Patterns of a plan are written by its authors and run against message values of up to 32 KB. A
 * backtracking engine (V8's) takes seconds or more on some of them (`a+b`, `^\d*\d*$`, `(a+)+$`
 * against a long run of one character), which would stall ingestion for every tenant. So a pattern
 * runs on V8's engine only when its shape guarantees linear time there, and otherwise on RE2
 * (linear always; it is also the engine Segment's Go validator uses, so the syntax it accepts is the
 * syntax plans were written for). A pattern RE2 refuses (backreferences, lookarounds) throws here,
 * and its rule is skipped like any rule that does not compile.
 */
export function planRegExp(pattern: string): PatternMatcher {
  if (runsLinearlyOnBacktracking(pattern)) return new RegExp(pattern);
  const compiled = RE2JS.compile(pattern);
  return {
    test: (input: string) => compiled.test(input),
    toString: () => `re2:${pattern}`,
  } as PatternMatcher;
}

/** The form Ajv's `code.regExp` option takes (it reads `code` when generating standalone code). */
export const ajvPlanRegExp = Object.assign((pattern: string) => planRegExp(pattern), {
  code: 'planRegExp',
});

/** The widest `{n,m}` counted as bounded: a wider one backtracks like `*`. */
const MAX_BOUNDED_RANGE = 64;

/**
 * True only for shapes that backtrack in linear time: anchored at the start (one starting
 * position), no alternation, no backreference or lookaround, no quantified group, and at most one
 * unbounded quantifier (two can retry each other's split of the input: quadratic). Conservative:
 * a false answer only means RE2 runs it.
 */
export function runsLinearlyOnBacktracking(pattern: string): boolean {
  if (!pattern.startsWith('^')) return false;
  if (/\\[1-9k]|\(\?[=!<]/.test(pattern)) return false;
  // Escapes and character classes hold no structure: blank them out. A class holding a literal `[`
  // is left in place (matching it linearly needs the class not to contain `[`), so the `[` check
  // below sends such a pattern to RE2: conservative, never wrong.
  const shape = pattern.replace(/\\./g, 'x').replace(/\[[^[\]]*\]/g, 'x');
  if (shape.includes('|') || shape.includes('[')) return false;
  if (/\)\s*(?:[*+?]|\{)/.test(shape)) return false;
  let unbounded = 0;
  for (const quantifier of shape.match(/[*+]|\{\d*,\d*\}/g) ?? []) {
    // `{n}` repeats exactly, no choice to retry; `{n,m}` chooses like `*` once the range is wide.
    if (quantifier === '*' || quantifier === '+') unbounded += 1;
    else {
      const [lower, upper] = quantifier.slice(1, -1).split(',');
      if (upper === '' || Number(upper) - Number(lower || 0) > MAX_BOUNDED_RANGE) unbounded += 1;
    }
  }
  return unbounded <= 1;
}
