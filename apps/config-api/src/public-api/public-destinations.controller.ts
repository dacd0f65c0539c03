import { Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ChangeMetadata } from '@tributary/config-api-access';
import { catalogSlugOf, DestinationRecord, type WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  CatalogDestinationDefinition,
  findActionsDestination,
  isFunctionId,
  secrecyOfSetting,
} from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { MASKED_SECRET } from '@tributary/contracts';
import { ConfigEntryInput } from '../destinations/destination-config';
import { DestinationCommands } from '../destinations/destination.commands';
import { DestinationCatalog } from '../destinations/destination-catalog';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { optionalBoolean, optionalString, requiredString, settingsMap } from './public-api-input';
import { paginatePublic, type PublicQuery } from './public-api-query';
import { PublicApiResources } from './public-api-resources';
import { catalogDestinationById } from './public-catalog.presenter';
import { presentPublicDestination } from './public-destination.presenter';

/**
 * Destinations (docs/public-api.md, "Destinations"): v1beta's destinations, several instances of one
 * catalog entry on a source included. The first instance of an entry on a source has the catalog slug
 * as its v1beta slug, the next ones `{slug}-2`, `{slug}-3`, ...
 */
@ApiTags('Destinations')
@PublicApiController('destinations')
export class PublicDestinationsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly destinations: DestinationCommands,
    private readonly resources: PublicApiResources,
    private readonly catalog: DestinationCatalog,
  ) {}

  @Get()
  list(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    const { items, pagination } = paginatePublic(this.resources.destinations(workspace), query);
    return {
      data: {
        destinations: items.map(({ destination }) => this.present(destination)),
        pagination,
      },
    };
  }

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const sourceId = requiredString(body, 'sourceId');
    const metadataId = requiredString(body, 'metadataId');
    // A destination function of the workspace is an entry of its own catalog (cross-spec-decisions.md §2).
    const catalogEntry = isFunctionId(metadataId)
      ? this.catalog.functionEntry(workspace.slug, metadataId, 'DESTINATION')
      : catalogDestinationById(metadataId);
    if (!catalogEntry)
      throw PublicApiError.validation(`metadataId "${metadataId}" is not in the catalog`, 'metadataId');
    const source = this.resources.source(workspace, sourceId).source;
    const name = optionalString(body, 'name');
    const enabled = optionalBoolean(body, 'enabled') ?? false;
    const settings = body.settings === undefined || body.settings === null ? {} : settingsMap(body.settings);
    const missing = catalogEntry.settings.find(
      (setting) =>
        setting.required &&
        !(findActionsDestination(catalogEntry.slug) && setting.key === 'subscriptions') &&
        (settings[setting.key] === undefined ||
          settings[setting.key] === null ||
          settings[setting.key] === ''),
    );
    if (missing) {
      throw PublicApiError.validation(`settings.${missing.key} is required`, `settings.${missing.key}`);
    }
    const config = configEntriesOf(settings, catalogEntry);
    // Created here, an Actions destination has no subscriptions: clients declare each one, and presets
    // added on top would deliver twice.
    if (findActionsDestination(catalogEntry.slug)) config.push({ name: 'subscriptions', value: [] });
    const destinationSlug = await this.destinations.create(
      source,
      {
        name: this.freeSlug(source.sourceId, catalogEntry.slug),
        catalog_name: `catalog/destinations/${catalogEntry.slug}`,
        enabled,
        config,
      },
      metadata,
      name,
    );
    const view = this.readModel.destination(source.sourceId, destinationSlug)!;
    return { data: { destination: this.present(view.destination) } };
  }

  @Get(':id')
  get(@PublicWorkspace() workspace: WorkspaceRecord, @Param('id') id: string) {
    return {
      data: { destination: this.present(this.resources.destination(workspace, id).destination) },
    };
  }

  @Patch(':id')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.resources.destination(workspace, id);
    const catalogEntry = this.catalog.entryOf(destination);
    if (!catalogEntry)
      throw PublicApiError.validation(`${catalogSlugOf(destination)} is no longer in the catalog`);
    const displayName = optionalString(body, 'name');
    const enabled = optionalBoolean(body, 'enabled');
    const settings =
      body.settings === undefined || body.settings === null ? undefined : settingsMap(body.settings);
    await this.destinations.change(
      destination,
      {
        ...(displayName !== undefined && { displayName }),
        ...(enabled !== undefined && { enabled }),
        ...(settings && { config: configEntriesOf(settings, catalogEntry, destination) }),
      },
      metadata,
    );
    return { data: { destination: this.present(this.reread(destination)) } };
  }

  @Delete(':id')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.resources.destination(workspace, id);
    await this.destinations.delete(destination, metadata);
    return { data: { status: 'SUCCESS' } };
  }

  /** The catalog slug if the source has no instance of it yet, else the first free `{slug}-{n}`. */
  private freeSlug(sourceId: string, catalogSlug: string): string {
    if (!this.readModel.destination(sourceId, catalogSlug)) return catalogSlug;
    for (let n = 2; ; n += 1) {
      if (!this.readModel.destination(sourceId, `${catalogSlug}-${n}`)) return `${catalogSlug}-${n}`;
    }
  }

  private present(destination: DestinationRecord) {
    return presentPublicDestination(destination, this.catalog.entryOf(destination));
  }

  private reread(destination: DestinationRecord): DestinationRecord {
    return this.readModel.destination(destination.sourceId, destination.destinationSlug)!.destination;
  }
}

/**
 * A settings map as v1beta config entries: each key must be a setting of the entry (422 naming it);
 * an Actions destination's `subscriptions` is not a setting here; a secret sent back masked (any
 * value containing the Public API's bullet) keeps the stored value.
 */
export function configEntriesOf(
  settings: Record<string, unknown>,
  catalogEntry: CatalogDestinationDefinition,
  current?: Pick<DestinationRecord, 'config'>,
): (ConfigEntryInput & Record<string, unknown>)[] {
  const isActions = findActionsDestination(catalogEntry.slug) !== undefined;
  return Object.entries(settings).map(([key, value]) => {
    const setting = catalogEntry.settings.find((candidate) => candidate.key === key);
    if (!setting || (isActions && key === 'subscriptions')) {
      throw PublicApiError.validation(`"${key}" is not a setting of ${catalogEntry.slug}`, `settings.${key}`);
    }
    const secret = secrecyOfSetting(catalogEntry.slug, setting) !== undefined;
    return { name: key, value: secret ? withV1betaMask(value, current !== undefined) : value };
  });
}

function withV1betaMask(value: unknown, hasStored: boolean): unknown {
  if (!hasStored) return value;
  if (typeof value === 'string' && value.includes('\u2022')) return MASKED_SECRET;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        typeof inner === 'string' && inner.includes('\u2022') ? MASKED_SECRET : inner,
      ]),
    );
  }
  return value;
}
