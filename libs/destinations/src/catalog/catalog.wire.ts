/**
 * Catalog entries as the Config API sends them (docs/config-api.md §3). Internal fields (defaults, capabilities,
 * descriptions of settings) stay behind; the zod schemas in contracts are strict, so a leak fails tests.
 */
import {
  catalogDestinationName,
  catalogSourceName,
  type CatalogDestination,
  type CatalogDestinationSetting,
  type CatalogSource,
} from '@tributary/contracts';
import type {
  CatalogDestinationDefinition,
  CatalogSourceDefinition,
  DestinationSettingDefinition,
} from './catalog-entry.types';
import { findActionsDestination } from '../segment-actions/actions-catalog.entries';
import type { ActionsDestinationData } from '../segment-actions/actions-catalog.types';

export function toWireCatalogSource(source: CatalogSourceDefinition): CatalogSource {
  return {
    name: catalogSourceName(source.slug),
    display_name: source.displayName,
    description: source.description,
    categories: [...source.categories],
  };
}

export function toWireCatalogDestination(destination: CatalogDestinationDefinition): CatalogDestination {
  return {
    name: catalogDestinationName(destination.slug),
    display_name: destination.displayName,
    description: destination.description,
    website: destination.website,
    type: 'STREAMING',
    status: destination.status,
    logos: { logo: destination.logos.logo, mark: destination.logos.mark },
    components: destination.components.map((type) => ({ type })),
    categories: {
      primary: destination.categories.primary,
      secondary: destination.categories.secondary,
      additional: [...destination.categories.additional],
    },
    settings: destination.settings.map(toWireCatalogDestinationSetting),
    ...actionsOf(findActionsDestination(destination.slug)),
  };
}

/** What a subscription editor needs of an Actions entry, read from the generated data (no code loaded). */
function actionsOf(actions: ActionsDestinationData | undefined): Pick<CatalogDestination, 'actions'> {
  if (!actions) return {};
  return {
    actions: {
      partner_actions: Object.entries(actions.actions).map(([name, action]) => ({
        name,
        display_name: action.title,
        batch: action.batch,
      })),
      presets: actions.presets.map((preset) => ({
        ...(preset.name !== undefined && { name: preset.name }),
        subscribe: preset.subscribe,
        partnerAction: preset.partnerAction,
        mapping: { ...preset.mapping },
      })),
      has_test_authentication: actions.hasTestAuthentication,
    },
  };
}

/**
 * Every validator object is sent in full, with zero values where unused: Go clients decode objects
 * into structs and a full object is what every client can read.
 */
export function toWireCatalogDestinationSetting(
  setting: DestinationSettingDefinition,
): CatalogDestinationSetting {
  return {
    name: setting.key,
    display_name: setting.displayName,
    type: setting.type,
    deprecated: setting.deprecated,
    required: setting.required,
    string_validators: { regexp: setting.pattern ?? '' },
    map_validators: {
      regexp: '',
      min: 0,
      max: 0,
      map_prefix: '',
      select_options: [...(setting.selectOptions ?? [])],
    },
    settings: [],
  };
}
