import { destinationName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import {
  defaultSettingValues,
  unsetRequiredSettings,
  rejectUnknownSettings,
  SettingDefinition,
} from '../shared/instance-settings';
import {
  DestinationChanges,
  DestinationEvent,
  DestinationIdentity,
  DestinationRecord,
  FilterAction,
  FilterChanges,
  FilterRecord,
  InsertFunctionChanges,
  InsertFunctionRecord,
  ReplayCounts,
  ReplayRecord,
} from './destination.events';

export type { SettingDefinition } from '../shared/instance-settings';

export type DestinationState =
  | { status: 'absent' }
  | {
      status: 'active';
      destination: DestinationRecord;
      filters: FilterRecord[];
      replays: ReplayRecord[];
      /** Redrives requested and not recorded yet, oldest first. */
      pendingRedriveIds: string[];
    }
  | { status: 'deleted' };

export type DestinationCommand =
  | {
      type: 'CreateDestination';
      destination: DestinationRecord;
      settings: SettingDefinition[];
      /**
       * Required settings must be set even on a disabled destination: a destination function's settings
       * (docs/functions.md §2). A catalog destination may be created disabled and filled in later.
       */
      requiredWhenDisabled?: boolean;
    }
  | {
      type: 'UpdateDestination';
      changes: DestinationChanges;
      settings: SettingDefinition[];
      requiredWhenDisabled?: boolean;
      now: string;
    }
  | { type: 'DeleteDestination' }
  | {
      type: 'CreateInsertFunction';
      insertFunction: InsertFunctionRecord;
      /** The settings the function declares. */
      settings: SettingDefinition[];
    }
  | {
      type: 'UpdateInsertFunction';
      functionId: string;
      changes: InsertFunctionChanges;
      settings: SettingDefinition[];
      now: string;
    }
  | { type: 'DeleteInsertFunction'; functionId: string }
  | { type: 'CreateFilter'; filter: FilterRecord }
  | { type: 'UpdateFilter'; filterId: string; changes: FilterChanges; now: string }
  | { type: 'DeleteFilter'; filterId: string }
  | { type: 'RequestReplay'; replayId: string; startTime: string; endTime: string | null; now: string }
  | { type: 'RequestReplayCancel'; replayId: string; now: string }
  | {
      type: 'FinishReplay';
      replayId: string;
      state: 'COMPLETED' | 'FAILED' | 'CANCELLED';
      counts: ReplayCounts;
      failureReason: string | null;
      now: string;
    }
  | { type: 'RequestDeadLetterRedrive'; redriveId: string; now: string }
  | {
      type: 'RecordDeadLetterRedrive';
      redriveId: string;
      delivered: number[];
      failed: { deadLetterSequence: number; reason: string }[];
      now: string;
    };

export const destinationDecider: Decider<DestinationState, DestinationCommand, DestinationEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateDestination': {
        const { destination, settings } = command;
        if (state.status === 'active') {
          throw alreadyExists(`${destinationName(destination)} already exists`);
        }
        rejectUnknownSettings(destination.config, settings, 'destination.config');
        // The create response lists every setting of the catalog entry, filled with defaults (docs/config-api.md §2.5).
        const config = { ...defaultSettingValues(settings), ...destination.config };
        if (destination.enabled || command.requiredWhenDisabled) {
          rejectMissingRequiredSettings(config, settings, destination.enabled);
        }
        return [{ type: 'DestinationCreated', data: { ...destination, config } }];
      }
      case 'UpdateDestination': {
        const current = requireActive(state).destination;
        const { changes, settings } = command;
        if (changes.config) rejectUnknownSettings(changes.config, settings, 'destination.config');
        const enabledAfter = changes.enabled ?? current.enabled;
        if (enabledAfter || command.requiredWhenDisabled) {
          rejectMissingRequiredSettings({ ...current.config, ...changes.config }, settings, enabledAfter);
        }
        return [
          { type: 'DestinationUpdated', data: { ...identity(current), changes, updateTime: command.now } },
        ];
      }
      case 'DeleteDestination':
        return [{ type: 'DestinationDeleted', data: identity(requireActive(state).destination) }];
      case 'CreateInsertFunction': {
        const { destination } = requireActive(state);
        // One insert function per destination: a second would leave the order of the two undefined.
        if (destination.insertFunction) {
          throw alreadyExists(
            `${destinationName(destination)} already has the insert function ` +
              `${destination.insertFunction.functionId}; delete it first`,
          );
        }
        const { insertFunction, settings } = command;
        rejectUnknownSettings(insertFunction.config, settings, 'insert_function.config');
        const config = { ...defaultSettingValues(settings), ...insertFunction.config };
        rejectMissingInsertFunctionSettings(config, settings);
        return [
          {
            type: 'DestinationInsertFunctionCreated',
            data: { ...identity(destination), insertFunction: { ...insertFunction, config } },
          },
        ];
      }
      case 'UpdateInsertFunction': {
        const { destination } = requireActive(state);
        const current = requireInsertFunction(destination, command.functionId);
        const { changes, settings } = command;
        if (changes.config) rejectUnknownSettings(changes.config, settings, 'insert_function.config');
        rejectMissingInsertFunctionSettings({ ...current.config, ...changes.config }, settings);
        return [
          {
            type: 'DestinationInsertFunctionUpdated',
            data: {
              ...identity(destination),
              functionId: current.functionId,
              changes,
              updateTime: command.now,
            },
          },
        ];
      }
      case 'DeleteInsertFunction': {
        const { destination } = requireActive(state);
        requireInsertFunction(destination, command.functionId);
        return [
          {
            type: 'DestinationInsertFunctionDeleted',
            data: { ...identity(destination), functionId: command.functionId },
          },
        ];
      }
      case 'CreateFilter': {
        const { destination, filters } = requireActive(state);
        // Two filters under one id could no longer be told apart: update and delete would hit both.
        if (filters.some((filter) => filter.filterId === command.filter.filterId)) {
          throw alreadyExists(
            `${destinationName(destination)}/filters/${command.filter.filterId} already exists`,
          );
        }
        validateFilter(command.filter);
        return [
          { type: 'DestinationFilterCreated', data: { ...identity(destination), filter: command.filter } },
        ];
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
          {
            type: 'DestinationFilterDeleted',
            data: { ...identity(active.destination), filterId: command.filterId },
          },
        ];
      }
      case 'RequestReplay': {
        const { destination } = requireActive(state);
        const start = Date.parse(command.startTime);
        const end = command.endTime === null ? null : Date.parse(command.endTime);
        if (Number.isNaN(start)) throw invalidArgument('replay.start_time must be an RFC 3339 time');
        if (end !== null && Number.isNaN(end))
          throw invalidArgument('replay.end_time must be an RFC 3339 time');
        if (start > Date.parse(command.now))
          throw invalidArgument('replay.start_time must not be in the future');
        if (end !== null && end <= start)
          throw invalidArgument('replay.end_time must be after replay.start_time');
        const replay: ReplayRecord = {
          replayId: command.replayId,
          startTime: new Date(start).toISOString(),
          endTime: end === null ? null : new Date(end).toISOString(),
          state: 'RUNNING',
          createTime: command.now,
          finishTime: null,
          counts: null,
          failureReason: null,
        };
        return [{ type: 'DestinationReplayRequested', data: { ...identity(destination), replay } }];
      }
      case 'RequestReplayCancel': {
        const active = requireActive(state);
        const replay = active.replays.find((candidate) => candidate.replayId === command.replayId);
        if (!replay) throw notFound(`replay ${command.replayId} not found`);
        if (replay.state !== 'RUNNING')
          throw invalidArgument(
            `replay ${command.replayId} is ${replay.state}: only a running replay can be cancelled`,
          );
        // Asked twice (a retried request): the first request stands.
        if (replay.cancelRequestTime) return [];
        return [
          {
            type: 'DestinationReplayCancelRequested',
            data: { ...identity(active.destination), replayId: replay.replayId, requestTime: command.now },
          },
        ];
      }
      case 'FinishReplay': {
        const active = requireActive(state);
        const replay = active.replays.find((candidate) => candidate.replayId === command.replayId);
        if (!replay) throw notFound(`replay ${command.replayId} not found`);
        // Finishing twice (a router restarted mid-way) records nothing new.
        if (replay.state !== 'RUNNING') return [];
        return [
          {
            type: 'DestinationReplayFinished',
            data: {
              ...identity(active.destination),
              replayId: replay.replayId,
              state: command.state,
              counts: command.counts,
              finishTime: command.now,
              failureReason: command.failureReason,
            },
          },
        ];
      }
      case 'RequestDeadLetterRedrive': {
        const { destination } = requireActive(state);
        return [
          {
            type: 'DestinationDeadLettersRedriveRequested',
            data: { ...identity(destination), redriveId: command.redriveId, requestTime: command.now },
          },
        ];
      }
      case 'RecordDeadLetterRedrive': {
        const { destination, pendingRedriveIds } = requireActive(state);
        // Recorded already (a router replica that lost its claim mid-way finished it too): nothing new.
        if (!pendingRedriveIds.includes(command.redriveId)) return [];
        return [
          {
            type: 'DestinationDeadLettersRedriven',
            data: {
              ...identity(destination),
              redriveId: command.redriveId,
              delivered: command.delivered,
              failed: command.failed,
              finishTime: command.now,
            },
          },
        ];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'DestinationCreated':
        return { status: 'active', destination: event.data, filters: [], replays: [], pendingRedriveIds: [] };
      case 'DestinationDeleted':
        return { status: 'deleted' };
    }
    if (state.status !== 'active') return state;
    switch (event.type) {
      case 'DestinationUpdated':
        return { ...state, destination: applyDestinationChanges(state.destination, event.data) };
      case 'DestinationInsertFunctionCreated':
        return { ...state, destination: { ...state.destination, insertFunction: event.data.insertFunction } };
      case 'DestinationInsertFunctionUpdated': {
        const current = state.destination.insertFunction;
        if (!current || current.functionId !== event.data.functionId) return state;
        const { changes, updateTime } = event.data;
        const insertFunction: InsertFunctionRecord = {
          ...current,
          enabled: changes.enabled ?? current.enabled,
          config: { ...current.config, ...changes.config },
          ...((changes.displayName ?? current.displayName) !== undefined && {
            displayName: changes.displayName ?? current.displayName,
          }),
          updateTime,
        };
        return { ...state, destination: { ...state.destination, insertFunction } };
      }
      case 'DestinationInsertFunctionDeleted': {
        const { insertFunction: _deleted, ...destination } = state.destination;
        return { ...state, destination };
      }
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
        return {
          ...state,
          filters: state.filters.filter((filter) => filter.filterId !== event.data.filterId),
        };
      case 'DestinationReplayRequested':
        return { ...state, replays: [...state.replays, event.data.replay] };
      case 'DestinationReplayCancelRequested':
        return {
          ...state,
          replays: state.replays.map((replay) =>
            replay.replayId === event.data.replayId
              ? { ...replay, cancelRequestTime: event.data.requestTime }
              : replay,
          ),
        };
      case 'DestinationReplayFinished':
        return { ...state, replays: applyReplayFinished(state.replays, event.data) };
      case 'DestinationDeadLettersRedriveRequested':
        return { ...state, pendingRedriveIds: [...state.pendingRedriveIds, event.data.redriveId] };
      case 'DestinationDeadLettersRedriven':
        return {
          ...state,
          pendingRedriveIds: state.pendingRedriveIds.filter((id) => id !== event.data.redriveId),
        };
    }
  },
};

