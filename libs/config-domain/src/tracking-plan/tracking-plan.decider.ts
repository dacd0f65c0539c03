import { workspaceName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import {
  TrackingPlanChanges,
  TrackingPlanEvent,
  TrackingPlanRecord,
  TrackingPlanRules,
} from './tracking-plan.events';

export type TrackingPlanState =
  { status: 'absent' } | { status: 'active'; plan: TrackingPlanRecord } | { status: 'deleted' };

export type TrackingPlanCommand =
  | {
      type: 'CreateTrackingPlan';
      plan: Omit<TrackingPlanRecord, 'rules'> & { rules: unknown };
      workspaceExists: boolean;
    }
  | {
      type: 'UpdateTrackingPlan';
      changes: {
        displayName?: string;
        description?: string;
        rules?: unknown;
        ruleParts?: Record<string, unknown>;
      };
      now: string;
    }
  | { type: 'DeleteTrackingPlan' };

const RULE_PARTS = ['events', 'identify_traits', 'group_traits', 'global', 'identify', 'group'] as const;

export const trackingPlanDecider: Decider<TrackingPlanState, TrackingPlanCommand, TrackingPlanEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateTrackingPlan': {
        if (!command.workspaceExists)
          throw notFound(`${workspaceName(command.plan.workspaceSlug)} not found`);
        if (state.status !== 'absent')
          throw alreadyExists(`tracking plan ${command.plan.planId} already exists`);
        if (!command.plan.displayName?.trim())
          throw invalidArgument('tracking_plan.display_name is required');
        const rules = normalizeRules(command.plan.rules ?? {});
        return [{ type: 'TrackingPlanCreated', data: { ...command.plan, rules } }];
      }
      case 'UpdateTrackingPlan': {
        const { plan } = requireActive(state);
        const changes: TrackingPlanChanges = {};
        if (command.changes.displayName !== undefined) {
          if (typeof command.changes.displayName !== 'string' || !command.changes.displayName.trim()) {
            throw invalidArgument('tracking_plan.display_name must be a non-empty string');
          }
          changes.displayName = command.changes.displayName;
        }
        if (command.changes.description !== undefined) changes.description = command.changes.description;
        if (command.changes.rules !== undefined) changes.rules = normalizeRules(command.changes.rules);
        if (command.changes.ruleParts) {
          changes.ruleParts = {};
          for (const [part, value] of Object.entries(command.changes.ruleParts)) {
            // A cleared optional part is recorded as null, never undefined, so a replay clears it too.
            changes.ruleParts[part] = normalizeRulePart(part, value) ?? null;
          }
        }
        return [
          {
            type: 'TrackingPlanUpdated',
            data: {
              workspaceSlug: plan.workspaceSlug,
              planId: plan.planId,
              changes,
              updateTime: command.now,
            },
          },
        ];
      }
      case 'DeleteTrackingPlan': {
        const { plan } = requireActive(state);
        return [
          { type: 'TrackingPlanDeleted', data: { workspaceSlug: plan.workspaceSlug, planId: plan.planId } },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'TrackingPlanCreated':
        return { status: 'active', plan: event.data };
      case 'TrackingPlanDeleted':
        return { status: 'deleted' };
    }
    if (state.status !== 'active') return state;
    switch (event.type) {
      case 'TrackingPlanUpdated':
        return { ...state, plan: applyTrackingPlanChanges(state.plan, event.data) };
      // Connections are decided in each source's stream (`sourceTrackingPlanDecider`); those a plan's
      // stream holds from before are for the read model, and change nothing the plan decides on.
      default:
        return state;
    }
  },
};

export function applyTrackingPlanChanges(
  plan: TrackingPlanRecord,
  update: { changes: TrackingPlanChanges; updateTime: string },
): TrackingPlanRecord {
  const { changes } = update;
  let rules = changes.rules ?? plan.rules;
  if (changes.ruleParts) {
    rules = { ...rules };
    for (const [part, value] of Object.entries(changes.ruleParts)) {
      if (value === undefined || value === null) delete rules[part];
      else rules[part] = value;
    }
  }
  return {
    ...plan,
    displayName: changes.displayName ?? plan.displayName,
    ...(changes.description !== undefined && { description: changes.description }),
    rules,
    updateTime: update.updateTime,
  };
}

/**
 * `events`, `identify_traits` and `group_traits` are always present (`null` means empty);
 * `global`, `identify` and `group` only when set. Everything else is kept as sent.
 */
export function normalizeRules(input: unknown): TrackingPlanRules {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalidArgument('tracking_plan.rules must be an object');
  }
  const rules: TrackingPlanRules = {
    ...(input as Record<string, unknown>),
    events: [],
    identify_traits: [],
    group_traits: [],
  };
  for (const part of RULE_PARTS) {
    const value = normalizeRulePart(part, (input as Record<string, unknown>)[part]);
    if (value === undefined) delete rules[part];
    else rules[part] = value;
  }
  return rules;
}

function normalizeRulePart(part: string, value: unknown): any {
  if (!(RULE_PARTS as readonly string[]).includes(part)) {
    throw invalidArgument(`tracking_plan.rules.${part} is not a rules part; parts: ${RULE_PARTS.join(', ')}`);
  }
  if (part === 'events' || part === 'identify_traits' || part === 'group_traits') {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) throw invalidArgument(`tracking_plan.rules.${part} must be a list`);
    if (part === 'events') {
      value.forEach(validateEventRule);
      // Clients may leave `version` out (C7); the stored plan always carries one, as Segment's did.
      const events = value.map((rule) =>
        (rule as { version?: unknown }).version === undefined ? { ...rule, version: 1 } : rule,
      );
      refuseDuplicateVersions(events as { name: string; version: number }[]);
      return events;
    }
    return value;
  }
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(`tracking_plan.rules.${part} must be a JSON Schema object`);
  }
  return value;
}

/**
 * Two entries with one name and version would both be enforced as "that version" and typewriter,
 * which keeps the newest version of each name, would generate two functions of one name.
 */
function refuseDuplicateVersions(events: { name: string; version: number }[]): void {
  const seen = new Map<string, number>();
  events.forEach((event, index) => {
    const key = JSON.stringify([event.name, event.version]);
    const first = seen.get(key);
    if (first !== undefined) {
      throw invalidArgument(
        `tracking_plan.rules.events[${index}] repeats events[${first}]: "${event.name}" version ${event.version}; ` +
          'each name and version may appear once',
      );
    }
    seen.set(key, index);
  });
}

function validateEventRule(rule: unknown, index: number): void {
  if (rule === null || typeof rule !== 'object' || typeof (rule as { name?: unknown }).name !== 'string') {
    throw invalidArgument(`tracking_plan.rules.events[${index}] needs a string name`);
  }
  const version = (rule as { version?: unknown }).version;
  if (version !== undefined && !Number.isInteger(version)) {
    throw invalidArgument(`tracking_plan.rules.events[${index}].version must be an integer`);
  }
}

function requireActive(state: TrackingPlanState): Extract<TrackingPlanState, { status: 'active' }> {
  if (state.status !== 'active') throw notFound('tracking plan not found');
  return state;
}
