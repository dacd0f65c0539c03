import {
  CatalogDestinationDefinition,
  CatalogSourceDefinition,
  findActionsDestination,
  findCatalogDestination,
  findCatalogSource,
  listCatalogDestinations,
  listCatalogSources,
} from '@tributary/destinations';

/**
 * Catalog entries in the Public API's shape (docs/public-api.md, "Catalog"). An entry's `id` is its
 * slug: Tributary's catalog does not record Segment's catalog ids, and every path and `metadataId`
 * takes the slug.
 */
export function publicCatalogSources() {
  return listCatalogSources().map(presentSourceMetadata);
}

export function publicCatalogDestinations() {
  return listCatalogDestinations().map(presentDestinationMetadata);
}

/** The catalog source an id or slug names. */
export function catalogSourceById(id: string): CatalogSourceDefinition | undefined {
  return findCatalogSource(id);
}

export function catalogDestinationById(id: string): CatalogDestinationDefinition | undefined {
  return findCatalogDestination(id);
}

export function presentSourceMetadata(source: CatalogSourceDefinition) {
  return {
    id: source.slug,
    slug: source.slug,
    name: source.displayName,
    description: source.description,
    logos: { default: '' },
    options: [],
    categories: [...source.categories],
    isCloudEventSource: false,
    status: 'PUBLIC',
  };
}

export function presentDestinationMetadata(destination: CatalogDestinationDefinition) {
  const actionsData = findActionsDestination(destination.slug);
  const presets = actionsData?.presets ?? [];
  const { primary, secondary, additional } = destination.categories;
  return {
    id: destination.slug,
    slug: destination.slug,
    name: destination.displayName,
    description: destination.description,
    logos: { default: destination.logos.logo, mark: destination.logos.mark },
    options: destination.settings
      .filter((setting) => !(actionsData && setting.key === 'subscriptions'))
      .map((setting) => ({
        name: setting.key,
        type: setting.type,
        required: setting.required,
        label: setting.displayName,
        ...(setting.description !== undefined && { description: setting.description }),
        ...(setting.defaultValue !== undefined && { defaultValue: setting.defaultValue }),
      })),
    status: destination.status,
    previousNames: [],
    categories: [primary, secondary, ...additional].filter((category) => category !== ''),
    website: destination.website,
    components: [],
    supportedFeatures: {},
    supportedMethods: { track: true, identify: true, page: true, screen: true, group: true, alias: true },
    supportedPlatforms: { browser: false, server: true, mobile: false },
    actions: Object.entries(actionsData?.actions ?? {}).map(([key, action]) => ({
      id: key,
      slug: key,
      name: action.title,
      description: action.title,
      platform: 'CLOUD',
      hidden: false,
      defaultTrigger: presets.find((preset) => preset.partnerAction === key)?.subscribe ?? null,
      fields: Object.entries(action.fields).map(([fieldKey, field], sortOrder) => ({
        id: `${key}.${fieldKey}`,
        sortOrder,
        fieldKey,
        label: fieldKey,
        type: field.type,
        description: '',
        ...(field.default !== undefined && { defaultValue: field.default }),
        required: field.required,
        multiple: field.multiple,
        choices: field.choices ? [...field.choices] : null,
        dynamic: false,
        allowNull: false,
      })),
    })),
    presets: presets.map((preset) => ({
      actionId: preset.partnerAction,
      name: preset.name ?? preset.partnerAction,
      fields: preset.mapping,
      trigger: preset.subscribe,
    })),
    contacts: [],
    partnerOwned: false,
    supportedRegions: [],
    regionEndpoints: [],
  };
}
