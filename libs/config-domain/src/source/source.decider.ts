import { sourceName, workspaceName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import {
  defaultSettingValues,
  rejectUnknownSettings,
  SettingDefinition,
  unsetRequiredSettings,
} from '../shared/instance-settings';
import { DEFAULT_SCHEMA_CONFIG, SchemaConfig, schemaConfigValueProblem } from './schema-config';
import { MAX_ALLOWED_ORIGINS, parseAllowedOrigin } from './allowed-origins';
import { SourceChanges, SourceEvent, SourceRecord, writeKeysOf } from './source.events';

/** Enough to rotate keys without a gap; more would be keys nobody tracks. */
export const MAX_WRITE_KEYS = 5;

export type SourceState =
  | { status: 'absent' }
  | { status: 'active'; source: SourceRecord; schemaConfig: SchemaConfig }
  | { status: 'deleted' };

export type SourceCommand =
  | {
      type: 'CreateSource';
      source: SourceRecord;
      catalogSourceExists: boolean;
      workspaceExists: boolean;
      /** The settings the source's function declares, when `source.functionId` names one. */
      functionSettings?: SettingDefinition[];
    }
  | {
      type: 'UpdateSchemaConfig';
      changes: Partial<SchemaConfig>;
      /** Slugs of the workspace's sources: a forwarding target must be one of them (not this one). */
      workspaceSourceSlugs: readonly string[];
    }
  | {
      type: 'UpdateSource';
      changes: Omit<SourceChanges, 'writeKey' | 'additionalWriteKeys'>;
      /** The settings the source's function declares, when the changes hold a function config. */
      functionSettings?: SettingDefinition[];
    }
  | { type: 'AddWriteKey'; writeKey: string }
  | { type: 'RemoveWriteKey'; writeKey: string }
  | { type: 'DeleteSource' };

const FORWARDING_FIELDS = ['forwarding_blocked_events_to', 'forwarding_violations_to'] as const;

export const sourceDecider: Decider<SourceState, SourceCommand, SourceEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateSource': {
        const { source } = command;
        const name = sourceName(source);
        if (!command.workspaceExists) throw notFound(`${workspaceName(source.workspaceSlug)} not found`);
        if (state.status === 'active') throw alreadyExists(`${name} already exists`);
        if (!command.catalogSourceExists) {
          throw invalidArgument(`source.catalog_name "${source.catalogName}" is not in the catalog`);
        }
        const allowedOrigins = source.allowedOrigins && normalizeAllowedOrigins(source.allowedOrigins);
        const functionConfig =
          source.functionId === undefined
            ? undefined
            : checkedFunctionConfig(
                { ...defaultSettingValues(command.functionSettings ?? []), ...source.functionConfig },
                command.functionSettings ?? [],
              );
        return [
          {
            type: 'SourceCreated',
            data: {
              ...source,
              ...(allowedOrigins !== undefined && { allowedOrigins }),
              ...(functionConfig !== undefined && { functionConfig }),
              schemaConfig: DEFAULT_SCHEMA_CONFIG,
            },
          },
        ];
      }
      case 'UpdateSource': {
        const source = requireActive(state);
        const changes: SourceChanges = {};
        if (command.changes.allowedOrigins !== undefined) {
          changes.allowedOrigins = normalizeAllowedOrigins(command.changes.allowedOrigins);
        }
        const { displayName, enabled, settings, labels } = command.changes;
        if (labels !== undefined) changes.labels = labels;
        if (displayName !== undefined) {
          if (typeof displayName !== 'string' || !displayName.trim()) {
            throw invalidArgument('source.display_name must be a non-empty string');
          }
          changes.displayName = displayName;
        }
        if (enabled !== undefined) changes.enabled = enabled;
        if (settings !== undefined) changes.settings = settings;
        if (command.changes.functionConfig !== undefined) {
          if (source.functionId === undefined) {
            throw invalidArgument(`${sourceName(source)} runs no function: it has no function_config`);
          }
          changes.functionConfig = checkedFunctionConfig(
            command.changes.functionConfig,
            command.functionSettings ?? [],
          );
        }
        return [{ type: 'SourceUpdated', data: { ...identity(source), changes } }];
      }
      case 'AddWriteKey': {
        const source = requireActive(state);
        const writeKeys = writeKeysOf(source);
        if (writeKeys.length >= MAX_WRITE_KEYS) {
          throw invalidArgument(`a source has at most ${MAX_WRITE_KEYS} write keys`);
        }
        const additionalWriteKeys = [...(source.additionalWriteKeys ?? []), command.writeKey];
        return [{ type: 'SourceUpdated', data: { ...identity(source), changes: { additionalWriteKeys } } }];
      }
      case 'RemoveWriteKey': {
        const source = requireActive(state);
        const writeKeys = writeKeysOf(source);
        if (!writeKeys.includes(command.writeKey))
          throw notFound(`the source has no write key ${command.writeKey}`);
        if (writeKeys.length === 1) throw invalidArgument('the last write key of a source cannot be removed');
        const [writeKey, ...additionalWriteKeys] = writeKeys.filter((key) => key !== command.writeKey);
        return [
          {
            type: 'SourceUpdated',
            data: { ...identity(source), changes: { writeKey, additionalWriteKeys } },
          },
        ];
      }
      case 'UpdateSchemaConfig': {
        const source = requireActive(state);
        for (const [field, value] of Object.entries(command.changes)) {
          const problem = schemaConfigValueProblem(field as keyof SchemaConfig, value);
          if (problem) throw invalidArgument(`schema_config.${problem}`);
        }
        for (const field of FORWARDING_FIELDS) {
          const target = command.changes[field];
          if (!target) continue; // "" turns forwarding off
          if (target === source.sourceSlug) {
            throw invalidArgument(
              `schema_config.${field} must name another source than ${source.sourceSlug}`,
            );
          }
          if (!command.workspaceSourceSlugs.includes(target)) {
            throw invalidArgument(
              `schema_config.${field}: ${sourceName({ workspaceSlug: source.workspaceSlug, sourceSlug: target })} does not exist`,
            );
          }
        }
        return [{ type: 'SchemaConfigUpdated', data: { ...identity(source), changes: command.changes } }];
      }
      case 'DeleteSource':
        return [{ type: 'SourceDeleted', data: identity(requireActive(state)) }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'SourceCreated': {
        const { schemaConfig, ...source } = event.data;
        return { status: 'active', source, schemaConfig };
      }
      case 'SourceUpdated':
        if (state.status !== 'active') return state;
        return { ...state, source: { ...state.source, ...event.data.changes } };
      case 'SchemaConfigUpdated':
        if (state.status !== 'active') return state;
        return { ...state, schemaConfig: { ...state.schemaConfig, ...event.data.changes } };
      case 'SourceDeleted':
        return { status: 'deleted' };
    }
  },
};

