import { catalogSlugOf, DestinationRecord } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import {
  type CatalogDestinationDefinition,
  findActionsDestination,
  findCatalogDestination,
} from '@tributary/destinations';
import { presentDestination } from '../destinations/destination.presenter';
import { PUBLIC_MASK } from './public-api-input';
import { publicDestinationId } from './public-api-resources';
import { presentDestinationMetadata } from './public-catalog.presenter';

/**
 * DestinationV1. Its settings are v1beta's config values as a flat map, secrets masked with the Public
 * API's mask; settings without a value are left out, and so is an Actions destination's
 * `subscriptions`, which are a resource of their own here.
 */
export function presentPublicDestination(
  destination: DestinationRecord,
  catalogEntry: CatalogDestinationDefinition | undefined = findCatalogDestination(catalogSlugOf(destination)),
) {
  const catalogSlug = catalogSlugOf(destination);
  const isActions = findActionsDestination(catalogSlug) !== undefined;
  const settings: Record<string, unknown> = {};
  for (const entry of presentDestination(destination, catalogEntry).config) {
    const key = entry.name.slice(entry.name.lastIndexOf('/config/') + '/config/'.length);
    if (isActions && key === 'subscriptions') continue;
    if (isEmpty(entry.value)) continue;
    settings[key] = withPublicMask(entry.value);
  }
  return {
    id: publicDestinationId(destination),
    name: destination.displayName,
    enabled: destination.enabled,
    sourceId: destination.sourceId,
    metadata: catalogEntry
      ? presentDestinationMetadata(catalogEntry)
      : { id: catalogSlug, slug: catalogSlug },
    settings,
  };
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/** v1beta's mask in a masked value (whole, in a URL's credentials, in a map's values) becomes this API's. */
export function withPublicMask(value: unknown): unknown {
  if (typeof value === 'string') return value.split(MASKED_SECRET).join(PUBLIC_MASK);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withPublicMask(inner)]));
  }
  return value;
}
