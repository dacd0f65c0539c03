/**
 * Applies a destination's filters to one message (spec config-api.md "Filter", semantics from Segment's
 * destination-filter docs, D7). Matching has `@segment/tsub`'s verdicts, so a filter behaves here as it
 * does in Segment's own client-side filtering; it runs on `fql-condition.evaluator.ts`, whose `match()`
 * has a bounded cost where tsub's does not. Field removal is `field-actions.applier.ts`, which keeps tsub's
 * semantics but follows own properties only (tsub's lookups reach built-in prototypes). Sampling is
 * `sample.decider.ts`: tsub's is broken in the installed version (see there).
 *
 * - Only enabled filters run. A filter applies when its `if` matches the message.
 * - Every `if` is evaluated against the message as it reached the filter stage, before any action runs,
 *   so the outcome does not depend on the order of the filters in the list.
 * - The actions of all applying filters then run by kind, in Segment's documented order:
 *   sample → drop → drop fields (blacklist/blocklist) → allow fields (whitelist).
 * - A filter whose `if` or `actions` cannot be compiled (stored before validation existed) fails closed:
 *   Segment's docs say an invalid FQL statement stops the event, so personal data a broken filter was meant
 *   to remove never leaves. This includes a field path through `__proto__`, `constructor` or `prototype`
 *   (refused by the Config API, but an older store may hold one): such a filter is never run, and every
 *   message it would apply to is held back from its destination as `filtered` (`invalid_filter`), since
 *   delivering it unfiltered could send the very fields the filter names. Other destinations are not
 *   affected, and removing or fixing the filter lets messages through again.
 * - The input is never mutated: field actions edit copies of the objects they change, and the input
 *   object itself is returned when nothing was changed.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import { compileFilterCondition } from '../fql/fql-condition.compiler';
import { conditionMatches, parseCondition, type ParsedCondition } from '../fql/fql-condition.evaluator';
import {
  compileFilterActions,
  type CompiledFilterAction,
  type FilterActionInput,
} from './filter-actions.compiler';
import { allowTargets, applyFieldEdits, dropTargets, type FieldEdit } from './field-actions.applier';
import { isKeptBySample } from './sample.decider';

/** The part of a filter record (`FilterRecord` in config-domain) that routing reads. */
export interface RoutableFilter {
  readonly filterId: string;
  readonly title: string;
  readonly if: string;
  readonly enabled: boolean;
  readonly actions: readonly FilterActionInput[];
}

export type FilterOutcomeReason =
  /** A matching filter has a `drop_event` action. */
  | 'dropped'
  /** A matching filter has a `sample_event` action and the message's hash fell outside the sample. */
  | 'sampled_out'
  /** The filter's `if` or `actions` cannot be compiled; the message is held back (fail closed). */
  | 'invalid_filter';

export type FilterStageResult =
  | { readonly outcome: 'pass'; readonly message: NormalizedMessage }
  | {
      readonly outcome: 'filter';
      readonly reason: FilterOutcomeReason;
      readonly filterId: string;
      readonly filterTitle: string;
      /** Set for `invalid_filter`: the compiler's message. */
      readonly detail?: string;
    };

interface CompiledFilter {
  readonly condition: ParsedCondition;
  readonly actions: readonly CompiledFilterAction[];
}

export function applyDestinationFilters(
  message: NormalizedMessage,
  filters: readonly RoutableFilter[],
): FilterStageResult {
  const applying: { filter: RoutableFilter; actions: readonly CompiledFilterAction[] }[] = [];
  for (const filter of filters) {
    if (!filter.enabled) continue;
    let compiled: CompiledFilter;
    try {
      compiled = compileFilter(filter);
    } catch (error) {
      return filtered('invalid_filter', filter, error instanceof Error ? error.message : String(error));
    }
    if (conditionMatches(message, compiled.condition)) applying.push({ filter, actions: compiled.actions });
  }
  if (applying.length === 0) return { outcome: 'pass', message };

  const actionsOfKind = <K extends CompiledFilterAction['kind']>(kind: K) =>
    applying.flatMap(({ filter, actions }) =>
      actions
        .filter((action): action is Extract<CompiledFilterAction, { kind: K }> => action.kind === kind)
        .map((action) => ({ filter, action })),
    );

  for (const { filter, action } of actionsOfKind('sample_event')) {
    if (!isKeptBySample(message, action.percent, action.path)) return filtered('sampled_out', filter);
  }

  const dropping = actionsOfKind('drop_event')[0];
  if (dropping) return filtered('dropped', dropping.filter);

  const dropFields = actionsOfKind('drop_fields');
  const allowFields = actionsOfKind('allow_fields');
  if (dropFields.length === 0 && allowFields.length === 0) return { outcome: 'pass', message };

  const edits: FieldEdit[] = [
    ...dropFields.map(({ action }) => fieldEditOf(action)),
    ...allowFields.map(({ action }) => fieldEditOf(action)),
  ];
  return { outcome: 'pass', message: applyFieldEdits(message, edits) };
}

function filtered(reason: FilterOutcomeReason, filter: RoutableFilter, detail?: string): FilterStageResult {
  return {
    outcome: 'filter',
    reason,
    filterId: filter.filterId,
    filterTitle: filter.title,
    ...(detail === undefined ? {} : { detail }),
  };
}

/** Targets per compiled action: compiled actions are cached, so each is worked out once. */
const fieldEdits = new WeakMap<CompiledFilterAction, FieldEdit>();

function fieldEditOf(
  action: Extract<CompiledFilterAction, { kind: 'drop_fields' | 'allow_fields' }>,
): FieldEdit {
  let edit = fieldEdits.get(action);
  if (!edit) {
    edit =
      action.kind === 'drop_fields'
        ? { kind: 'drop_fields', targets: dropTargets(action.fields) }
        : { kind: 'allow_fields', targets: allowTargets(action.fields) };
    fieldEdits.set(action, edit);
  }
  return edit;
}

/**
 * Compiling is pure, so compiled filters are cached by their text: the router evaluates the same few
 * filters for every message. The cache is bounded and simply starts over when full.
 */
const compiledFilterCache = new Map<string, CompiledFilter>();
const COMPILED_FILTER_CACHE_LIMIT = 1_000;

function compileFilter(filter: RoutableFilter): CompiledFilter {
  const key = JSON.stringify([filter.if, filter.actions]);
  const cached = compiledFilterCache.get(key);
  if (cached) return cached;
  const compiled: CompiledFilter = {
    condition: parseCondition(compileFilterCondition(filter.if)),
    actions: compileFilterActions(filter.actions),
  };
  if (compiledFilterCache.size >= COMPILED_FILTER_CACHE_LIMIT) compiledFilterCache.clear();
  compiledFilterCache.set(key, compiled);
  return compiled;
}
