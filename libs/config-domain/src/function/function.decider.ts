import { workspaceName } from '@tributary/contracts';
import {
  alreadyExists,
  Decider,
  failedPrecondition,
  invalidArgument,
  notFound,
  resourceExhausted,
} from '../shared/decider';
import { checkFunctionSettings } from './function-settings';
import {
  FunctionDescriptionChanges,
  FunctionEvent,
  FunctionKind,
  FunctionRecord,
  FunctionVersionRecord,
} from './function.events';

/** Limits a write is checked against (docs/functions.md §1), from the environment. */
export interface FunctionLimits {
  /** `FUNCTION_MAX_CODE_BYTES`: bytes of UTF-8 of one version's code. */
  maxCodeBytes: number;
  /** `WORKSPACE_MAX_FUNCTIONS` */
  maxFunctions: number;
}

const MAX_DISPLAY_NAME_LENGTH = 200;
const MAX_DESCRIPTION_LENGTH = 2_000;
const MAX_LOGO_URL_LENGTH = 2_048;

export type FunctionState =
  { status: 'absent' } | { status: 'active'; function: FunctionRecord } | { status: 'deleted' };

/** What a create or an update writes; settings as sent, checked here. */
export interface FunctionDraft {
  displayName: string;
  description: string;
  logoUrl: string;
  code: string;
  settings: unknown;
}

export type FunctionCommand =
  | {
      type: 'CreateFunction';
      workspaceSlug: string;
      workspaceId: string;
      functionId: string;
      kind: FunctionKind;
      draft: FunctionDraft;
      /** Facts of the read model: whether the workspace exists, how many functions it has. */
      workspaceExists: boolean;
      functionsInWorkspace: number;
      limits: FunctionLimits;
      now: string;
      actor: string;
    }
  | {
      type: 'UpdateFunction';
      /** Only the fields written; `code` or `settings` make a new version. */
      changes: Partial<FunctionDraft>;
      limits: FunctionLimits;
      now: string;
      actor: string;
    }
  /** A new version with an earlier version's code and settings (the Public API's restore). */
  | { type: 'RestoreFunctionVersion'; version: number; now: string; actor: string }
  /**
   * Instances run the latest version from now on. `codeCompiles` is the sandbox's verdict on the
   * latest version's code, which may have changed since it was saved (a newer runtime).
   */
  | { type: 'DeployFunction'; codeCompiles: { ok: true } | { ok: false; message: string }; now: string }
  /** `instances`: how many destinations, insert-function instances and sources use the function. */
  | { type: 'DeleteFunction'; instances: number };

/**
 * A tenant's function (docs/functions.md §1, §2, §4): its code and setting declarations in
 * numbered versions, the one instances run (`deployedVersion`), and its description. Version 1 is
 * deployed at create; a later version runs only once deployed. Whether the code compiles and
 * declares its kind's entry points is the sandbox's to say, before a command is sent; here are the
 * rules that need no sandbox: sizes, settings, the workspace's cap, deletion while in use.
 */
