/**
 * What a function's code declares, read from its text without running it (docs/functions.md §1): the
 * entries the sandbox's check finds at save time, and which the router and the Public API read again
 * from a stored version (whether a destination function has `onBatch`) without a sandbox at hand.
 */
import { type FunctionEntry, type FunctionKind, MESSAGE_HANDLERS } from './function-runner.port';

/** The entries each kind of function may declare. */
export const ENTRIES_OF: Readonly<Record<FunctionKind, readonly FunctionEntry[]>> = {
  SOURCE: ['onRequest'],
  DESTINATION: ['onBatch', ...Object.values(MESSAGE_HANDLERS)],
  INSERT_DESTINATION: Object.values(MESSAGE_HANDLERS),
};

/** The entries of its kind that `code` declares, in `ENTRIES_OF`'s order. */
export function declaredEntries(kind: FunctionKind, code: string): FunctionEntry[] {
  const found = new Set<string>();
  const declaration = /^(?:async )?function ?\*? ?(on[A-Z]\w*) ?\(|^(?:const|let|var) (on[A-Z]\w*) ?=/;
  for (const { text } of statementsOf(code)) {
    const match = declaration.exec(text);
    if (match) found.add((match[1] ?? match[2])!);
  }
  return ENTRIES_OF[kind].filter((entry) => found.has(entry));
}

/**
 * The code's statements (split at line ends, `;`, `{` and `}`), comments blanked, whitespace runs
 * made one space, trimmed: where declarations and module syntax are looked for, since nothing of the
 * code runs at check.
 */
export function statementsOf(code: string): { line: number; text: string }[] {
  const blanked = code
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(?<![:'"\w\\])\/\/[^\n]*/g, '');
  const statements: { line: number; text: string }[] = [];
  blanked.split('\n').forEach((line, index) => {
    for (const part of line.split(/[;{})]/))
      statements.push({ line: index + 1, text: part.replace(/\s+/g, ' ').trim() });
  });
  return statements;
}
