import type { TrackingPlanRules } from '@tributary/config-domain';
import { PublicApiError } from './public-api.error';

export const RULE_TYPES = ['TRACK', 'COMMON', 'IDENTIFY', 'GROUP', 'PAGE', 'SCREEN'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

/** RuleV1 of the Public API. */
export interface PublicRule {
  type: RuleType;
  key?: string;
  jsonSchema: Record<string, unknown>;
  version: number;
}

/** Where a plan keeps the rules only the Public API can express (`PAGE`, `SCREEN`), beside v1beta's parts. */
const PUBLIC_ONLY_PART = 'page_screen_rules';

/** The parts v1beta keeps one schema each in, by rule type. */
const SINGLE_PARTS = { COMMON: 'global', IDENTIFY: 'identify', GROUP: 'group' } as const;

/**
 * The plan's rules as the Public API lists them, losslessly from v1beta's: each `events[]` entry is a
 * `TRACK` rule keyed by its name, `global`/`identify`/`group` are `COMMON`/`IDENTIFY`/`GROUP`.
 */
export function publicRulesOf(rules: TrackingPlanRules): PublicRule[] {
  const listed: PublicRule[] = [];
  for (const event of rules.events ?? []) {
    listed.push({
      type: 'TRACK',
      key: String(event.name),
      jsonSchema: (event.rules ?? {}) as Record<string, unknown>,
      version: Number(event.version ?? 1),
    });
  }
  for (const [type, part] of Object.entries(SINGLE_PARTS)) {
    const schema = rules[part];
    if (schema)
      listed.push({ type: type as RuleType, jsonSchema: schema as Record<string, unknown>, version: 1 });
  }
  const publicOnly = rules[PUBLIC_ONLY_PART];
  if (Array.isArray(publicOnly)) listed.push(...(publicOnly as PublicRule[]));
  return listed;
}

/** v1beta's rules object holding exactly `rules` (a PUT's whole replacement). */
export function v1betaRulesOf(rules: readonly PublicRule[]): Record<string, unknown> {
  const stored: Record<string, unknown> = { events: [], identify_traits: [], group_traits: [] };
  const publicOnly: PublicRule[] = [];
  for (const rule of rules) {
    if (rule.type === 'TRACK') {
      (stored.events as unknown[]).push({ name: rule.key, version: rule.version, rules: rule.jsonSchema });
    } else if (rule.type === 'PAGE' || rule.type === 'SCREEN') {
      publicOnly.push(rule);
    } else {
      stored[SINGLE_PARTS[rule.type]] = rule.jsonSchema;
    }
  }
  if (publicOnly.length > 0) stored[PUBLIC_ONLY_PART] = publicOnly;
  return stored;
}

/** The identity of a rule within a plan. */
export function ruleKeyOf(rule: Pick<PublicRule, 'type' | 'key'>): string {
  return `${rule.type}\n${rule.key ?? ''}`;
}

/** The `rules` of a PUT or PATCH body, checked: known types, a key for TRACK, schemas as objects, no pair twice. */
export function readRules(body: Record<string, unknown>): PublicRule[] {
  const input = body.rules;
  if (!Array.isArray(input)) throw PublicApiError.validation('rules must be a list', 'rules');
  const seen = new Set<string>();
  return input.map((raw, index) => {
    const field = `rules.${index}`;
    if (typeof raw !== 'object' || raw === null)
      throw PublicApiError.validation(`${field} must be a rule`, field);
    const { type, key, jsonSchema, version } = raw as Record<string, unknown>;
    if (!RULE_TYPES.includes(type as RuleType)) {
      throw PublicApiError.validation(
        `${field}.type must be one of ${RULE_TYPES.join(', ')}`,
        `${field}.type`,
      );
    }
    if (type === 'TRACK' && (typeof key !== 'string' || key === '')) {
      throw PublicApiError.validation(`${field}.key is required for a TRACK rule`, `${field}.key`);
    }
    if (key !== undefined && key !== null && typeof key !== 'string') {
      throw PublicApiError.validation(`${field}.key must be a string`, `${field}.key`);
    }
    if (typeof jsonSchema !== 'object' || jsonSchema === null || Array.isArray(jsonSchema)) {
      throw PublicApiError.validation(
        `${field}.jsonSchema must be a JSON Schema object`,
        `${field}.jsonSchema`,
      );
    }
    if (version !== undefined && (!Number.isInteger(version) || (version as number) < 1)) {
      throw PublicApiError.validation(`${field}.version must be a whole number from 1`, `${field}.version`);
    }
    const rule: PublicRule = {
      type: type as RuleType,
      ...(typeof key === 'string' && key !== '' && { key }),
      jsonSchema: jsonSchema as Record<string, unknown>,
      version: (version as number | undefined) ?? 1,
    };
    if (seen.has(ruleKeyOf(rule))) {
      throw PublicApiError.validation(
        `${field} repeats the rule ${rule.type} ${rule.key ?? ''}`.trim(),
        field,
      );
    }
    seen.add(ruleKeyOf(rule));
    return rule;
  });
}
