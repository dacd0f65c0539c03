import type { FunctionKind } from '@tributary/functions';

/** The three kinds of function (`type` on both APIs): the runner's own word, as a type only. */
export type { FunctionKind };

export const FUNCTION_KINDS: readonly FunctionKind[] = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'];

/** The prefix of each kind's ids (docs/functions.md §1). */
export const FUNCTION_ID_PREFIXES: Readonly<Record<FunctionKind, string>> = {
  SOURCE: 'sfn_',
  DESTINATION: 'dfn_',
  INSERT_DESTINATION: 'ifnd_',
};

/** How a declared setting is given a value on each instance (docs/functions.md §2). */
export type FunctionSettingType = 'string' | 'boolean' | 'array' | 'text-map';

export interface FunctionSettingDeclaration {
  /** `^[A-Za-z][A-Za-z0-9_]{0,63}$`, unique within the function. */
  name: string;
  label: string;
  type: FunctionSettingType;
  description: string;
  /** An instance without a value for it is refused. */
  required: boolean;
  /** Only for `string`: the instance's value is stored encrypted and shown masked. */
  sensitive: boolean;
}

/** One saved version: code and declarations as they were written. Code is not secret. */
export interface FunctionVersionRecord {
  version: number;
  code: string;
  settings: FunctionSettingDeclaration[];
  createTime: string;
  createdBy: string;
}

export interface FunctionRecord {
  /** `sfn_`, `dfn_` or `ifnd_` and a 27-character KSUID. */
  functionId: string;
  workspaceId: string;
  workspaceSlug: string;
  type: FunctionKind;
  displayName: string;
  description: string;
  logoUrl: string;
  /** The latest version's. */
  settings: FunctionSettingDeclaration[];
  /** The latest version's. */
  code: string;
  /** The latest version. */
  version: number;
  /** The version instances run. */
  deployedVersion: number;
  /** Every version, oldest first. */
  versions: FunctionVersionRecord[];
  createTime: string;
  createdBy: string;
  updateTime: string;
  deployTime: string;
}

/** What describes a function apart from its code: changed without a new version. */
export type FunctionDescriptionChanges = Partial<
  Pick<FunctionRecord, 'displayName' | 'description' | 'logoUrl'>
>;

type FunctionIdentity = { workspaceSlug: string; functionId: string };

export type FunctionEvent =
  /** Version 1 is saved and deployed at once, so an instance can be made right after. */
  | {
      type: 'FunctionCreated';
      data: FunctionIdentity & {
        workspaceId: string;
        type: FunctionKind;
        displayName: string;
        description: string;
        logoUrl: string;
        code: string;
        settings: FunctionSettingDeclaration[];
        createTime: string;
        createdBy: string;
      };
    }
  /** `version` is present when the code or the settings were written: a new version, not deployed. */
  | {
      type: 'FunctionUpdated';
      data: FunctionIdentity & {
        changes: FunctionDescriptionChanges;
        version?: FunctionVersionRecord;
        updateTime: string;
      };
    }
  | { type: 'FunctionDeployed'; data: FunctionIdentity & { deployedVersion: number; deployTime: string } }
  | { type: 'FunctionDeleted'; data: FunctionIdentity };
