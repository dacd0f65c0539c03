import {
  type SchemaConfig,
  type SourceRecord,
  type WorkspaceRecord,
  writeKeysOf,
} from '@tributary/config-domain';
import { catalogSlugFromName, MASKED_SECRET } from '@tributary/contracts';
import { findCatalogSource } from '@tributary/destinations';
import { presentSourceMetadata } from './public-catalog.presenter';

/**
 * SourceV1: the source's id is Tributary's source id; `slug` and `name` are v1beta's slug and display name.
 * `writeKeysVisible`: false for a read-only token (`maySeeSecrets`), which sees each write key as the mask.
 */
export function presentPublicSource(
  source: SourceRecord,
  workspace: WorkspaceRecord,
  writeKeysVisible: boolean,
) {
  const catalogSlug = catalogSlugFromName(source.catalogName, 'sources') ?? source.catalogName;
  const catalogEntry = findCatalogSource(catalogSlug);
  return {
    id: source.sourceId,
    slug: source.sourceSlug,
    name: source.displayName,
    workspaceId: workspace.id,
    enabled: source.enabled ?? true,
    writeKeys: writeKeysVisible ? writeKeysOf(source) : writeKeysOf(source).map(() => MASKED_SECRET),
    metadata: catalogEntry
      ? presentSourceMetadata(catalogEntry)
      : presentSourceMetadata({
          slug: catalogSlug,
          displayName: catalogSlug,
          description: '',
          categories: [],
        }),
    settings: source.settings ?? {},
    labels: (source.labels ?? []).map(
      (label) =>
        workspace.labels?.find((known) => known.key === label.key && known.value === label.value) ?? label,
    ),
  };
}

/** Each Public API source setting and the v1beta schema-config field it is, by group. */
const SCHEMA_SETTINGS = {
  track: {
    allowUnplannedEvents: 'allow_unplanned_track_events',
    allowUnplannedEventProperties: 'allow_unplanned_track_event_properties',
    allowEventOnViolations: 'allow_track_event_on_violations',
    allowPropertiesOnViolations: 'allow_track_properties_on_violations',
    commonEventOnViolations: 'common_track_event_on_violations',
  },
  identify: {
    allowUnplannedTraits: 'allow_unplanned_identify_traits',
    allowTraitsOnViolations: 'allow_identify_traits_on_violations',
    commonEventOnViolations: 'common_identify_event_on_violations',
  },
  group: {
    allowUnplannedTraits: 'allow_unplanned_group_traits',
    allowTraitsOnViolations: 'allow_group_traits_on_violations',
    commonEventOnViolations: 'common_group_event_on_violations',
  },
} as const satisfies Record<string, Record<string, keyof SchemaConfig>>;

type SettingGroup = keyof typeof SCHEMA_SETTINGS;

/**
 * The v1beta schema config regrouped as the Public API's source settings; forwarding targets, which
 * v1beta names by slug, are source ids here (`idOfSlug`).
 */
export function presentSourceSettings(
  schemaConfig: SchemaConfig,
  idOfSlug: (slug: string) => string | undefined,
) {
  const settings: Record<string, unknown> = {};
  for (const group of Object.keys(SCHEMA_SETTINGS) as SettingGroup[]) {
    settings[group] = Object.fromEntries(
      Object.entries(SCHEMA_SETTINGS[group]).map(([name, field]) => [name, schemaConfig[field]]),
    );
  }
  const forwarding = (slug: string) => (slug === '' ? undefined : idOfSlug(slug));
  const violationsTo = forwarding(schemaConfig.forwarding_violations_to);
  const blockedTo = forwarding(schemaConfig.forwarding_blocked_events_to);
  if (violationsTo !== undefined) settings.forwardingViolationsTo = violationsTo;
  if (blockedTo !== undefined) settings.forwardingBlockedEventsTo = blockedTo;
  return settings;
}

/**
 * The schema-config changes a partial Public API settings object asks for; unknown names are
 * ignored, as unknown fields are everywhere in this API. `slugOfId` resolves a forwarding target (a
 * source id, or null/"" to stop forwarding); `undefined` means it names no source of the workspace.
 */
export function schemaConfigChangesOf(
  body: Record<string, unknown>,
  slugOfId: (id: string) => string | undefined,
): { changes: Partial<SchemaConfig> } | { problem: string; field: string } {
  const changes: Record<string, unknown> = {};
  for (const group of Object.keys(SCHEMA_SETTINGS) as SettingGroup[]) {
    const values = body[group];
    if (values === undefined || values === null) continue;
    if (typeof values !== 'object' || Array.isArray(values))
      return { problem: `${group} must be an object`, field: group };
    for (const [name, field] of Object.entries(SCHEMA_SETTINGS[group])) {
      const value = (values as Record<string, unknown>)[name];
      if (value !== undefined) changes[field] = value;
    }
  }
  const targets = [
    ['forwardingViolationsTo', 'forwarding_violations_to'],
    ['forwardingBlockedEventsTo', 'forwarding_blocked_events_to'],
  ] as const;
  for (const [name, field] of targets) {
    const value = body[name];
    if (value === undefined) continue;
    if (value === null || value === '') {
      changes[field] = '';
      continue;
    }
    const slug = typeof value === 'string' ? slugOfId(value) : undefined;
    if (slug === undefined)
      return { problem: `${name} must be the id of a source of this workspace`, field: name };
    changes[field] = slug;
  }
  return { changes: changes as Partial<SchemaConfig> };
}
