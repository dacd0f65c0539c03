/**
 * Validates a destination filter's `actions` (Config API shape, spec config-api.md "Filter") and turns them
 * into a form the router applies. The Config API calls `compileFilterActions` at create/update time to
 * answer 400 for an action that could never work.
 *
 *   {"type":"drop_event"}
 *   {"type":"sample_event","percent":0.6,"path":"userId"}
 *   {"type":"whitelist_fields"|"blacklist_fields"|"blocklist_fields",
 *    "fields":{"properties":{"fields":["a","b.c"]},"context":{"fields":[…]},"traits":{"fields":[…]}}}
 *
 * Field paths never contain `__proto__`, `constructor` or `prototype` (see `field-path.ts`).
 */
import { InvalidFilterActionError } from './destination-filter.errors';
import { describeForbiddenSegment, forbiddenFieldPathSegment } from './field-path';

/** One action as stored in a filter record (`FilterAction` in config-domain). */
export interface FilterActionInput {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** The message objects a fields action can address; `traits` is the top-level one of identify and group. */
export const FILTERABLE_FIELD_OBJECTS = ['properties', 'context', 'traits'] as const;
export type FilterableFieldObject = (typeof FILTERABLE_FIELD_OBJECTS)[number];

/** Field names per object; a name may be a dot-separated path into nested objects (`address.city`). */
export type FieldSelection = Partial<Record<FilterableFieldObject, readonly string[]>>;

/**
 * Sampling needs a value to hash so that the same user is always kept or always dropped. When the action
 * names no `path`, Tributary hashes the `messageId`: Segment would sample at random, which gives the same
 * rate, but a pure router must give the same answer every time it sees the same message (a redelivery or a
 * replay must not flip the outcome).
 */
export const DEFAULT_SAMPLE_PATH = 'messageId';

export type CompiledFilterAction =
  | { readonly kind: 'drop_event' }
  /** Keep the message with probability `percent` (0…1), decided by hashing the value at `path`. */
  | { readonly kind: 'sample_event'; readonly percent: number; readonly path: string }
  | { readonly kind: 'drop_fields'; readonly fields: FieldSelection }
  | { readonly kind: 'allow_fields'; readonly fields: FieldSelection };

const FIELDS_ACTION_KINDS: Readonly<Record<string, 'drop_fields' | 'allow_fields'>> = {
  whitelist_fields: 'allow_fields',
  // The docs spell the block list `blocklist_fields`; Segment's Go client sends `blacklist_fields`.
  blacklist_fields: 'drop_fields',
  blocklist_fields: 'drop_fields',
};

export const SUPPORTED_FILTER_ACTION_TYPES = [
  'drop_event',
  'sample_event',
  ...Object.keys(FIELDS_ACTION_KINDS),
] as const;

/**
 * @throws InvalidFilterActionError naming the action (by index) and what is wrong with it.
 */
export function compileFilterActions(actions: unknown): CompiledFilterAction[] {
  if (!Array.isArray(actions)) throw new InvalidFilterActionError(undefined, 'actions must be a list');
  if (actions.length === 0)
    throw new InvalidFilterActionError(undefined, 'a filter needs at least one action');
  return actions.map((action, index) => compileFilterAction(action, index));
}

function compileFilterAction(action: unknown, index: number): CompiledFilterAction {
  const fail = (reason: string): never => {
    throw new InvalidFilterActionError(index, reason);
  };
  if (!isPlainObject(action)) return fail('an action must be an object with a "type"');
  const type = action.type;
  if (type === 'drop_event') return { kind: 'drop_event' };
  if (type === 'sample_event') {
    const percent = action.percent;
    if (typeof percent !== 'number' || !Number.isFinite(percent) || percent < 0 || percent > 1) {
      return fail(
        'sample_event needs "percent", the fraction of messages to keep, between 0 and 1 (0.6 keeps 60 %)',
      );
    }
    const path = action.path;
    if (path !== undefined && path !== null && typeof path !== 'string') {
      return fail('sample_event "path" must be a field path string such as "userId"');
    }
    if (path) {
      const forbidden = forbiddenFieldPathSegment(path.split('.'));
      if (forbidden !== undefined)
        return fail(`sample_event "path": ${describeForbiddenSegment(path, forbidden)}`);
    }
    return { kind: 'sample_event', percent, path: path ? path : DEFAULT_SAMPLE_PATH };
  }
  if (typeof type === 'string' && type in FIELDS_ACTION_KINDS) {
    return { kind: FIELDS_ACTION_KINDS[type], fields: compileFieldSelection(type, action.fields, fail) };
  }
  return fail(
    `unknown action type ${JSON.stringify(type)}; supported: ${SUPPORTED_FILTER_ACTION_TYPES.join(', ')}`,
  );
}

function compileFieldSelection(
  type: string,
  fields: unknown,
  fail: (reason: string) => never,
): FieldSelection {
  const shape = `{"properties":{"fields":["name"]}}`;
  if (!isPlainObject(fields)) return fail(`${type} needs "fields", for example ${shape}`);
  const selection: Partial<Record<FilterableFieldObject, string[]>> = {};
  for (const [objectName, entry] of Object.entries(fields)) {
    if (!(FILTERABLE_FIELD_OBJECTS as readonly string[]).includes(objectName)) {
      fail(`${type} can select fields of ${FILTERABLE_FIELD_OBJECTS.join(', ')}, not "${objectName}"`);
    }
    if (!isPlainObject(entry) || !Array.isArray(entry.fields)) {
      fail(`${type} "fields.${objectName}" must be an object with a "fields" list, for example ${shape}`);
    }
    const names = (entry as { fields: unknown[] }).fields;
    for (const name of names) {
      if (typeof name !== 'string' || name === '' || name.split('.').some((segment) => segment === '')) {
        fail(
          `${type} "fields.${objectName}.fields" must hold non-empty field names, got ${JSON.stringify(name)}`,
        );
      }
      const forbidden = forbiddenFieldPathSegment((name as string).split('.'));
      if (forbidden !== undefined) {
        fail(`${type} "fields.${objectName}.fields": ${describeForbiddenSegment(name as string, forbidden)}`);
      }
    }
    selection[objectName as FilterableFieldObject] = names as string[];
  }
  return selection;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
