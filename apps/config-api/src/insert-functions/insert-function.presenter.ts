import type { DestinationRecord, InsertFunctionRecord } from '@tributary/config-domain';
import { destinationName } from '@tributary/contracts';
import type { CatalogDestinationDefinition } from '@tributary/destinations';
import { presentSettingValue } from '../destinations/destination.presenter';
import { withMilliseconds } from '../shared/timestamps';

export function insertFunctionName(destination: DestinationRecord, functionId: string): string {
  return `${destinationName(destination)}/insert-functions/${functionId}`;
}

/**
 * An insert function, flat as filters are (docs/functions.md §1): its config lists every setting the
 * function declares, sensitive ones masked; `entry` is the function as a catalog entry.
 */
export function presentInsertFunction(
  destination: DestinationRecord,
  insertFunction: InsertFunctionRecord,
  entry: CatalogDestinationDefinition | undefined,
) {
  const name = insertFunctionName(destination, insertFunction.functionId);
  return {
    name,
    function_id: insertFunction.functionId,
    enabled: insertFunction.enabled,
    config: (entry?.settings ?? []).map((setting) => ({
      name: `${name}/config/${setting.key}`,
      display_name: setting.displayName,
      value: presentSettingValue(
        insertFunction.functionId,
        setting,
        insertFunction.config[setting.key] ?? setting.defaultValue,
      ),
      type: setting.type,
    })),
    create_time: withMilliseconds(insertFunction.createTime),
    update_time: withMilliseconds(insertFunction.updateTime),
  };
}
