import { CompiledPlan, CompiledRule, isObject } from '../plan/compile-plan';
import type {
  BlockedReason,
  EnforcementSettings,
  TrackingMessage,
  Verdict,
  Violation,
} from '../protocols.types';
import { violationsFromErrors } from '../schema/violation-from-error';

const NO_VIOLATIONS: readonly Violation[] = Object.freeze([]);
/** The verdict of most messages: shared, so a clean message costs no allocation here. */
const ALLOWED_UNCHANGED: Verdict = Object.freeze({
  kind: 'allow',
  changed: false,
  violations: NO_VIOLATIONS,
});

/**
 * Most violations reported for one message. A message of 32 KB can break a schema thousands of
 * times (an array of 16,000 items of the wrong type); every reported violation is stored in the
 * message, in its outcome and in its forward, so past this many only their number is kept
 * (`violations_truncated`). Omission still follows every violation.
 */
export const MAX_VIOLATIONS_PER_MESSAGE = 100;

/** The keys of `context.protocols` Protocols writes; a client's values for them are overwritten. */
const REPORT_KEYS = [
  'sourceId',
  'omitted',
  'omitted_on_violation',
  'violations',
  'violations_truncated',
  'blocked_reason',
];

type Container = 'properties' | 'traits';

/**
 * The Protocols verdict on one message of a source connected to `plan` (docs/protocols.md R2–R10).
 * Pure: the message is never modified; when something is omitted or reported, the verdict carries
 * a copy with the omissions and `context.protocols`.
 */
export function judgeMessage(
  plan: CompiledPlan,
  settings: EnforcementSettings,
  sourceId: string,
  message: TrackingMessage,
): Verdict {
  const type = message.type;
  let container: Container | undefined;
  let rule: CompiledRule | undefined;
  let unplannedEvent = false;
  switch (type) {
    case 'track':
      container = 'properties';
      rule = selectEventRule(plan, message.event, message.context);
      if (!rule) {
        // R3: an unplanned event is not a violation; blocked, or let through with no event schema.
        if (!settings.allow_unplanned_track_events) return block('unplanned', NO_VIOLATIONS);
        unplannedEvent = true;
      }
      break;
    case 'identify':
      container = 'traits';
      rule = plan.identify;
      break;
    case 'group':
      container = 'traits';
      rule = plan.group;
      break;
    case 'page':
      rule = selectEventRule(plan, 'Page Viewed', message.context);
      break;
    case 'screen':
      rule = selectEventRule(plan, 'Screen Viewed', message.context);
      break;
  }

  // R4: the event's own schema, against the whole message.
  const eventViolations = rule ? validate(rule, message) : NO_VIOLATIONS;

  // R5, R6: unplanned top-level properties or traits.
  let omitted: string[] | undefined;
  const values = container ? message[container] : undefined;
  if (container && isObject(values) && omitsUnplanned(type, rule, settings)) {
    const declared = rule ?? EMPTY_RULE;
    for (const key of Object.keys(values)) {
      if (!isDeclared(declared, key)) (omitted ??= []).push(key);
    }
  }

  // R7: what the event's own violations do.
  let omittedOnViolation: string[] | undefined;
  if (eventViolations.length > 0) {
    if (type === 'track') {
      if (!settings.allow_track_event_on_violations) return block('schema_violation', eventViolations);
      if (!settings.allow_track_properties_on_violations) {
        omittedOnViolation = keysNamedBy(eventViolations, 'properties', values, omitted, omittedOnViolation);
      }
    } else if (
      (type === 'identify' && !settings.allow_identify_traits_on_violations) ||
      (type === 'group' && !settings.allow_group_traits_on_violations)
    ) {
      omittedOnViolation = keysNamedBy(eventViolations, 'traits', values, omitted, omittedOnViolation);
    }
  }

  // R8: the common schema, on the message as omitted so far.
  let violations = eventViolations;
  if (plan.global) {
    const candidate =
      container && (omitted || omittedOnViolation)
        ? withContainer(message, container, values as Record<string, unknown>, omitted, omittedOnViolation)
        : message;
    const commonViolations = validate(plan.global, candidate);
    if (commonViolations.length > 0) {
      violations = violations.length > 0 ? [...violations, ...commonViolations] : commonViolations;
      const action =
        type === 'track'
          ? settings.common_track_event_on_violations
          : type === 'identify'
            ? settings.common_identify_event_on_violations
            : type === 'group'
              ? settings.common_group_event_on_violations
              : 'ALLOW';
      if (action === 'BLOCK') {
        return block(
          unplannedEvent ? 'unplanned_and_schema_violation' : 'common_schema_violation',
          violations,
        );
      }
      if (
        (action === 'OMIT_PROPERTIES' && type === 'track') ||
        (action === 'OMIT_TRAITS' && (type === 'identify' || type === 'group'))
      ) {
        omittedOnViolation = keysNamedBy(commonViolations, container!, values, omitted, omittedOnViolation);
      }
    }
  }

  if (violations.length === 0 && !omitted && !omittedOnViolation) return ALLOWED_UNCHANGED;
  const report = reported(violations);
  return {
    kind: 'allow',
    changed: true,
    message: annotate(message, sourceId, container, values, report, omitted, omittedOnViolation),
    ...report,
    omitted: omitted ?? [],
    omittedOnViolation: omittedOnViolation ?? [],
  };
}

const EMPTY_RULE: CompiledRule = { check: null, declaredKeys: new Set(), declaredPatterns: [], key: '' };

