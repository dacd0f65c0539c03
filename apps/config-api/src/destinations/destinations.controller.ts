import {
  ConfigApiController,
  ConfigApiError,
  GrpcCode,
  ChangeMetadata,
  DestinationInPath,
  ResourceLookup,
  SourceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Inject, OnApplicationShutdown, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { catalogSlugOf, type DestinationRecord } from '@tributary/config-domain';
import { ConfigReadModel, DestinationView, SourceView } from '@tributary/config-projections';
import { CreateDestinationRequestSchema, UpdateDestinationRequestSchema } from '@tributary/contracts';
import { ActionsLane, EgressGuard, findActionsDestination, parseEgressPolicy } from '@tributary/destinations';
import { SecretBox } from '@tributary/auth';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { DestinationCatalog } from './destination-catalog';
import { DestinationCommands } from './destination.commands';
import { presentDestination } from './destination.presenter';

class CreateDestinationDto extends createZodDto(CreateDestinationRequestSchema) {}
class UpdateDestinationDto extends createZodDto(UpdateDestinationRequestSchema) {}

/** Destinations of a source over HTTP; what a change does is `DestinationCommands`'. */
@ApiTags('destinations')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations')
export class DestinationsController implements OnApplicationShutdown {
  /**
   * Runs Actions destinations' authentication tests on a worker thread, off this process's event loop
   * (the destination's code and what it reads are the tenant's choice), through the deployment's egress
   * policy.
   */
  private actionsLane: ActionsLane;
  /** Workspaces with a test under way: one at a time each. */
  private readonly testsUnderWay = new Set<string>();

  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly destinations: DestinationCommands,
    private readonly lookup: ResourceLookup,
    private readonly secretBox: SecretBox,
    private readonly catalog: DestinationCatalog,
    @Inject(ENVIRONMENT) environment: Environment,
  ) {
    this.actionsLane = new ActionsLane({ ...egressGuardOptions(environment), workers: 1 });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.actionsLane.close();
  }

  /**
   * `POST .../destinations/{dst}:test`: the destination's own authentication test (Actions
   * destinations), with its stored settings: `{status: OK | FAILED | UNSUPPORTED, message}`. One test
   * at a time per workspace: another answers 429 while one is under way.
   */
  @Post(':destination/@test')
  async testAuthentication(@DestinationInPath() { destination }: DestinationView) {
    const catalogSlug = catalogSlugOf(destination);
    if (!findActionsDestination(catalogSlug)) {
      throw ConfigApiError.invalidArgument(
        `destination: ${catalogSlug} has no authentication test (only Actions destinations do)`,
      );
    }
    const workspace = destination.workspaceSlug;
    if (this.testsUnderWay.has(workspace)) {
      throw new ConfigApiError(
        429,
        GrpcCode.RESOURCE_EXHAUSTED,
        'an authentication test of this workspace is under way; retry when it has answered',
        { 'retry-after': '1' },
      );
    }
    this.testsUnderWay.add(workspace);
    try {
      return await this.actionsLane.testAuthentication(
        catalogSlug,
        this.secretBox.revealAll(destination.config),
      );
    } finally {
      this.testsUnderWay.delete(workspace);
    }
  }

  @Get()
  list(@SourceInPath() { source }: SourceView, @Query() query: PageRequest) {
    const destinations = this.readModel
      .listDestinations(source.sourceId)
      .sort((a, b) => a.destination.destinationSlug.localeCompare(b.destination.destinationSlug));
    const { page, nextPageToken } = paginate(destinations, query);
    return {
      destinations: page.map((view) => this.present(view.destination)),
      next_page_token: nextPageToken,
    };
  }

  /** The destination's slug is its catalog slug: a source has at most one destination of each kind. */
  @Post()
  async create(
    @SourceInPath() { source }: SourceView,
    @Body() body: CreateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const destinationSlug = await this.destinations.create(source, body.destination, metadata);
    return this.present(
      this.lookup.destination(source.workspaceSlug, source.sourceSlug, destinationSlug).destination,
    );
  }

  @Get(':destination')
  get(@DestinationInPath() { destination }: DestinationView) {
    return this.present(destination);
  }

  @Patch(':destination')
  async update(
    @DestinationInPath() { destination }: DestinationView,
    @Body() body: UpdateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.destinations.update(destination, body, metadata);
    const { workspaceSlug, sourceSlug, destinationSlug } = destination;
    return this.present(this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination);
  }

  @Put(':destination')
  replace(
    @DestinationInPath() view: DestinationView,
    @Body() body: UpdateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(view, body, metadata);
  }

  @Delete(':destination')
  async delete(
    @DestinationInPath({ acceptFullName: true }) { destination }: DestinationView,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.destinations.delete(destination, metadata);
    return {};
  }

  private present(destination: DestinationRecord) {
    return presentDestination(destination, this.catalog.entryOf(destination));
  }
}

function egressGuardOptions(environment: Environment) {
  const policy = parseEgressPolicy(environment.TRIBUTARY_EGRESS, environment.TRIBUTARY_EGRESS_ALLOW);
  return { egressGuard: new EgressGuard(policy) };
}
