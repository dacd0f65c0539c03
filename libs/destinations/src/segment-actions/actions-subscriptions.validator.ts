/**
 * Write-time checks of an Actions destination's `subscriptions` setting (Config API, 400 code 3), from
 * the generated catalog data alone, without loading the destination: each entry's `subscribe` is FQL
 * that Segment's matcher parses and that Tributary's FQL compiler accepts (Segment's parser takes
 * incomplete input such as `type = ` without complaint), its `partnerAction` is an action of the
 * destination, and its mapping names only the action's fields, covers the required ones that have no
 * default (the adapter maps the others with their default), gives literals of the field's type, and
 * passes mapping-kit's validation within the cost caps of `actions-mapping.validator.ts`.
 */
import { compileFilterCondition } from '@tributary/routing';
import { parseSubscriptionFql } from './actions-subscriptions';
import type { ActionsDestinationData, ActionsFieldData } from './actions-catalog.types';
import { problemWithActionsMapping } from './actions-mapping.validator';

/** More would be a configuration mistake rather than a need; every message runs every matcher. */
export const MAX_ACTIONS_SUBSCRIPTIONS = 50;

const SUBSCRIPTION_KEYS = new Set(['id', 'name', 'subscribe', 'partnerAction', 'mapping', 'enabled']);

/** Why `value` is not a valid `subscriptions` setting of `destination`, or `null`. */
export function problemWithActionsSubscriptions(
  destination: ActionsDestinationData,
  value: unknown,
): string | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value)) return 'must be a list of {subscribe, partnerAction, mapping}';
  if (value.length > MAX_ACTIONS_SUBSCRIPTIONS) {
    return `has ${value.length} subscriptions, more than the ${MAX_ACTIONS_SUBSCRIPTIONS} allowed`;
  }
  for (const [index, subscription] of value.entries()) {
    const problem = problemWithSubscription(destination, subscription);
    if (problem) return `[${index}]${problem}`;
  }
  return null;
}

function problemWithSubscription(destination: ActionsDestinationData, subscription: unknown): string | null {
  if (!isPlainObject(subscription)) return ': must be an object {subscribe, partnerAction, mapping}';
  const unknownKey = Object.keys(subscription).find((key) => !SUBSCRIPTION_KEYS.has(key));
  if (unknownKey !== undefined) return `: unknown key ${JSON.stringify(unknownKey)}`;
  if (subscription.id !== undefined && (typeof subscription.id !== 'string' || subscription.id === '')) {
    return '.id: must be a non-empty string';
  }
  if (subscription.enabled !== undefined && typeof subscription.enabled !== 'boolean') {
    return '.enabled: must be true or false';
  }
  const { subscribe, partnerAction, mapping } = subscription;
  if (typeof subscribe !== 'string' || subscribe.trim() === '')
    return '.subscribe: must be a non-empty FQL string';
  const fqlProblem = problemWithFql(subscribe);
  if (fqlProblem) return `.subscribe: ${fqlProblem}`;
  if (typeof partnerAction !== 'string' || !Object.hasOwn(destination.actions, partnerAction)) {
    return `.partnerAction: ${JSON.stringify(partnerAction)} is not an action of ${destination.slug}; actions: ${Object.keys(destination.actions).join(', ')}`;
  }
  if (mapping !== undefined && !isPlainObject(mapping)) return '.mapping: must be an object';
  const fields = destination.actions[partnerAction]!.fields;
  const given = (mapping ?? {}) as Record<string, unknown>;
  for (const [name, mapped] of Object.entries(given)) {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!field)
      return `.mapping: "${name}" is not a field of ${partnerAction}; fields: ${Object.keys(fields).join(', ')}`;
    const typeProblem = problemWithLiteral(field, mapped);
    if (typeProblem) return `.mapping.${name}: ${typeProblem}`;
  }
  const missing = Object.entries(fields).find(
    ([name, field]) => field.required && field.default === undefined && !Object.hasOwn(given, name),
  );
  if (missing) return `.mapping: the required field "${missing[0]}" of ${partnerAction} is not mapped`;
  const mappingProblem = problemWithActionsMapping(given);
  if (mappingProblem) return `.mapping${mappingProblem}`;
  return null;
}

function problemWithFql(fql: string): string | null {
  const parsed = parseSubscriptionFql(fql);
  if (typeof parsed === 'string') return parsed;
  try {
    compileFilterCondition(lowerCaseKeywords(fql));
  } catch (error) {
    return `not valid FQL: ${(error as Error).message}`;
  }
  return null;
}

/** Segment's subscriptions also spell `and`/`or` in capitals; Tributary's compiler takes lower case. */
function lowerCaseKeywords(fql: string): string {
  return fql
    .split(/("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/)
    .map((part, index) =>
      index % 2 === 1 ? part : part.replace(/\b(AND|OR|NOT)\b/g, (word) => word.toLowerCase()),
    )
    .join('');
}

/** A literal of the wrong type for its field; mapping directives (`{"@path": ...}`) are not checked. */
function problemWithLiteral(field: ActionsFieldData, value: unknown): string | null {
  if (value === null || value === undefined || isDirective(value)) return null;
  // A list field also takes an object (mapping-kit builds the list from it).
  if (field.multiple)
    return typeof value === 'object' ? null : 'must be a list, an object or a mapping directive';
  const kind = Array.isArray(value) ? 'list' : typeof value;
  switch (field.type) {
    case 'string':
    case 'text':
    case 'datetime':
    case 'password':
    case 'hidden':
      return kind === 'string' || kind === 'number' || kind === 'boolean'
        ? null
        : `must be text, got a ${kind}`;
    case 'number':
    case 'integer':
      return kind === 'number' ||
        (kind === 'string' && (value as string).trim() !== '' && !Number.isNaN(Number(value)))
        ? null
        : `must be a number, got ${JSON.stringify(value)}`;
    case 'boolean':
      return kind === 'boolean' ? null : `must be true or false, got ${JSON.stringify(value)}`;
    case 'object':
      return kind === 'object' ? null : `must be an object, got a ${kind}`;
  }
  return null;
}

function isDirective(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).some((key) => key.startsWith('@'));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
