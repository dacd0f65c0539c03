/**
 * Rules of a tracking plan. The JSON Schemas inside are stored verbatim (draft-04 or -07,
 * `labels`, `id`, ...): clients compare what they wrote with what they read back.
 */
export interface TrackingPlanRules {
  events: Record<string, unknown>[];
  identify_traits: unknown[];
  group_traits: unknown[];
  global?: Record<string, unknown>;
  identify?: Record<string, unknown>;
  group?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface TrackingPlanRecord {
  workspaceSlug: string;
  planId: string;
  displayName: string;
  rules: TrackingPlanRules;
  /** Public API `type` (`LIVE`, `PROPERTY_LIBRARY`, ...); absent (v1beta plans) is `LIVE`. */
  planType?: string;
  /** Public API `description`; absent is none. */
  description?: string;
  createTime: string;
  updateTime: string;
}

export interface TrackingPlanChanges {
  displayName?: string;
  description?: string;
  /** Replaces the rules wholesale (`tracking_plan.rules` in the mask). */
  rules?: TrackingPlanRules;
  /**
   * Replaces single parts (`tracking_plan.rules.events`, `.global`, ...), after `rules` if both.
   * `null` removes an optional part (`global`, `identify`, `group`): it must be a value that
   * survives the JSON the event is stored as, which `undefined` does not.
   */
  ruleParts?: { [Part in keyof TrackingPlanRules]?: TrackingPlanRules[Part] | null };
}

type PlanIdentity = { workspaceSlug: string; planId: string };

export type TrackingPlanEvent =
  | { type: 'TrackingPlanCreated'; data: TrackingPlanRecord }
  | { type: 'TrackingPlanUpdated'; data: PlanIdentity & { changes: TrackingPlanChanges; updateTime: string } }
  | { type: 'TrackingPlanDeleted'; data: PlanIdentity }
  | { type: 'TrackingPlanSourceConnected'; data: PlanIdentity & { sourceSlug: string } }
  | { type: 'TrackingPlanSourceDisconnected'; data: PlanIdentity & { sourceSlug: string } };
