import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  DestinationInPath,
  ResourceLookup,
  SourceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Inject, OnApplicationShutdown, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { catalogSlugOf } from '@tributary/config-domain';
import { ConfigReadModel, DestinationView, SourceView } from '@tributary/config-projections';
import { CreateDestinationRequestSchema, UpdateDestinationRequestSchema } from '@tributary/contracts';
import { ActionsAuthenticationTester, EgressGuard, parseEgressPolicy } from '@tributary/destinations';
import { SecretBox } from '@tributary/auth';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { DestinationCommands } from './destination.commands';
import { presentDestination } from './destination.presenter';

class CreateDestinationDto extends createZodDto(CreateDestinationRequestSchema) {}
class UpdateDestinationDto extends createZodDto(UpdateDestinationRequestSchema) {}

/** Destinations of a source over HTTP; what a change does is `DestinationCommands`'. */
@ApiTags('destinations')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations')
export class DestinationsController implements OnApplicationShutdown {
  /** Runs Actions destinations' authentication tests, through the deployment's egress policy. */
  private authenticationTester: ActionsAuthenticationTester;

  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly destinations: DestinationCommands,
    private readonly lookup: ResourceLookup,
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
  async testAuthentication(@DestinationInPath() { destination }: DestinationView) {
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
  list(@SourceInPath() { source }: SourceView, @Query() query: PageRequest) {
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
    @SourceInPath() { source }: SourceView,
    @Body() body: CreateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const destinationSlug = await this.destinations.create(source, body.destination, metadata);
    return presentDestination(
      this.lookup.destination(source.workspaceSlug, source.sourceSlug, destinationSlug).destination,
    );
  }

  @Get(':destination')
  get(@DestinationInPath() { destination }: DestinationView) {
    return presentDestination(destination);
  }

  @Patch(':destination')
  async update(
    @DestinationInPath() { destination }: DestinationView,
    @Body() body: UpdateDestinationDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.destinations.update(destination, body, metadata);
    const { workspaceSlug, sourceSlug, destinationSlug } = destination;
    return presentDestination(
      this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug).destination,
    );
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
}

function egressGuardOptions(environment: Environment) {
  const policy = parseEgressPolicy(environment.TRIBUTARY_EGRESS, environment.TRIBUTARY_EGRESS_ALLOW);
  return { egressGuard: new EgressGuard(policy) };
}
