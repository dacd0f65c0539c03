import type { PlanRules } from '../protocols.types';
import { planPatternProblem } from './plan-regexp';

/** A pattern of a plan that cannot run: where it is (a field path of the request) and why. */
export interface RefusedPattern {
  field: string;
  reason: string;
}

/** Keywords whose value is one schema, or a list of schemas. */
const SCHEMA_KEYWORDS = [
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'anyOf',
  'oneOf',
];
/** Keywords whose value maps names (of properties, of definitions) to schemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'];

/**
 * The first `pattern` or `patternProperties` key of `rules` (the rules of a plan, or the parts an
 * update replaces) that RE2 cannot run or that is over the budgets of `planPatternProblem`, named by
 * its path under `prefix`. Checked when a plan is written, so that every pattern of a stored plan
 * runs in linear time; the parts enforcement compiles are the ones checked (`events[].rules`,
 * `global`, `identify`, `group`). Values of `enum`, `const`, `default` and `examples` are data,
 * not schemas: a `pattern` key inside them is not a pattern.
 */
export function findRefusedPattern(rules: PlanRules, prefix: string): RefusedPattern | undefined {
  const pending: { schema: unknown; path: string }[] = [];
  if (Array.isArray(rules.events)) {
    rules.events.forEach((entry, index) => {
      if (isRecord(entry)) pending.push({ schema: entry.rules, path: `${prefix}.events[${index}].rules` });
    });
  }
  for (const part of ['global', 'identify', 'group'] as const) {
    pending.push({ schema: rules[part], path: `${prefix}.${part}` });
  }
  // Iterative: a plan's schemas may nest deeply, and the walk must not be the thing that overflows.
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { schema, path } = next;
    if (!isRecord(schema)) continue;
    if (typeof schema.pattern === 'string') {
      const reason = planPatternProblem(schema.pattern);
      if (reason !== undefined) return { field: `${path}.pattern`, reason };
    }
    if (isRecord(schema.patternProperties)) {
      for (const pattern of Object.keys(schema.patternProperties)) {
        const reason = planPatternProblem(pattern);
        if (reason !== undefined) {
          return { field: `${path}.patternProperties[${JSON.stringify(pattern)}]`, reason };
        }
      }
    }
    for (const keyword of SCHEMA_KEYWORDS) {
      const value = schema[keyword];
      if (Array.isArray(value)) {
        value.forEach((item, index) => pending.push({ schema: item, path: `${path}.${keyword}[${index}]` }));
      } else pending.push({ schema: value, path: `${path}.${keyword}` });
    }
    for (const keyword of SCHEMA_MAP_KEYWORDS) {
      const map = schema[keyword];
      if (!isRecord(map)) continue;
      for (const [name, value] of Object.entries(map)) {
        pending.push({ schema: value, path: `${path}.${keyword}${pathSegment(name)}` });
      }
    }
  }
  return undefined;
}

function pathSegment(name: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