/** A source function's settings are all known to the function and its required ones set (docs/functions.md §2). */
function checkedFunctionConfig(
  config: Record<string, unknown>,
  settings: readonly SettingDefinition[],
): Record<string, unknown> {
  rejectUnknownSettings(config, settings, 'source.function_config');
  const unset = unsetRequiredSettings(config, settings);
  if (unset.length > 0) {
    throw invalidArgument(`source.function_config needs the required settings: ${unset.join(', ')}`);
  }
  return config;
}

/** Each entry normalized, duplicates dropped; any bad entry refuses the whole command. */
function normalizeAllowedOrigins(entries: unknown): string[] {
  if (!Array.isArray(entries)) throw invalidArgument('source.allowed_origins must be a list of origins');
  if (entries.length > MAX_ALLOWED_ORIGINS) {
    throw invalidArgument(`source.allowed_origins holds at most ${MAX_ALLOWED_ORIGINS} origins`);
  }
  const origins: string[] = [];
  entries.forEach((entry, index) => {
    const parsed = parseAllowedOrigin(entry);
    if ('problem' in parsed) throw invalidArgument(`source.allowed_origins[${index}] ${parsed.problem}`);
    if (!origins.includes(parsed.origin)) origins.push(parsed.origin);
  });
  return origins;
}

function requireActive(state: SourceState): SourceRecord {
  if (state.status !== 'active') throw notFound('source not found');
  return state.source;
}

function identity(source: SourceRecord) {
  return { workspaceSlug: source.workspaceSlug, sourceSlug: source.sourceSlug, sourceId: source.sourceId };
}
