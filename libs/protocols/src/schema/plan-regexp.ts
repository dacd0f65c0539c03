import { RE2JS } from 're2js';

/** What Ajv needs of a compiled pattern. */
export interface PatternMatcher {
  test(input: string): boolean;
}

/** Longest `pattern` (or `patternProperties` key) a plan may hold. */
export const MAX_PLAN_PATTERN_LENGTH = 256;

/**
 * Largest RE2 program a plan pattern may compile to. RE2 is linear in the value, but its work per
 * character grows with the program (`[0-9]{0,64}` is some 130 instructions, `[0-9]{0,1000}` some
 * 2,000), so the size is capped like the length: the pattern of a real plan (an email, an id format,
 * a date) stays under a hundred.
 */
export const MAX_PLAN_PATTERN_PROGRAM_SIZE = 512;

/** Why a plan pattern is refused (`undefined` when it is accepted). */
export function planPatternProblem(pattern: string): string | undefined {
  const compiled = compileWithinBudgets(pattern);
  return typeof compiled === 'string' ? compiled : undefined;
}

/** The compiled pattern, or why it is refused. */
function compileWithinBudgets(pattern: string): RE2JS | string {
  if (pattern.length > MAX_PLAN_PATTERN_LENGTH) {
    return `the pattern is longer than ${MAX_PLAN_PATTERN_LENGTH} characters`;
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `the pattern is not a regular expression RE2 runs (${reason}); backreferences and lookarounds are not supported`;
  }
  if (compiled.programSize() > MAX_PLAN_PATTERN_PROGRAM_SIZE) {
    return `the pattern is too large to run (${compiled.programSize()} RE2 instructions, at most ${MAX_PLAN_PATTERN_PROGRAM_SIZE}); use smaller repetition counts`;
  }
  return compiled;
}

/**
 * Patterns of a plan are written by its authors and run against message values of up to 32 KB. A
 * backtracking engine (V8's) takes seconds or more on some of them (`a+b`, `^\d*\d*$`, `(a+)+$`, a
 * few `[0-9]{0,64}` in a row, against a long run of one character), which would stall ingestion for
 * every tenant. So every pattern runs on RE2, linear in the value always; it is also the engine
 * Segment's Go validator uses, so the syntax it accepts is the syntax plans were written for. The
 * Config API refuses a pattern RE2 cannot run, or one over the budgets above (`planPatternProblem`);
 * one stored before that throws here, and its rule is skipped like any rule that does not compile.
 */
export function planRegExp(pattern: string): PatternMatcher {
  const compiled = compileWithinBudgets(pattern);
  if (typeof compiled === 'string') throw new SyntaxError(`${compiled}: ${pattern.slice(0, 80)}`);
  return {
    test: (input: string) => compiled.test(input),
    toString: () => `re2:${pattern}`,
  } as PatternMatcher;
}

/** The form Ajv's `code.regExp` option takes (it reads `code` when generating standalone code). */
export const ajvPlanRegExp = Object.assign((pattern: string) => planRegExp(pattern), {
  code: 'planRegExp',
});