/** Config changes merge by setting name (docs/config-api.md §2.5): settings not named keep their values. */
export function applyDestinationChanges(
  destination: DestinationRecord,
  update: { changes: DestinationChanges; updateTime: string },
): DestinationRecord {
  const { changes } = update;
  return {
    ...destination,
    displayName: changes.displayName ?? destination.displayName,
    enabled: changes.enabled ?? destination.enabled,
    connectionMode: changes.connectionMode ?? destination.connectionMode,
    config: { ...destination.config, ...changes.config },
    updateTime: update.updateTime,
  };
}

export function applyReplayFinished(
  replays: ReplayRecord[],
  finished: {
    replayId: string;
    state: ReplayRecord['state'];
    counts: ReplayCounts;
    finishTime: string;
    failureReason: string | null;
  },
): ReplayRecord[] {
  return replays.map((replay) =>
    replay.replayId === finished.replayId
      ? {
          ...replay,
          state: finished.state,
          counts: finished.counts,
          finishTime: finished.finishTime,
          failureReason: finished.failureReason,
        }
      : replay,
  );
}

/** Destinations recorded before `catalogSlug` existed were named by their catalog slug. */
export function catalogSlugOf(
  destination: Pick<DestinationRecord, 'catalogSlug' | 'destinationSlug'>,
): string {
  return destination.catalogSlug ?? destination.destinationSlug;
}

