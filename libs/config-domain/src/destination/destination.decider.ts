import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import {
  DestinationChanges,
  DestinationEvent,
  DestinationIdentity,
  DestinationRecord,
  FilterAction,
  FilterChanges,
  FilterRecord,
} from './destination.events';

/** What the decider needs to know of a catalog setting; the catalog itself lives in libs/destinations. */
export interface SettingDefinition {
  name: string;
  required: boolean;
  defaultValue: unknown;
}

export type DestinationState =
  | { status: 'absent' }
  | { status: 'active'; destination: DestinationRecord; filters: FilterRecord[] }
  | { status: 'deleted' };

export type DestinationCommand =
  | {
      type: 'CreateDestination';
      destination: DestinationRecord;
      settings: SettingDefinition[];
      sourceExists: boolean;
    }
  | { type: 'UpdateDestination'; changes: DestinationChanges; settings: SettingDefinition[]; now: string }
  | { type: 'DeleteDestination' }
  | { type: 'CreateFilter'; filter: FilterRecord }
  | { type: 'UpdateFilter'; filterId: string; changes: FilterChanges; now: string }
  | { type: 'DeleteFilter'; filterId: string };

export const destinationDecider: Decider<DestinationState, DestinationCommand, DestinationEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateDestination': {
        const { destination, settings } = command;
        if (!command.sourceExists) {
          throw notFound(`workspaces/${destination.workspaceSlug}/sources/${destination.sourceSlug} not found`);
        }
        if (state.status === 'active') {
          throw alreadyExists(`${destinationName(destination)} already exists`);
        }
        rejectUnknownSettings(destination.config, settings);
        // The create response lists every setting of the catalog entry, filled with defaults (spec §2.5).
        const config = { ...defaultConfig(settings), ...destination.config };
        if (destination.enabled) rejectMissingRequiredSettings(config, settings);
        return [{ type: 'DestinationCreated', data: { ...destination, config } }];
      }
      case 'UpdateDestination': {
        const current = requireActive(state).destination;
        const { changes, settings } = command;
        if (changes.config) rejectUnknownSettings(changes.config, settings);
        const enabledAfter = changes.enabled ?? current.enabled;
        if (enabledAfter) rejectMissingRequiredSettings({ ...current.config, ...changes.config }, settings);
        return [
          { type: 'DestinationUpdated', data: { ...identity(current), changes, updateTime: command.now } },
        ];
      }
      case 'DeleteDestination':
        return [{ type: 'DestinationDeleted', data: identity(requireActive(state).destination) }];
      case 'CreateFilter': {
        const { destination, filters } = requireActive(state);
        // Two filters under one id could no longer be told apart: update and delete would hit both.
        if (filters.some((filter) => filter.filterId === command.filter.filterId)) {
          throw alreadyExists(`${destinationName(destination)}/filters/${command.filter.filterId} already exists`);
        }
        validateFilter(command.filter);
        return [{ type: 'DestinationFilterCreated', data: { ...identity(destination), filter: command.filter } }];
      }
      case 'UpdateFilter': {
        const active = requireActive(state);
        const filter = requireFilter(active.filters, command.filterId);
        validateFilter({ ...filter, ...command.changes });
        return [
          {
            type: 'DestinationFilterUpdated',
            data: {
              ...identity(active.destination),
              filterId: filter.filterId,
              changes: command.changes,
              updateTime: command.now,
            },
          },
        ];
      }
      case 'DeleteFilter': {
        const active = requireActive(state);
        requireFilter(active.filters, command.filterId);
        return [
          { type: 'DestinationFilterDeleted', data: { ...identity(active.destination), filterId: command.filterId } },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'DestinationCreated':
        return { status: 'active', destination: event.data, filters: [] };
      case 'DestinationDeleted':
        return { status: 'deleted' };
    }
    if (state.status !== 'active') return state;
    switch (event.type) {
      case 'DestinationUpdated':
        return { ...state, destination: applyDestinationChanges(state.destination, event.data) };
      case 'DestinationFilterCreated':
        return { ...state, filters: [...state.filters, event.data.filter] };
      case 'DestinationFilterUpdated':
        return {
          ...state,
          filters: state.filters.map((filter) =>
            filter.filterId === event.data.filterId
              ? { ...filter, ...event.data.changes, updateTime: event.data.updateTime }
              : filter,
          ),
        };
      case 'DestinationFilterDeleted':
        return { ...state, filters: state.filters.filter((filter) => filter.filterId !== event.data.filterId) };
    }
  },
};

