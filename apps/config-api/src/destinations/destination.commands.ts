import { Injectable } from '@nestjs/common';
import {
  destinationAggregate,
  DestinationRecord,
  destinationSecretsOwner,
  resolveUpdateMask,
  SourceRecord,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import {
  type CreateDestinationRequest,
  sourceName,
  type UpdateDestinationRequest,
} from '@tributary/contracts';
import { isFunctionId } from '@tributary/destinations';
import type { EventMetadata } from '@tributary/event-store';
import { slugUnder } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { catalogSlugOfName, DestinationCatalog } from './destination-catalog';
import { ConfigEntryInput, DestinationConfigMapper, settingDefinitionsOf } from './destination-config';

/** Zero values of a masked-but-absent field (docs/config-api.md §1.6); an empty config merges nothing. */
const DESTINATION_ZERO_VALUES = { enabled: false, connection_mode: 'UNSPECIFIED', config: [] };

/**
 * The destination use cases of the Config API, apart from HTTP: the slug read from the name, the
 * catalog entry it names, the config entries turned into stored (and encrypted) setting values, and
 * what an update mask changes. Each ends in one command of the destination's aggregate; its caller
 * reads the result back from the read model.
 */
@Injectable()
export class DestinationCommands {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly configMapper: DestinationConfigMapper,
    private readonly quotas: WorkspaceQuotas,
    private readonly catalog: DestinationCatalog,
  ) {}

  /**
   * Creates the destination named in the request on the source and answers its slug. The slug is its
   * catalog slug unless `catalog_name` names another entry: a source has at most one of each kind. A
   * slug that is the id of one of the workspace's destination functions makes an instance of it.
   */
  async create(
    source: SourceRecord,
    request: CreateDestinationRequest['destination'],
    metadata: EventMetadata,
    displayName?: string,
  ): Promise<string> {
    const { workspaceSlug, sourceSlug, sourceId } = source;
    const destinationSlug = slugUnder(sourceName(source), 'destinations', request.name, 'destination.name');
    const requestedCatalogName = request.catalog_name;
    const catalogEntry = this.catalog.require(
      workspaceSlug,
      requestedCatalogName ? catalogSlugOfName(requestedCatalogName, 'destinations') : destinationSlug,
    );
    this.quotas.assertCanAddDestination(workspaceSlug);
    this.quotas.assertWithinConfigBytes(workspaceSlug, request);
    await this.commands.handle(
      destinationAggregate,
      { sourceId, destinationSlug },
      {
        type: 'CreateDestination',
        settings: settingDefinitionsOf(catalogEntry),
        requiredWhenDisabled: isFunctionId(catalogEntry.slug),
        destination: {
          workspaceSlug,
          sourceSlug,
          sourceId,
          destinationSlug,
          catalogSlug: catalogEntry.slug,
          displayName: displayName ?? catalogEntry.displayName,
          connectionMode: request.connection_mode ?? 'CLOUD',
          // Created disabled unless asked otherwise (docs/config-api.md §2.5, D3).
          enabled: request.enabled ?? false,
          config: this.configMapper.toSettingValues(
            request.config ?? [],
            catalogEntry,
            destinationSecretsOwner({ sourceId, destinationSlug }),
          ),
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return destinationSlug;
  }

  /** Changes what the update mask names; config entries merge into the stored ones. */
  async update(
    destination: DestinationRecord,
    body: UpdateDestinationRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const catalogEntry = this.catalog.requireEntryOf(destination);
    const changes = resolveUpdateMask(
      'destination',
      body.destination,
      body.update_mask?.paths ?? undefined,
      DESTINATION_ZERO_VALUES,
    );
    this.quotas.assertWithinConfigBytes(destination.workspaceSlug, changes, destination);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      {
        type: 'UpdateDestination',
        settings: settingDefinitionsOf(catalogEntry),
        requiredWhenDisabled: isFunctionId(catalogEntry.slug),
        now: metadata.time,
        changes: {
          enabled: changes.enabled as boolean | undefined,
          connectionMode: changes.connection_mode as 'UNSPECIFIED' | 'CLOUD' | 'DEVICE' | undefined,
          config:
            changes.config === undefined
              ? undefined
              : this.configMapper.toSettingValues(
                  changes.config as ConfigEntryInput[],
                  catalogEntry,
                  destinationSecretsOwner(destination),
                  destination,
                ),
        },
      },
      metadata,
    );
  }

  /**
   * The Public API's change: its `name`, `enabled`, and config entries merged into the stored ones
   * (an entry whose value is null takes the setting's empty value).
   */
  async change(
    destination: DestinationRecord,
    changes: { displayName?: string; enabled?: boolean; config?: ConfigEntryInput[] },
    metadata: EventMetadata,
  ): Promise<void> {
    const catalogEntry = this.catalog.requireEntryOf(destination);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      {
        type: 'UpdateDestination',
        settings: settingDefinitionsOf(catalogEntry),
        requiredWhenDisabled: isFunctionId(catalogEntry.slug),
        now: metadata.time,
        changes: {
          displayName: changes.displayName,
          enabled: changes.enabled,
          config:
            changes.config === undefined
              ? undefined
              : this.configMapper.toSettingValues(
                  changes.config,
                  catalogEntry,
                  destinationSecretsOwner(destination),
                  destination,
                ),
        },
      },
      metadata,
    );
  }

  async delete(destination: DestinationRecord, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'DeleteDestination' },
      metadata,
    );
  }
}