const FILTER_ACTION_TYPES = [
  'drop_event',
  'sample_event',
  'whitelist_fields',
  'blacklist_fields',
  'blocklist_fields',
];

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
      throw invalidArgument(
        `filter.actions[${index}].fields must be an object such as {"properties":{"fields":[…]}}`,
      );
    }
  }
}

function rejectMissingRequiredSettings(
  config: Record<string, unknown>,
  settings: SettingDefinition[],
  enabled: boolean,
): void {
  const missing = unsetRequiredSettings(config, settings);
  if (missing.length > 0) {
    throw invalidArgument(
      `${enabled ? 'an enabled destination' : 'a destination function'} needs its required settings: ${missing.join(', ')}`,
    );
  }
}

function rejectMissingInsertFunctionSettings(
  config: Record<string, unknown>,
  settings: SettingDefinition[],
): void {
  const missing = unsetRequiredSettings(config, settings);
  if (missing.length > 0) {
    throw invalidArgument(`insert_function.config needs the required settings: ${missing.join(', ')}`);
  }
}

function requireInsertFunction(destination: DestinationRecord, functionId: string): InsertFunctionRecord {
  const insertFunction = destination.insertFunction;
  if (!insertFunction || insertFunction.functionId !== functionId) {
    throw notFound(`${destinationName(destination)}/insert-functions/${functionId} not found`);
  }
  return insertFunction;
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
