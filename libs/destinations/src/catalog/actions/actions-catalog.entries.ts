/**
 * The generated Actions data as catalog entries: Segment's slug and display name, the authentication
 * fields as settings (secrets as `password`), and a `subscriptions` setting (type `mixed`) whose default
 * is the destination's automatic presets.
 */
import type {
  CatalogDestinationDefinition,
  DestinationSettingDefinition,
  JsonValue,
} from '../catalog-entry.types';
import { defineSetting } from '../destination-setting.builder';
import { ACTIONS_DESTINATIONS } from './actions-catalog.generated';
import type { ActionsDestinationData } from './actions-catalog.types';

/** The setting that holds a destination's subscriptions (`[{subscribe, partnerAction, mapping}]`). */
export const SUBSCRIPTIONS_SETTING = 'subscriptions';

const actionsBySlug = new Map(ACTIONS_DESTINATIONS.map((destination) => [destination.slug, destination]));

/** The generated data of an Actions catalog slug, or `undefined` for other slugs. */
export function findActionsDestination(slug: string): ActionsDestinationData | undefined {
  return actionsBySlug.get(slug);
}

export function listActionsDestinations(): readonly ActionsDestinationData[] {
  return ACTIONS_DESTINATIONS;
}

function toCatalogEntry(destination: ActionsDestinationData): CatalogDestinationDefinition {
  const settings: DestinationSettingDefinition[] = destination.settings.map((setting) =>
    defineSetting(setting.key, setting.label, setting.type, {
      required: setting.required,
      ...(setting.default !== undefined && setting.default !== null && { defaultValue: setting.default }),
      ...(setting.choices !== undefined && { selectOptions: setting.choices }),
      ...(setting.description !== undefined && { description: setting.description }),
    }),
  );
  settings.push(
    defineSetting(SUBSCRIPTIONS_SETTING, 'Subscriptions', 'mixed', {
      defaultValue: destination.presets as unknown as JsonValue,
      description:
        'Which messages run which action: a list of {subscribe (FQL), partnerAction, mapping}. ' +
        "Defaults to the destination's presets.",
    }),
  );
  return {
    slug: destination.slug,
    displayName: destination.name,
    description: destination.description,
    website: `https://segment.com/docs/connections/destinations/catalog/${destination.slug}/`,
    status: 'PUBLIC',
    logos: { logo: '', mark: '' },
    components: ['CLOUD'],
    categories: { primary: 'Actions', secondary: '', additional: [] },
    settings,
    capabilities: {
      acceptsHistoricalTimestampsUpToMs: null,
      supportsBatching: Object.values(destination.actions).some((action) => action.batch),
      destinationFiltersApply: true,
    },
  };
}

export const ACTIONS_CATALOG_DESTINATIONS: readonly CatalogDestinationDefinition[] =
  ACTIONS_DESTINATIONS.map(toCatalogEntry);
