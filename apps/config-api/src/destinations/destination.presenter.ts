import { catalogSlugOf, DestinationRecord } from '@tributary/config-domain';
import { limitDepth } from '@tributary/config-projections';
import { destinationName, ENCRYPTED_VALUE_PREFIX, MASKED_SECRET, sourceName } from '@tributary/contracts';
import {
  type CatalogDestinationDefinition,
  findCatalogDestination,
  mapSubscriptionSecrets,
  maskUrlCredentials,
  secrecyOfSetting,
} from '@tributary/destinations';
import { withMilliseconds } from '../shared/timestamps';

/**
 * Every setting of the catalog entry, in catalog order, with secrets masked. A destination function's
 * entry is its function's (`DestinationCatalog`): its display name and declared settings.
 */
export function presentDestination(
  destination: DestinationRecord,
  catalogEntry: CatalogDestinationDefinition | undefined = findCatalogDestination(catalogSlugOf(destination)),
) {
  const name = destinationName(destination);
  const catalogSlug = catalogSlugOf(destination);
  const settings = catalogEntry?.settings ?? [];
  return {
    name,
    parent: sourceName(destination),
    display_name: catalogEntry?.displayName ?? catalogSlug,
    catalog_name: `catalog/destinations/${catalogSlug}`,
    enabled: destination.enabled,
    connection_mode: destination.connectionMode,
    config: settings.map((setting) => {
      const value = destination.config[setting.key] ?? setting.defaultValue;
      return {
        name: `${name}/config/${setting.key}`,
        display_name: setting.displayName,
        value: presentSettingValue(catalogSlug, setting, value),
        type: setting.type,
      };
    }),
    create_time: withMilliseconds(destination.createTime),
    update_time: withMilliseconds(destination.updateTime),
  };
}

/** A stored setting value as responses show it: secret parts masked, depth limited. */
export function presentSettingValue(
  catalogSlug: string,
  setting: { readonly key: string; readonly type: string },
  value: unknown,
): unknown {
  return limitDepth(maskedValue(secrecyOfSetting(catalogSlug, setting), value));
}

/** The value with its secret parts masked (`secrecyOfSetting`); values stored before they were secrets too. */
function maskedValue(secrecy: ReturnType<typeof secrecyOfSetting>, value: unknown): unknown {
  switch (secrecy) {
    case undefined:
      return value;
    case 'whole':
      return value !== '' ? MASKED_SECRET : value;
    case 'url-credentials':
      if (typeof value !== 'string') return value;
      return value.startsWith(ENCRYPTED_VALUE_PREFIX)
        ? MASKED_SECRET
        : maskUrlCredentials(value, MASKED_SECRET);
    case 'subscription-headers':
      return mapSubscriptionSecrets(value, () => MASKED_SECRET);
    case 'map-values':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
      return Object.fromEntries(
        Object.entries(value).map(([name, inner]) => [name, inner === '' ? inner : MASKED_SECRET]),
      );
  }
}
