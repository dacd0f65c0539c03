/**
 * Tributary's own view of a catalog entry: the wire fields in camelCase plus what only Tributary needs
 * (default values, router capabilities). `toWireCatalogDestination()` turns one into the Config API shape.
 */
import type {
  CatalogDestinationCategories,
  CatalogDestinationComponent,
  DestinationSettingType,
} from '@tributary/contracts';

/** Any JSON value; a setting's value is stored and sent as raw JSON of its type. */
export type JsonValue =
  string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export interface CatalogSourceDefinition {
  readonly slug: string;
  readonly displayName: string;
  readonly description: string;
  readonly categories: readonly string[];
}

export interface DestinationSettingDefinition {
  /** The setting key (`trackingId`); a ConfigEntry is named `…/destinations/<slug>/config/<key>`. */
  readonly key: string;
  readonly displayName: string;
  readonly type: DestinationSettingType;
  readonly required: boolean;
  readonly deprecated: boolean;
  /**
   * The value a new destination gets when the create request leaves the setting out. Internal: no
   * client reads a default from the catalog, and the create response shows it as the entry's value.
   * A required setting's default is its empty value, so enabling without setting it can be refused.
   */
  readonly defaultValue: JsonValue;
  /** Sent as `string_validators.regexp`; applied to non-empty string values. */
  readonly pattern?: string;
  /**
   * A further check of non-empty string values that match the pattern, for what a regular expression
   * says badly (a PostgreSQL system schema): why the value is refused, or `null`. Not on the wire.
   */
  readonly refusedValueReason?: (value: string) => string | null;
  /** The allowed values of a `select` setting; sent as `map_validators.select_options`. */
  readonly selectOptions?: readonly string[];
  /** Why the setting exists, for documentation; not on the wire. */
  readonly description?: string;
}

/**
 * What the router needs to know about a destination beyond its settings. Never on the wire. (Whether it
 * gathers messages into calls is the definition's `gathering`.)
 */
export interface DestinationCapabilities {
  /**
   * The oldest message timestamp, as an age in milliseconds at delivery time, that the vendor still
   * accepts; older messages are filtered instead of failing at the vendor. `null`: any age.
   */
  readonly acceptsHistoricalTimestampsUpToMs: number | null;
  /** Destination filters run for this destination. Segment skips them for warehouses and S3 (docs/config-api.md D7). */
  readonly destinationFiltersApply: boolean;
}

export interface CatalogDestinationDefinition {
  readonly slug: string;
  readonly displayName: string;
  readonly description: string;
  readonly website: string;
  readonly status: 'PUBLIC' | 'PRIVATE';
  readonly logos: { readonly logo: string; readonly mark: string };
  readonly components: readonly CatalogDestinationComponent['type'][];
  readonly categories: Readonly<Omit<CatalogDestinationCategories, 'additional'>> & {
    readonly additional: readonly string[];
  };
  readonly settings: readonly DestinationSettingDefinition[];
  readonly capabilities: DestinationCapabilities;
}

/** One setting of a new destination, filled with its catalog default. */
export interface DestinationSettingDefault {
  readonly key: string;
  readonly displayName: string;
  readonly type: DestinationSettingType;
  readonly value: JsonValue;
}