/** Config changes merge by setting name (spec §2.5): settings not named keep their values. */
export function applyDestinationChanges(
  destination: DestinationRecord,
  update: { changes: DestinationChanges; updateTime: string },
): DestinationRecord {
  const { changes } = update;
  return {
    ...destination,
    enabled: changes.enabled ?? destination.enabled,
    connectionMode: changes.connectionMode ?? destination.connectionMode,
    config: { ...destination.config, ...changes.config },
    updateTime: update.updateTime,
  };
}

export function destinationName(identity: DestinationIdentity): string {
  return `workspaces/${identity.workspaceSlug}/sources/${identity.sourceSlug}/destinations/${identity.destinationSlug}`;
}

const FILTER_ACTION_TYPES = ['drop_event', 'sample_event', 'whitelist_fields', 'blacklist_fields', 'blocklist_fields'];

function validateFilter(filter: Pick<FilterRecord, 'if' | 'actions'>): void {
  if (typeof filter.if !== 'string' || !filter.if.trim()) {
    throw invalidArgument('filter.if is required: an FQL expression, or "all"');
  }
  if (!Array.isArray(filter.actions) || filter.actions.length === 0) {
    throw invalidArgument('filter.actions must list at least one action');
  }
  filter.actions.forEach(validateFilterAction);
}

function validateFilterAction(action: FilterAction, index: number): void {
  if (!FILTER_ACTION_TYPES.includes(action?.type)) {
    throw invalidArgument(`filter.actions[${index}].type must be one of ${FILTER_ACTION_TYPES.join(', ')}`);
  }
  if (action.type === 'sample_event') {
    const percent = action.percent;
    if (typeof percent !== 'number' || percent < 0 || percent > 1) {
      throw invalidArgument(`filter.actions[${index}].percent must be a number between 0 and 1`);
    }
  }
  if (action.type.endsWith('_fields')) {
    const fields = action.fields;
    if (!fields || typeof fields !== 'object' || Array.isArray(fields)) {
      throw invalidArgument(`filter.actions[${index}].fields must be an object such as {"properties":{"fields":[…]}}`);
    }
  }
}

function defaultConfig(settings: SettingDefinition[]): Record<string, unknown> {
  return Object.fromEntries(settings.map((setting) => [setting.name, structuredClone(setting.defaultValue)]));
}

function rejectUnknownSettings(config: Record<string, unknown>, settings: SettingDefinition[]): void {
  const known = new Set(settings.map((setting) => setting.name));
  const unknown = Object.keys(config).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw invalidArgument(
      `destination.config has unknown settings: ${unknown.join(', ')}; known: ${[...known].join(', ')}`,
    );
  }
}

function rejectMissingRequiredSettings(config: Record<string, unknown>, settings: SettingDefinition[]): void {
  const missing = settings
    .filter((setting) => setting.required)
    .filter((setting) => config[setting.name] === undefined || config[setting.name] === null || config[setting.name] === '')
    .map((setting) => setting.name);
  if (missing.length > 0) {
    throw invalidArgument(`an enabled destination needs its required settings: ${missing.join(', ')}`);
  }
}

function requireActive(state: DestinationState): Extract<DestinationState, { status: 'active' }> {
  if (state.status !== 'active') throw notFound('destination not found');
  return state;
}

function requireFilter(filters: FilterRecord[], filterId: string): FilterRecord {
  const filter = filters.find((candidate) => candidate.filterId === filterId);
  if (!filter) throw notFound(`filter ${filterId} not found`);
  return filter;
}

function identity(destination: DestinationIdentity): DestinationIdentity {
  const { workspaceSlug, sourceSlug, sourceId, destinationSlug } = destination;
  return { workspaceSlug, sourceSlug, sourceId, destinationSlug };
}
