/**
 * The vocabulary of tracking-plan enforcement (docs/protocols.md): what a plan and a source's
 * settings look like to the checker, and what it answers per message.
 */
import type { SchemaConfig } from '@tributary/config-domain';

/** A JSON Schema as stored in a plan: kept verbatim, whatever draft it was written in. */
export type JsonSchema = Record<string, unknown>;

/** One entry of `rules.events`: a JSON Schema of the whole message for one event name and version. */
export interface PlanEventRule {
  name: string;
  /** Absent counts as 1. */
  version?: number;
  rules?: JsonSchema;
  [key: string]: unknown;
}

/**
 * The rules of a tracking plan, as the Config API stores them. Entries of `events` are checked when
 * compiled (a stored entry without a string name is ignored), so any JSON object is accepted here.
 */
export interface PlanRules {
  events?: Record<string, unknown>[] | null;
  /** The common schema, applied to every message. */
  global?: JsonSchema | null;
  identify?: JsonSchema | null;
  group?: JsonSchema | null;
  [key: string]: unknown;
}

/** A source's schema config (Config API `SchemaConfig`, wire names): the config domain owns its shape. */
export type EnforcementSettings = SchemaConfig;

/** One schema error, in the shape Segment reports it (`context.protocols.violations[]`). */
export interface Violation {
  /** gojsonschema's error kind in Title Case: `Required`, `Invalid Type`, `Enum`, ... */
  type: string;
  /** Dotted path from the message root; `(root)` for the message itself. */
  field: string;
  description: string;
}

export type BlockedReason =
  'unplanned' | 'schema_violation' | 'common_schema_violation' | 'unplanned_and_schema_violation';

/** A message as the tracking API stores it (after ingest normalization). */
export type TrackingMessage = Record<string, unknown> & { type: string; messageId: string };

/**
 * What Protocols does with one message.
 * - `allow` with `changed: false`: store the message exactly as it came (nothing to report).
 * - `allow` with `changed: true`: store `message`, a copy with omissions and `context.protocols`.
 * - `block`: store nothing in the source's log.
 * `violations` holds at most `MAX_VIOLATIONS_PER_MESSAGE` entries, in validation order.
 */
export type Verdict =
  | { kind: 'allow'; changed: false; violations: readonly Violation[] }
  | {
      kind: 'allow';
      changed: true;
      message: TrackingMessage;
      violations: readonly Violation[];
      /** Violations past `MAX_VIOLATIONS_PER_MESSAGE`, counted but not listed; absent when none. */
      violationsTruncated?: number;
      omitted: readonly string[];
      omittedOnViolation: readonly string[];
    }
  | { kind: 'block'; reason: BlockedReason; violations: readonly Violation[]; violationsTruncated?: number };

/** A rule of a stored plan that could not be compiled: skipped, and reported so it can be counted. */
export interface SkippedRule {
  /** `events[Order Completed v2]`, `global`, `identify`, `group`. */
  rule: string;
  error: string;
}
