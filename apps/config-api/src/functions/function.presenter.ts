import type { FunctionSettingDeclaration, FunctionVersionRecord } from '@tributary/config-domain';
import type { FunctionView } from '@tributary/config-projections';
import { functionName } from '@tributary/contracts';
import { withMilliseconds } from '../shared/timestamps';

/** Segment's only buildpack; echoed, never read. */
export const FUNCTION_BUILDPACK = 'boreal';

/**
 * The Config API's `Function` (docs/functions.md §1). `created_at` is what Segment's clients read;
 * `create_time` and `update_time` are the names every other v1beta resource uses.
 */
export function presentFunction(view: FunctionView) {
  const fn = view.function;
  return {
    name: functionName(fn),
    id: fn.functionId,
    workspace_id: fn.workspaceId,
    type: fn.type,
    display_name: fn.displayName,
    description: fn.description,
    logo_url: fn.logoUrl,
    buildpack: FUNCTION_BUILDPACK,
    code: fn.code,
    settings: fn.settings.map(presentSetting),
    version: fn.version,
    deployed_version: fn.deployedVersion,
    created_at: withMilliseconds(fn.createTime),
    created_by: fn.createdBy,
    create_time: withMilliseconds(fn.createTime),
    update_time: withMilliseconds(fn.updateTime),
    deploy_time: withMilliseconds(fn.deployTime),
  };
}

export function presentSetting(setting: FunctionSettingDeclaration) {
  return {
    name: setting.name,
    label: setting.label,
    type: setting.type,
    description: setting.description,
    required: setting.required,
    sensitive: setting.sensitive,
  };
}

/** A version in a list; one version read alone adds its code and settings. */
export function presentFunctionVersion(
  view: FunctionView,
  version: FunctionVersionRecord,
  options: { withCode: boolean },
) {
  return {
    name: `${functionName(view.function)}/versions/${version.version}`,
    version: version.version,
    create_time: withMilliseconds(version.createTime),
    created_by: version.createdBy,
    deployed: version.version === view.function.deployedVersion,
    ...(options.withCode && { code: version.code, settings: version.settings.map(presentSetting) }),
  };
}
