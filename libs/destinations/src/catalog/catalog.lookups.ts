/**
 * Lookups over the built-in catalog: the sources' data, and the catalog entry of every destination
 * definition, in the definitions' order. The data is frozen at load, so no caller can change the
 * catalog for everyone else by mutating what a lookup returned.
 */
import { DESTINATION_DEFINITIONS } from '../definitions';
import { RETIRED_CATALOG_DESTINATIONS } from './retired-destinations.data';
import { CATALOG_SOURCES } from './catalog-sources.data';
import type {
  CatalogDestinationDefinition,
  CatalogSourceDefinition,
  DestinationSettingDefault,
  JsonValue,
} from './catalog-entry.types';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const sources: readonly CatalogSourceDefinition[] = deepFreeze(CATALOG_SOURCES);
const destinations: readonly CatalogDestinationDefinition[] = deepFreeze(
  DESTINATION_DEFINITIONS.map((definition) => definition.catalog),
);
const sourcesBySlug = new Map(sources.map((source) => [source.slug, source]));
const destinationsBySlug = new Map(destinations.map((destination) => [destination.slug, destination]));

/** All catalog sources, in catalog order. */
export function listCatalogSources(): readonly CatalogSourceDefinition[] {
  return sources;
}

/** All catalog destinations, in catalog order. */
export function listCatalogDestinations(): readonly CatalogDestinationDefinition[] {
  return destinations;
}

export function findCatalogSource(slug: string): CatalogSourceDefinition | undefined {
  return sourcesBySlug.get(slug);
}

export function findCatalogDestination(slug: string): CatalogDestinationDefinition | undefined {
  return destinationsBySlug.get(slug);
}

/**
 * Every setting of a catalog destination with its default value, in catalog order: what a new
 * destination's config holds before the create request's entries are merged in (docs/config-api.md §2.5).
 * `undefined` for an unknown slug. Values are copies, safe to change.
 */
export function defaultConfigFor(slug: string): DestinationSettingDefault[] | undefined {
  const destination = destinationsBySlug.get(slug);
  if (!destination) return undefined;
  return destination.settings.map((setting) => ({
    key: setting.key,
    displayName: setting.displayName,
    type: setting.type,
    value: structuredClone(setting.defaultValue) as JsonValue,
  }));
}

/**
 * The keys of required settings that `config` leaves unset: absent, `null`, `""`, or an empty list or
 * map. Creating a destination this way is allowed (it starts disabled); enabling it is not.
 */
export function missingRequiredSettings(
  destination: CatalogDestinationDefinition,
  config: Readonly<Record<string, unknown>>,
): string[] {
  return destination.settings
    .filter((setting) => setting.required && isUnset(config[setting.key]))
    .map((setting) => setting.key);
}

function isUnset(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

/**
 * Why `slug` names no catalog destination, for a 400: a retired entry names its Actions replacement.
 */
export function notInCatalogReason(slug: string): string {
  if (Object.hasOwn(RETIRED_CATALOG_DESTINATIONS, slug)) {
    const replacement = RETIRED_CATALOG_DESTINATIONS[slug];
    const instead = replacement
      ? `use "${replacement}" (${findCatalogDestination(replacement)?.displayName ?? replacement}) instead`
      : 'use "webhooks" to forward messages instead';
    return `"${slug}" is no longer a catalog destination, since Tributary cannot deliver to it; ${instead}`;
  }
  return `"${slug}" is not a catalog destination (see GET /v1beta/catalog/destinations)`;
}
