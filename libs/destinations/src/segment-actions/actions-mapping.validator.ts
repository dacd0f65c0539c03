/**
 * Write-time checks of one subscription's mapping (mapping-kit directives, `{"@path": "$.event"}`):
 * Segment's own mapping validation, and what a mapping may cost per message. A mapping runs once per
 * message the subscription takes, so its cost is checked here, where it can be refused with a clear
 * error, rather than found out in the router:
 * - `@arrayPath` maps its item shape over its root; a `@literal` root supplies the array from the
 *   mapping itself, so nesting them multiplies the work (10 items nested 7 deep is 10^7 leaves). The
 *   nesting is capped, and so is the number of directives a message resolves once literal roots are
 *   multiplied out.
 * - `@literal` arrays, `@template` and `@liquid` texts are capped in size.
 * A root that is a path into the message cannot be sized here: what it costs is bounded at run time
 * (the Actions lane's heap limit and watchdog).
 */

/** Items of any array inside a `@literal` value. */
export const MAX_MAPPING_LITERAL_ITEMS = 100;
/** `@arrayPath` inside the item shape of another `@arrayPath`: Segment's editor makes one level. */
export const MAX_MAPPING_ARRAY_PATH_NESTING = 2;
/** Characters of a `@template` or `@liquid` text. */
export const MAX_MAPPING_TEMPLATE_CHARS = 4_096;
/** Directives written in one mapping. */
export const MAX_MAPPING_DIRECTIVES = 200;
/** Directives one message resolves, each counted once per item of the `@literal` roots around it. */
export const MAX_MAPPING_RESOLVED_DIRECTIVES = 2_000;

interface Pending {
  readonly value: unknown;
  readonly path: string;
  /** `@arrayPath`s this value sits in the item shape of. */
  readonly nesting: number;
  /** How many times a message resolves it: the product of the `@literal` roots around it. */
  readonly times: number;
}

type MappingValidate = (mapping: unknown) => void;
let mappingKitValidate: MappingValidate | undefined;

/** mapping-kit's own validation (`@segment/actions-core`), loaded on first use. */
function validateWithMappingKit(mapping: unknown): void {
  if (!mappingKitValidate) {
    // Required rather than imported: the package's declarations bring DOM types (actions-core.types.ts).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const loaded = require('@segment/actions-core/mapping-kit/validate') as { default: MappingValidate };
    mappingKitValidate = loaded.default;
  }
  mappingKitValidate(mapping);
}

/**
 * Why `mapping` (a subscription's, keyed by field) may not be stored, or `null`. The problem starts with
 * the path of the value it is about, relative to the mapping (`.data.v: ...`).
 */
export function problemWithActionsMapping(mapping: Readonly<Record<string, unknown>>): string | null {
  const costProblem = problemWithCost(mapping);
  if (costProblem) return costProblem;
  try {
    validateWithMappingKit(mapping);
  } catch (error) {
    return `: ${describeValidationError(error)}`;
  }
  return null;
}

function problemWithCost(mapping: Readonly<Record<string, unknown>>): string | null {
  let directives = 0;
  let resolved = 0;
  // Iteratively: the Config API caps JSON depth, but nothing here should depend on it.
  const pending: Pending[] = Object.entries(mapping).map(([key, value]) => ({
    value,
    path: `.${key}`,
    nesting: 0,
    times: 1,
  }));
  while (pending.length > 0) {
    const { value, path, nesting, times } = pending.pop()!;
    if (Array.isArray(value)) {
      value.forEach((item, index) =>
        pending.push({ value: item, path: `${path}[${index}]`, nesting, times }),
      );
      continue;
    }
    if (!isPlainObject(value)) continue;
    const name = Object.keys(value).find((key) => key.startsWith('@'));
    if (name === undefined) {
      for (const [key, child] of Object.entries(value)) {
        pending.push({ value: child, path: `${path}.${key}`, nesting, times });
      }
      continue;
    }
    directives += 1;
    resolved += times;
    if (directives > MAX_MAPPING_DIRECTIVES) {
      return `: has more than the ${MAX_MAPPING_DIRECTIVES} directives allowed in a mapping`;
    }
    if (resolved > MAX_MAPPING_RESOLVED_DIRECTIVES) {
      return `${path}: resolves more than the ${MAX_MAPPING_RESOLVED_DIRECTIVES} directives allowed per message (each @literal root multiplies its item shape)`;
    }
    const argument = value[name];
    const at = `${path}.${name}`;
    switch (name) {
      case '@literal': {
        const problem = problemWithLiteralSize(argument);
        if (problem) return `${at}: ${problem}`;
        continue;
      }
      case '@template':
      case '@liquid':
        if (typeof argument === 'string' && argument.length > MAX_MAPPING_TEMPLATE_CHARS) {
          return `${at}: has ${argument.length} characters, more than the ${MAX_MAPPING_TEMPLATE_CHARS} allowed`;
        }
        break;
      case '@arrayPath': {
        if (!Array.isArray(argument)) break;
        if (nesting + 1 > MAX_MAPPING_ARRAY_PATH_NESTING) {
          return `${at}: @arrayPath nested more than ${MAX_MAPPING_ARRAY_PATH_NESTING} deep`;
        }
        const [root, itemShape] = argument as unknown[];
        pending.push({ value: root, path: `${at}[0]`, nesting, times });
        const items = literalRootLength(root);
        pending.push({
          value: itemShape,
          path: `${at}[1]`,
          nesting: nesting + 1,
          times: times * Math.max(items, 1),
        });
        continue;
      }
    }
    pending.push({ value: argument, path: at, nesting, times });
  }
  return null;
}

/** The number of items a `@literal` root supplies; 1 for a root the message supplies. */
function literalRootLength(root: unknown): number {
  if (!isPlainObject(root) || !Object.hasOwn(root, '@literal')) return 1;
  const literal = root['@literal'];
  if (Array.isArray(literal)) return literal.length;
  return isPlainObject(literal) ? 1 : 0;
}

function problemWithLiteralSize(literal: unknown): string | null {
  const pending: unknown[] = [literal];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      if (value.length > MAX_MAPPING_LITERAL_ITEMS) {
        return `has an array of ${value.length} items, more than the ${MAX_MAPPING_LITERAL_ITEMS} allowed`;
      }
      pending.push(...value);
    } else if (isPlainObject(value)) {
      pending.push(...Object.values(value));
    }
  }
  return null;
}

/** mapping-kit throws one error, or an AggregateError of several: the first is enough to fix. */
function describeValidationError(error: unknown): string {
  const errors =
    error !== null && typeof error === 'object' && Symbol.iterator in error
      ? [...(error as Iterable<unknown>)]
      : [error];
  const first = errors[0] as { message?: unknown } | undefined;
  const message = typeof first?.message === 'string' ? first.message : String(first);
  return message.replace(/\s+/g, ' ').trim();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
