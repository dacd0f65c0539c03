/**
 * Wire shapes of the Config API catalog (`GET /v1beta/catalog/sources`, `/catalog/destinations`),
 * config-api docs/config-api.md §2.3 and §3 "Catalog entries".
 *
 * These describe what Tributary sends, so they are strict: a field that is not on the wire (a default
 * value, a router capability) makes the parse fail instead of leaking to clients.
 */
import { z } from 'zod';

/** A catalog slug: lower-case words joined by single hyphens (`google-analytics`, `http-api`). */
export const CATALOG_SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

const CATALOG_SOURCE_NAME_PATTERN = /^catalog\/sources\/[a-z0-9]+(?:-[a-z0-9]+)*$/;
const CATALOG_DESTINATION_NAME_PATTERN = /^catalog\/destinations\/[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const CATALOG_SOURCES_PREFIX = 'catalog/sources/';
export const CATALOG_DESTINATIONS_PREFIX = 'catalog/destinations/';

export function catalogSourceName(slug: string): string {
  return CATALOG_SOURCES_PREFIX + slug;
}

export function catalogDestinationName(slug: string): string {
  return CATALOG_DESTINATIONS_PREFIX + slug;
}

/**
 * The slug of a catalog resource name (`catalog/sources/javascript` → `javascript`), or `undefined`
 * when the name is not a well-formed name of that kind. Source creation receives `catalog_name` in
 * this form.
 */
export function catalogSlugFromName(name: string, kind: 'sources' | 'destinations'): string | undefined {
  const pattern = kind === 'sources' ? CATALOG_SOURCE_NAME_PATTERN : CATALOG_DESTINATION_NAME_PATTERN;
  if (!pattern.test(name)) return undefined;
  return name.slice(name.lastIndexOf('/') + 1);
}

export const CatalogSourceSchema = z.strictObject({
  name: z.string().regex(CATALOG_SOURCE_NAME_PATTERN, 'must be catalog/sources/<slug>'),
  display_name: z.string().min(1),
  description: z.string(),
  categories: z.array(z.string().min(1)),
});
export type CatalogSource = z.infer<typeof CatalogSourceSchema>;

/** The JSON type of a destination setting's value; also the `type` of a Destination's ConfigEntry. */
export const DESTINATION_SETTING_TYPES = [
  'string',
  'password',
  'number',
  'boolean',
  'select',
  'mixed',
  'list',
  'map',
  'color',
] as const;
export const DestinationSettingTypeSchema = z.enum(DESTINATION_SETTING_TYPES);
export type DestinationSettingType = z.infer<typeof DestinationSettingTypeSchema>;

/** `regexp` is `""` when the setting has no pattern; Go clients decode a missing object as zero values anyway. */
export const StringValidatorsSchema = z.strictObject({
  regexp: z.string(),
});
export type StringValidators = z.infer<typeof StringValidatorsSchema>;

/**
 * The only public client with typed fields (segment-config-client-go) decodes `min`/`max` as integers
 * and `select_options` as a string list; the options of a `select` setting are carried here.
 */
export const MapValidatorsSchema = z.strictObject({
  regexp: z.string(),
  min: z.number().int(),
  max: z.number().int(),
  map_prefix: z.string(),
  select_options: z.array(z.string()),
});
export type MapValidators = z.infer<typeof MapValidatorsSchema>;

export const CatalogDestinationSettingSchema = z.strictObject({
  /** The setting key, e.g. `trackingId`; a ConfigEntry's name ends in `/config/<key>`. */
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'must be a setting key'),
  display_name: z.string().min(1),
  type: DestinationSettingTypeSchema,
  deprecated: z.boolean(),
  required: z.boolean(),
  string_validators: StringValidatorsSchema,
  map_validators: MapValidatorsSchema,
  /**
   * Nested settings. Tributary's settings are flat, so this is always `[]`; the Go client above
   * decodes it as `[]string`, so an empty list is the one value every client accepts.
   */
  settings: z.array(z.string()),
});
export type CatalogDestinationSetting = z.infer<typeof CatalogDestinationSettingSchema>;

export const CatalogDestinationComponentSchema = z.strictObject({
  type: z.enum(['IOS', 'ANDROID', 'CLOUD', 'WEB']),
});
export type CatalogDestinationComponent = z.infer<typeof CatalogDestinationComponentSchema>;

/** An object, not the `string[]` of one TypeScript client: a Go client fails to decode an array (docs/config-api.md §6). */
export const CatalogDestinationCategoriesSchema = z.strictObject({
  primary: z.string().min(1),
  secondary: z.string(),
  additional: z.array(z.string()),
});
export type CatalogDestinationCategories = z.infer<typeof CatalogDestinationCategoriesSchema>;

/** One subscription of an Actions destination, as its `subscriptions` setting holds it. */
export const CatalogActionsSubscriptionSchema = z.strictObject({
  name: z.string().optional(),
  subscribe: z.string(),
  partnerAction: z.string(),
  mapping: z.record(z.string(), z.unknown()),
});
export type CatalogActionsSubscription = z.infer<typeof CatalogActionsSubscriptionSchema>;

/**
 * Tributary's addition, sent only for Segment Actions entries so an editor can offer the actions and
 * start from the presets; clients that do not know it ignore an extra field.
 */
export const CatalogDestinationActionsSchema = z.strictObject({
  partner_actions: z.array(
    z.strictObject({
      name: z.string().min(1),
      display_name: z.string(),
      /** The action sends batches when a subscription's mapping sets `enable_batching: true`. */
      batch: z.boolean(),
    }),
  ),
  /** The automatic presets: the default of the `subscriptions` setting. */
  presets: z.array(CatalogActionsSubscriptionSchema),
  /** The destination has an authentication test (`POST .../destinations/{dst}:test`). */
  has_test_authentication: z.boolean(),
});
export type CatalogDestinationActions = z.infer<typeof CatalogDestinationActionsSchema>;

export const CatalogDestinationSchema = z.strictObject({
  name: z.string().regex(CATALOG_DESTINATION_NAME_PATTERN, 'must be catalog/destinations/<slug>'),
  display_name: z.string().min(1),
  description: z.string(),
  website: z.url(),
  type: z.literal('STREAMING'),
  status: z.enum(['PUBLIC', 'PRIVATE']),
  logos: z.strictObject({ logo: z.string(), mark: z.string() }),
  components: z.array(CatalogDestinationComponentSchema).min(1),
  categories: CatalogDestinationCategoriesSchema,
  settings: z.array(CatalogDestinationSettingSchema),
  actions: CatalogDestinationActionsSchema.optional(),
});
export type CatalogDestination = z.infer<typeof CatalogDestinationSchema>;

/** `GET /catalog/sources`. The whole catalog fits one page, so `next_page_token` is `""`. */
export const CatalogSourceListResponseSchema = z.strictObject({
  sources: z.array(CatalogSourceSchema),
  next_page_token: z.string(),
});
export type CatalogSourceListResponse = z.infer<typeof CatalogSourceListResponseSchema>;

/** `GET /catalog/destinations`. */
export const CatalogDestinationListResponseSchema = z.strictObject({
  destinations: z.array(CatalogDestinationSchema),
  next_page_token: z.string(),
});
export type CatalogDestinationListResponse = z.infer<typeof CatalogDestinationListResponseSchema>;