function block(reason: BlockedReason, violations: readonly Violation[]): Verdict {
  return { kind: 'block', reason, ...reported(violations) };
}

/** The violations to report: the first `MAX_VIOLATIONS_PER_MESSAGE`, and how many more there were. */
function reported(violations: readonly Violation[]): {
  violations: readonly Violation[];
  violationsTruncated?: number;
} {
  if (violations.length <= MAX_VIOLATIONS_PER_MESSAGE) return { violations };
  return {
    violations: violations.slice(0, MAX_VIOLATIONS_PER_MESSAGE),
    violationsTruncated: violations.length - MAX_VIOLATIONS_PER_MESSAGE,
  };
}

/** R2: exact name; the version the client asks for in `context.protocols.event_version`, else the lowest. */
export function selectEventRule(
  plan: CompiledPlan,
  eventName: unknown,
  context: unknown,
): CompiledRule | undefined {
  if (typeof eventName !== 'string') return undefined;
  const versions = plan.events.get(eventName);
  if (!versions) return undefined;
  if (versions.byVersion.size > 1 && isObject(context) && isObject(context.protocols)) {
    const asked = context.protocols.event_version;
    if (Number.isInteger(asked)) return versions.byVersion.get(asked as number) ?? versions.lowest;
  }
  return versions.lowest;
}

function omitsUnplanned(
  type: string,
  rule: CompiledRule | undefined,
  settings: EnforcementSettings,
): boolean {
  switch (type) {
    case 'track':
      // Only a planned event has a list of planned properties.
      return rule !== undefined && !settings.allow_unplanned_track_event_properties;
    case 'identify':
      return !settings.allow_unplanned_identify_traits;
    case 'group':
      return !settings.allow_unplanned_group_traits;
    default:
      return false;
  }
}

function isDeclared(rule: CompiledRule, key: string): boolean {
  if (rule.declaredKeys.has(key)) return true;
  for (const pattern of rule.declaredPatterns) if (pattern.test(key)) return true;
  return false;
}

function validate(rule: CompiledRule, message: unknown): readonly Violation[] {
  const check = rule.check;
  if (!check || check(message)) return NO_VIOLATIONS;
  return violationsFromErrors(check.errors ?? []);
}

/**
 * R7, R8: the top-level keys of `container` that violations name (`properties.<k>` or deeper), to
 * omit. A missing required key removes nothing, and neither does a violation elsewhere (`context.*`,
 * `userId`, `(root)`). Keys may hold dots, so the longest key present that the field starts with wins.
 * Linear in violations and keys: a message can hold thousands of each.
 */
function keysNamedBy(
  violations: readonly Violation[],
  container: Container,
  values: unknown,
  omitted: readonly string[] | undefined,
  already: string[] | undefined,
): string[] | undefined {
  if (!isObject(values)) return already;
  const prefix = `${container}.`;
  const skipped = new Set([...(omitted ?? []), ...(already ?? [])]);
  let result = already;
  for (const violation of violations) {
    if (violation.type === 'Required' || !violation.field.startsWith(prefix)) continue;
    const named = longestKeyOf(values, violation.field.slice(prefix.length));
    if (named === undefined || skipped.has(named)) continue;
    skipped.add(named);
    (result ??= []).push(named);
  }
  return result;
}

/** The longest own key of `values` that is `path` or a dot-ended start of it. */
function longestKeyOf(values: Record<string, unknown>, path: string): string | undefined {
  for (let end = path.length; end > 0; end = path.lastIndexOf('.', end - 1)) {
    const key = path.slice(0, end);
    if (Object.hasOwn(values, key)) return key;
  }
  return undefined;
}

function withContainer(
  message: TrackingMessage,
  container: Container,
  values: Record<string, unknown>,
  omitted: readonly string[] | undefined,
  omittedOnViolation: readonly string[] | undefined,
): TrackingMessage {
  const removed = new Set([...(omitted ?? []), ...(omittedOnViolation ?? [])]);
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(values)) {
    if (!removed.has(key)) kept[key] = values[key];
  }
  return { ...message, [container]: kept };
}

/** R10: the stored form of a message with something to report. */
function annotate(
  message: TrackingMessage,
  sourceId: string,
  container: Container | undefined,
  values: unknown,
  report: { violations: readonly Violation[]; violationsTruncated?: number },
  omitted: string[] | undefined,
  omittedOnViolation: string[] | undefined,
): TrackingMessage {
  const annotated =
    container && isObject(values) && (omitted || omittedOnViolation)
      ? withContainer(message, container, values, omitted, omittedOnViolation)
      : { ...message };
  const context = isObject(message.context) ? message.context : {};
  const protocols: Record<string, unknown> = withoutReportKeys(context.protocols);
  protocols.sourceId = sourceId;
  if (omitted) protocols.omitted = omitted;
  if (omittedOnViolation) protocols.omitted_on_violation = omittedOnViolation;
  if (report.violations.length > 0) protocols.violations = report.violations;
  if (report.violationsTruncated) protocols.violations_truncated = report.violationsTruncated;
  annotated.context = { ...context, protocols };
  return annotated;
}

/** The client's own `context.protocols` keys (`event_version`, ...), without those Protocols writes. */
export function withoutReportKeys(protocols: unknown): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  if (!isObject(protocols)) return kept;
  for (const [key, value] of Object.entries(protocols)) if (!REPORT_KEYS.includes(key)) kept[key] = value;
  return kept;
}
