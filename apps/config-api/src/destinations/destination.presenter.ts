import { catalogSlugOf, DestinationRecord } from '@tributary/config-domain';
import { limitDepth } from '@tributary/config-projections';
import { MASKED_SECRET } from '@tributary/contracts';
import { findCatalogDestination } from '@tributary/destinations';
import { sourceName } from '../shared/resource-names';
import { withMilliseconds } from '../shared/timestamps';

export const destinationResourceName = (destination: DestinationRecord) =>
  `${sourceName(destination.workspaceSlug, destination.sourceSlug)}/destinations/${destination.destinationSlug}`;

/** Every setting of the catalog entry, in catalog order, with secrets masked. */
export function presentDestination(destination: DestinationRecord) {
  const name = destinationResourceName(destination);
  const catalogSlug = catalogSlugOf(destination);
  const catalogEntry = findCatalogDestination(catalogSlug);
  const settings = catalogEntry?.settings ?? [];
  return {
    name,
    parent: sourceName(destination.workspaceSlug, destination.sourceSlug),
    display_name: catalogEntry?.displayName ?? catalogSlug,
    catalog_name: `catalog/destinations/${catalogSlug}`,
    enabled: destination.enabled,
    connection_mode: destination.connectionMode,
    config: settings.map((setting) => {
      const value = destination.config[setting.key] ?? setting.defaultValue;
      return {
        name: `${name}/config/${setting.key}`,
        display_name: setting.displayName,
        value: setting.type === 'password' && value !== '' ? MASKED_SECRET : limitDepth(value),
        type: setting.type,
      };
    }),
    create_time: withMilliseconds(destination.createTime),
    update_time: withMilliseconds(destination.updateTime),
  };
}
