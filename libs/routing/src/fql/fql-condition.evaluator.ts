/**
 * Evaluates a compiled filter condition (`FilterConditionMatcher`, tsub's intermediate
 * representation) against a message: `@segment/tsub`'s `matches`, written here so that `match()`
 * runs on the bounded glob matcher of `fql-glob.ts` instead of tsub's, and so that the IR is parsed
 * once per filter rather than once per message. A property test holds these verdicts to tsub's.
 * The router and `POST /v1beta/filters/preview` both evaluate through here.
 */
import type { FilterConditionMatcher } from './fql-condition.compiler';
import { globMatches } from './fql-glob';

/** A condition ready to evaluate: the IR parsed once. */
export type ParsedCondition =
  | { readonly type: 'all' }
  /** `ir` is undefined for an empty IR, which tsub evaluates as no match. */
  | { readonly type: 'fql'; readonly ir: unknown };

export function parseCondition(matcher: FilterConditionMatcher): ParsedCondition {
  if (matcher.type === 'all') return { type: 'all' };
  return { type: 'fql', ir: matcher.ir ? JSON.parse(matcher.ir) : undefined };
}

/** True when the message matches the condition (tsub: anything but the boolean `true` is no match). */
export function conditionMatches(message: unknown, condition: ParsedCondition): boolean {
  if (condition.type === 'all') return true;
  if (condition.ir === undefined) return false;
  return evaluate(condition.ir, message) === true;
}

type Ir = unknown;

function evaluate(ir: Ir, event: unknown): unknown {
  if (!Array.isArray(ir)) return valueOf(ir, event) === true;
  const operator = ir[0];
  switch (operator) {
    case '!':
      return !evaluate(ir[1], event);
    case 'or':
      for (let index = 1; index < ir.length; index += 1) if (evaluate(ir[index], event)) return true;
      return false;
    case 'and':
      for (let index = 1; index < ir.length; index += 1) if (!evaluate(ir[index], event)) return false;
      return true;
    case '=':
    case '!=':
      return compareItems(valueOf(ir[1], event), valueOf(ir[2], event), operator, event);
    case '<=':
    case '<':
    case '>':
    case '>=':
      return compareNumbers(valueOf(ir[1], event), valueOf(ir[2], event), operator, event);
    case 'in': {
      const item = valueOf(ir[1], event);
      // As tsub: the list is the literal's items (the compiler refuses anything else).
      return (valueOf(ir[2], event) as Ir[]).find((entry) => valueOf(entry, event) === item) !== undefined;
    }
    case 'contains': {
      const [text, part] = [valueOf(ir[1], event), valueOf(ir[2], event)];
      return typeof text === 'string' && typeof part === 'string' && text.includes(part);
    }
    case 'match': {
      const [text, glob] = [valueOf(ir[1], event), valueOf(ir[2], event)];
      return typeof text === 'string' && typeof glob === 'string' && globMatches(glob, text);
    }
    case 'lowercase': {
      const text = valueOf(ir[1], event);
      return typeof text === 'string' ? text.toLowerCase() : null;
    }
    case 'typeof':
      return typeof valueOf(ir[1], event);
    case 'length': {
      const item = valueOf(ir[1], event);
      if (item === null) return 0;
      return Array.isArray(item) || typeof item === 'string' ? item.length : NaN;
    }
    case 'semver':
      return semver(valueOf(ir[1], event), valueOf(ir[2], event), valueOf(ir[3], event));
    default:
      throw new Error(`FQL IR could not evaluate for token: ${String(operator)}`);
  }
}

/** A list stays a list, `{"value": x}` is the literal x, a string is a dot-separated path into the message. */
function valueOf(item: Ir, event: unknown): unknown {
  if (Array.isArray(item)) return item;
  if (typeof item === 'object') return (item as { value: unknown }).value;
  return lookUp(event, item as string);
}

/** tsub's path lookup (`dlv`): plain property reads; the compiler refuses prototype segments. */
function lookUp(event: unknown, path: string): unknown {
  if (typeof path !== 'string') return event;
  let value = event as Record<string, unknown> | undefined;
  for (const segment of path.split('.')) {
    value = value ? (value[segment] as Record<string, unknown> | undefined) : undefined;
  }
  return value;
}

/** A nested function call the comparison evaluates first (`lowercase(…) = 'x'`, `length(…) > 2`). */
function isCall(value: unknown): value is Ir[] {
  if (!Array.isArray(value)) return false;
  const [name] = value;
  if ((name === 'lowercase' || name === 'length' || name === 'typeof') && value.length === 2) return true;
  if ((name === 'contains' || name === 'match') && value.length === 3) return true;
  return name === 'semver' && value.length === 4;
}

function compareNumbers(first: unknown, second: unknown, operator: string, event: unknown): boolean {
  if (isCall(first)) first = evaluate(first, event);
  if (isCall(second)) second = evaluate(second, event);
  if (typeof first !== 'number' || typeof second !== 'number') return false;
  switch (operator) {
    case '<=':
      return first <= second;
    case '>=':
      return first >= second;
    case '<':
      return first < second;
    default:
      return first > second;
  }
}

function compareItems(first: unknown, second: unknown, operator: string, event: unknown): boolean {
  if (isCall(first)) first = evaluate(first, event);
  if (isCall(second)) second = evaluate(second, event);
  // Objects and lists compare by their JSON text, key order included, as Segment's servers do.
  if (typeof first === 'object' && typeof second === 'object') {
    first = JSON.stringify(first);
    second = JSON.stringify(second);
  }
  return operator === '=' ? first === second : first !== second;
}

interface Version {
  major: number;
  minor: number;
  patch: number;
}

function semver(left: unknown, operator: unknown, right: unknown): boolean {
  if (typeof left !== 'string' || typeof operator !== 'string' || typeof right !== 'string') return false;
  const first = parseVersion(left);
  const second = parseVersion(right);
  if (!first || !second) return false;
  const order =
    first.major !== second.major
      ? Math.sign(first.major - second.major)
      : first.minor !== second.minor
        ? Math.sign(first.minor - second.minor)
        : Math.sign(first.patch - second.patch);
  switch (operator) {
    case '=':
      return order === 0;
    case '!=':
      return order !== 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
    default:
      return false;
  }
}

/** `1.2.3`, `1.0` or `2`; each part read with `parseInt` (so `1.2.3-beta` is 1.2.3), as tsub reads it. */
function parseVersion(version: string): Version | null {
  const parts = version.split('.');
  if (parts.length > 3) return null;
  const numbers = parts.map((part) => parseInt(part.trim(), 10));
  if (numbers.some((number) => Number.isNaN(number))) return null;
  return { major: numbers[0], minor: numbers[1] ?? 0, patch: numbers[2] ?? 0 };
}