export const functionDecider: Decider<FunctionState, FunctionCommand, FunctionEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateFunction': {
        const { workspaceSlug, functionId, draft, limits } = command;
        if (!command.workspaceExists) throw notFound(`${workspaceName(workspaceSlug)} not found`);
        if (state.status !== 'absent') throw alreadyExists(`function ${functionId} already exists`);
        if (command.functionsInWorkspace >= limits.maxFunctions) {
          throw resourceExhausted(
            `quota exceeded: workspace ${workspaceSlug} already has ${command.functionsInWorkspace} functions, ` +
              'the most a workspace may have (WORKSPACE_MAX_FUNCTIONS); delete one first',
          );
        }
        checkDescription(draft, { required: true });
        checkCode(draft.code, limits);
        return [
          {
            type: 'FunctionCreated',
            data: {
              workspaceSlug,
              functionId,
              workspaceId: command.workspaceId,
              type: command.kind,
              displayName: draft.displayName.trim(),
              description: draft.description,
              logoUrl: draft.logoUrl,
              code: draft.code,
              settings: checkFunctionSettings(draft.settings),
              createTime: command.now,
              createdBy: command.actor,
            },
          },
        ];
      }
      case 'UpdateFunction': {
        const current = requireActive(state);
        const { changes } = command;
        checkDescription(changes, { required: false });
        const description: FunctionDescriptionChanges = {};
        if (changes.displayName !== undefined) description.displayName = changes.displayName.trim();
        if (changes.description !== undefined) description.description = changes.description;
        if (changes.logoUrl !== undefined) description.logoUrl = changes.logoUrl;
        const writesVersion = changes.code !== undefined || changes.settings !== undefined;
        if (changes.code !== undefined) checkCode(changes.code, command.limits);
        const version: FunctionVersionRecord | undefined = writesVersion
          ? {
              version: current.version + 1,
              code: changes.code ?? current.code,
              settings:
                changes.settings !== undefined ? checkFunctionSettings(changes.settings) : current.settings,
              createTime: command.now,
              createdBy: command.actor,
            }
          : undefined;
        return [
          {
            type: 'FunctionUpdated',
            data: {
              ...identity(current),
              changes: description,
              ...(version && { version }),
              updateTime: command.now,
            },
          },
        ];
      }
      case 'RestoreFunctionVersion': {
        const current = requireActive(state);
        const restored = current.versions.find((candidate) => candidate.version === command.version);
        if (!restored) {
          throw notFound(`function ${current.functionId} has no version ${command.version}`);
        }
        return [
          {
            type: 'FunctionUpdated',
            data: {
              ...identity(current),
              changes: {},
              version: {
                version: current.version + 1,
                code: restored.code,
                settings: restored.settings,
                createTime: command.now,
                createdBy: command.actor,
              },
              updateTime: command.now,
            },
          },
        ];
      }
      case 'DeployFunction': {
        const current = requireActive(state);
        if (!command.codeCompiles.ok) {
          throw failedPrecondition(
            `version ${current.version} cannot be deployed: ${command.codeCompiles.message}`,
          );
        }
        return [
          {
            type: 'FunctionDeployed',
            data: { ...identity(current), deployedVersion: current.version, deployTime: command.now },
          },
        ];
      }
      case 'DeleteFunction': {
        const current = requireActive(state);
        if (command.instances > 0) {
          throw failedPrecondition(
            `function ${current.functionId} is used by ${command.instances} instance${command.instances === 1 ? '' : 's'}; ` +
              'delete them first',
          );
        }
        return [{ type: 'FunctionDeleted', data: identity(current) }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'FunctionCreated': {
        const { data } = event;
        const first: FunctionVersionRecord = {
          version: 1,
          code: data.code,
          settings: data.settings,
          createTime: data.createTime,
          createdBy: data.createdBy,
        };
        return {
          status: 'active',
          function: {
            functionId: data.functionId,
            workspaceId: data.workspaceId,
            workspaceSlug: data.workspaceSlug,
            type: data.type,
            displayName: data.displayName,
            description: data.description,
            logoUrl: data.logoUrl,
            settings: data.settings,
            code: data.code,
            version: 1,
            deployedVersion: 1,
            versions: [first],
            createTime: data.createTime,
            createdBy: data.createdBy,
            updateTime: data.createTime,
            deployTime: data.createTime,
          },
        };
      }
      case 'FunctionUpdated': {
        if (state.status !== 'active') return state;
        const { changes, version, updateTime } = event.data;
        const updated: FunctionRecord = { ...state.function, ...changes, updateTime };
        if (version) {
          updated.code = version.code;
          updated.settings = version.settings;
          updated.version = version.version;
          updated.versions = [...state.function.versions, version];
        }
        return { status: 'active', function: updated };
      }
      case 'FunctionDeployed':
        return state.status === 'active'
          ? {
              status: 'active',
              function: {
                ...state.function,
                deployedVersion: event.data.deployedVersion,
                deployTime: event.data.deployTime,
              },
            }
          : state;
      case 'FunctionDeleted':
        return { status: 'deleted' };
    }
  },
};

/** The version instances run: the deployed one's code and settings. */
export function deployedFunctionVersion(record: FunctionRecord): FunctionVersionRecord {
  return (
    record.versions.find((candidate) => candidate.version === record.deployedVersion) ??
    record.versions[record.versions.length - 1]
  );
}

function checkCode(code: string, limits: FunctionLimits): void {
  if (!code.trim()) throw invalidArgument('code is required');
  const bytes = new TextEncoder().encode(code).byteLength;
  if (bytes > limits.maxCodeBytes) {
    throw invalidArgument(
      `code: ${bytes} bytes; a function's code may have at most ${limits.maxCodeBytes} (FUNCTION_MAX_CODE_BYTES)`,
    );
  }
}

function checkDescription(
  draft: Partial<Pick<FunctionDraft, 'displayName' | 'description' | 'logoUrl'>>,
  { required }: { required: boolean },
): void {
  if (draft.displayName !== undefined || required) {
    const displayName = draft.displayName ?? '';
    if (!displayName.trim()) throw invalidArgument('display_name is required');
    if (displayName.length > MAX_DISPLAY_NAME_LENGTH) {
      throw invalidArgument(`display_name is longer than ${MAX_DISPLAY_NAME_LENGTH} characters`);
    }
  }
  if (draft.description !== undefined && draft.description.length > MAX_DESCRIPTION_LENGTH) {
    throw invalidArgument(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  if (draft.logoUrl !== undefined && draft.logoUrl !== '') {
    if (draft.logoUrl.length > MAX_LOGO_URL_LENGTH || !/^https?:\/\/\S+$/.test(draft.logoUrl)) {
      throw invalidArgument('logo_url must be an http or https URL');
    }
  }
}

function requireActive(state: FunctionState): FunctionRecord {
  if (state.status !== 'active') throw notFound('function not found');
  return state.function;
}

function identity(record: FunctionRecord) {
  return { workspaceSlug: record.workspaceSlug, functionId: record.functionId };
}
