import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  ResourceLookup,
} from '@tributary/config-api-access';
import {
  Body,
  Delete,
  Get,
  Inject,
  OnApplicationShutdown,
  Param,
  Patch,
  Post,
  Put,
  Query,
} from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { catalogSlugOf, destinationAggregate, resolveUpdateMask } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  catalogSlugFromName,
  CreateDestinationRequestSchema,
  UpdateDestinationRequestSchema,
} from '@tributary/contracts';
import {
  ActionsAuthenticationTester,
  CatalogDestinationDefinition,
  findCatalogDestination,
  notInCatalogReason,
  EgressGuard,
  parseEgressPolicy,
} from '@tributary/destinations';
import { SecretBox } from '@tributary/auth';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment, slugUnder, sourceName } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { ConfigEntryInput, DestinationConfigMapper, settingDefinitionsOf } from './destination-config';
import { presentDestination } from './destination.presenter';

class CreateDestinationDto extends createZodDto(CreateDestinationRequestSchema) {}
class UpdateDestinationDto extends createZodDto(UpdateDestinationRequestSchema) {}

/** Zero values of a masked-but-absent field (docs/config-api.md §1.6); an empty config merges nothing. */
const DESTINATION_ZERO_VALUES = { enabled: false, connection_mode: 'UNSPECIFIED', config: [] };

@ApiTags('destinations')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations')
export class DestinationsController implements OnApplicationShutdown {
  /** Runs Actions destinations' authentication tests, through the deployment's egress policy. */
  private authenticationTester: ActionsAuthenticationTester;

  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly configMapper: DestinationConfigMapper,
    private readonly quotas: WorkspaceQuotas,
    private readonly secretBox: SecretBox,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    this.authenticationTester = new ActionsAuthenticationTester(egressGuardOptions(environment));
  }

  onApplicationShutdown(): void {
    this.authenticationTester.close();
  }

  /**
   * `POST .../destinations/{dst}:test`: the destination's own authentication test (Actions
   * destinations), with its stored settings: `{status: OK | FAILED | UNSUPPORTED, message}`.
   */
  @Post(':destination/@test')
  async testAuthentication(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
  ) {
    const { destination } = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const result = await this.authenticationTester.test(
      catalogSlugOf(destination),
      this.secretBox.revealAll(destination.config),
    );
    if (!result) {
      throw ConfigApiError.invalidArgument(
        `destination: ${catalogSlugOf(destination)} has no authentication test (only Actions destinations do)`,
      );
    }
    return result;
  }

  @Get()
  list(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Query() query: PageRequest,
  ) {
    const { source } = this.lookup.source(workspaceSlug, sourceSlug);
    const destinations = this.readModel
      .listDestinations(source.sourceId)
      .sort((a, b) => a.destination.destinationSlug.localeCompare(b.destination.destinationSlug));
    const { page, nextPageToken } = paginate(destinations, query);
    return {
      destinations: page.map((view) => presentDestination(view.destination)),
      next_page_token: nextPageToken,
    };
  }

  /** The destination's slug is its catalog slug: a source has at most one destination of each kind. */
  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Body() body: CreateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { source } = this.lookup.source(workspaceSlug, sourceSlug);
    const destinationSlug = slugUnder(
      sourceName(workspaceSlug, sourceSlug),
      'destinations',
      body.destination.name,
      'destination.name',
    );
    const requestedCatalogName = body.destination.catalog_name;
    const catalogEntry = this.requireCatalogEntry(
      requestedCatalogName
        ? (catalogSlugFromName(requestedCatalogName, 'destinations') ?? requestedCatalogName)
        : destinationSlug,
    );
    const sourceId = source.sourceId;
    this.quotas.assertCanAddDestination(workspaceSlug);
    await this.commands.handle(
      destinationAggregate,
      { sourceId, destinationSlug },
      {
        type: 'CreateDestination',
        settings: settingDefinitionsOf(catalogEntry),
        destination: {
          workspaceSlug,
          sourceSlug,
          sourceId,
          destinationSlug,
          catalogSlug: catalogEntry.slug,
          displayName: catalogEntry.displayName,
          connectionMode: body.destination.connection_mode ?? 'CLOUD',
          // Created disabled unless asked otherwise (docs/config-api.md §2.5, D3).
          enabled: body.destination.enabled ?? false,
          config: this.configMapper.toSettingValues(body.destination.config ?? [], catalogEntry),
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return presentDestination(
      this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination,
    );
  }

  @Get(':destination')
  get(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
  ) {
    return presentDestination(
      this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination,
    );
  }

  @Patch(':destination')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Body() body: UpdateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { destination } = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const catalogEntry = this.requireCatalogEntry(catalogSlugOf(destination));
    const changes = resolveUpdateMask(
      'destination',
      body.destination,
      body.update_mask?.paths ?? undefined,
      DESTINATION_ZERO_VALUES,
    );
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug },
      {
        type: 'UpdateDestination',
        settings: settingDefinitionsOf(catalogEntry),
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
                  destination,
                ),
        },
      },
      metadata,
    );
    return presentDestination(
      this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination,
    );
  }

  @Put(':destination')
  replace(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Body() body: UpdateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, sourceSlug, destinationSlug, body, metadata);
  }

  @Delete(':destination')
  async delete(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destination: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const destinationSlug = lastSegment(destination);
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: view.destination.sourceId, destinationSlug },
      { type: 'DeleteDestination' },
      metadata,
    );
    return {};
  }

  private requireCatalogEntry(catalogSlug: string): CatalogDestinationDefinition {
    const catalogEntry = findCatalogDestination(catalogSlug);
    if (!catalogEntry) {
      throw ConfigApiError.invalidArgument(`destination: ${notInCatalogReason(catalogSlug)}`);
    }
    return catalogEntry;
  }
}

function egressGuardOptions(environment: Environment) {
  const policy = parseEgressPolicy(environment.TRIBUTARY_EGRESS, environment.TRIBUTARY_EGRESS_ALLOW);
  return { egressGuard: new EgressGuard(policy) };
}
