import type {
  FunctionSettingDeclaration,
  FunctionSettingType,
  FunctionVersionRecord,
} from '@tributary/config-domain';
import type { FunctionView } from '@tributary/config-projections';
import { BATCH_MAX_MESSAGES, declaredEntries } from '@tributary/functions';
import { withMilliseconds } from '../shared/timestamps';

const PUBLIC_SETTING_TYPES: Readonly<Record<FunctionSettingType, string>> = {
  string: 'STRING',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  'text-map': 'TEXT_MAP',
};

/** FunctionSettingV1: types by their upper-case Public names. */
export function presentPublicFunctionSetting(setting: FunctionSettingDeclaration) {
  return {
    name: setting.name,
    label: setting.label,
    description: setting.description,
    type: PUBLIC_SETTING_TYPES[setting.type],
    required: setting.required,
    sensitive: setting.sensitive,
  };
}

/** ListFunctionItemV1: a function without its code. `catalogId` is what an instance names. */
export function presentPublicFunctionListItem({ function: fn }: FunctionView) {
  return {
    id: fn.functionId,
    resourceType: fn.type,
    createdAt: withMilliseconds(fn.createTime),
    createdBy: fn.createdBy,
    displayName: fn.displayName,
    description: fn.description,
    logoUrl: fn.logoUrl,
    catalogId: fn.functionId,
  };
}

/**
 * FunctionV1: the latest version's code and settings; `isLatestVersion` when it is the deployed one;
 * `batchMaxCount`, the most messages one `onBatch` call is given when that code declares it, else 0.
 */
export function presentPublicFunction(view: FunctionView) {
  const fn = view.function;
  return {
    ...presentPublicFunctionListItem(view),
    code: fn.code,
    deployedAt: withMilliseconds(fn.deployTime),
    settings: fn.settings.map(presentPublicFunctionSetting),
    isLatestVersion: fn.deployedVersion === fn.version,
    batchMaxCount: declaredEntries(fn.type, fn.code).includes('onBatch') ? BATCH_MAX_MESSAGES : 0,
  };
}

/** Version: its number as the id, as the restore names it back. */
export function presentPublicFunctionVersion(view: FunctionView, version: FunctionVersionRecord) {
  const deployed = version.version === view.function.deployedVersion;
  return {
    id: String(version.version),
    author: version.createdBy,
    code: version.code,
    isDeployed: deployed,
    createdAt: withMilliseconds(version.createTime),
    updatedAt: withMilliseconds(version.createTime),
    ...(deployed && { deployedAt: withMilliseconds(view.function.deployTime) }),
  };
}
