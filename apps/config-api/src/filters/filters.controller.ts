import {
  ChangeMetadata,
  ConfigApiController,
  ConfigApiError,
  DestinationInPath,
  ResourceLookup,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { DestinationRecord } from '@tributary/config-domain';
import { DestinationView } from '@tributary/config-projections';
import { FilterRequestSchema } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { FilterCommands } from './filter.commands';
import { presentFilter } from './filter.presenter';

class FilterRequestDto extends createZodDto(FilterRequestSchema) {}

/** A destination's filters over HTTP; what a change does is `FilterCommands`'. */
@ApiTags('destination filters')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/filters')
export class FiltersController {
  constructor(
    private readonly filters: FilterCommands,
    private readonly lookup: ResourceLookup,
  ) {}

  @Get()
  list(@DestinationInPath() view: DestinationView, @Query() query: PageRequest) {
    const { page, nextPageToken } = paginate(view.filters, query);
    return {
      filters: page.map((filter) => presentFilter(view.destination, filter)),
      next_page_token: nextPageToken,
    };
  }

  @Post()
  async create(
    @DestinationInPath() view: DestinationView,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const filterId = await this.filters.create(view, body.filter, metadata);
    return this.presentCurrentFilter(view.destination, filterId);
  }

  @Get(':filter')
  get(@DestinationInPath() view: DestinationView, @Param('filter') filterId: string) {
    return presentFilterOf(view, filterId);
  }

  @Patch(':filter')
  async update(
    @DestinationInPath() { destination }: DestinationView,
    @Param('filter') filterId: string,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.filters.update(destination, filterId, body, metadata);
    return this.presentCurrentFilter(destination, filterId);
  }

  @Put(':filter')
  replace(
    @DestinationInPath() view: DestinationView,
    @Param('filter') filterId: string,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(view, filterId, body, metadata);
  }

  @Delete(':filter')
  async delete(
    @DestinationInPath() { destination }: DestinationView,
    @Param('filter') filter: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.filters.delete(destination, filter, metadata);
    return {};
  }

  /** The filter as the read model holds it after a write to its destination. */
  private presentCurrentFilter(destination: DestinationRecord, filterId: string) {
    return presentFilterOf(
      this.lookup.destination(destination.workspaceSlug, destination.sourceSlug, destination.destinationSlug),
      filterId,
    );
  }
}

function presentFilterOf(view: DestinationView, filterId: string) {
  const filter = view.filters.find((candidate) => candidate.filterId === filterId);
  if (!filter) throw ConfigApiError.notFound(`filter ${filterId} not found`);
  return presentFilter(view.destination, filter);
}
