import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  DestinationInPath,
  ResourceLookup,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import {
  destinationDecider,
  DestinationRecord,
  FilterAction,
  FilterChanges,
  resolveUpdateMask,
  streamNames,
} from '@tributary/config-domain';
import { FilterRequestSchema, lastSegment } from '@tributary/contracts';
import {
  compileFilterActions,
  compileFilterCondition,
  InvalidDestinationFilterError,
} from '@tributary/routing';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { CommandRunner, DestinationView } from '@tributary/config-projections';
import { paginate, PageRequest } from '../shared/pagination';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { presentFilter } from './filter.presenter';

class FilterRequestDto extends createZodDto(FilterRequestSchema) {}

/** Filters take bare mask paths (`if`, `actions`, ...) as C1 sends them; prefixed ones work too. */
const FILTER_ZERO_VALUES = { title: '', description: '', if: '', enabled: false, actions: [] };

@ApiTags('destination filters')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/filters')
export class FiltersController {
  constructor(
    private readonly commands: CommandRunner,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
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
    const { destination } = view;
    validateFilterSemantics(body.filter.if, body.filter.actions);
    const filterId = `df_${generateKsuid()}`;
    this.quotas.assertCanAddFilter(view);
    await this.commands.execute(
      streamNames.destination(destination.sourceId, destination.destinationSlug),
      destinationDecider,
      {
        type: 'CreateFilter',
        filter: {
          filterId,
          title: body.filter.title ?? '',
          description: body.filter.description ?? '',
          if: body.filter.if ?? '',
          enabled: body.filter.enabled ?? false,
          actions: body.filter.actions ?? [],
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return this.presentCurrentFilter(destination, filterId);
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
    const changes = resolveUpdateMask(
      'filter',
      body.filter,
      body.update_mask?.paths ?? undefined,
      FILTER_ZERO_VALUES,
    );
    validateFilterSemantics(changes.if as string | undefined, changes.actions as FilterAction[] | undefined);
    await this.commands.execute(
      streamNames.destination(destination.sourceId, destination.destinationSlug),
      destinationDecider,
      { type: 'UpdateFilter', filterId, changes: changes as FilterChanges, now: metadata.time },
      metadata,
    );
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
    await this.commands.execute(
      streamNames.destination(destination.sourceId, destination.destinationSlug),
      destinationDecider,
      { type: 'DeleteFilter', filterId: lastSegment(filter) },
      metadata,
    );
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

/**
 * A filter the router could not evaluate would hold messages back, so its FQL condition and its
 * actions are compiled here and refused with 400 when they do not compile. Empty values are left
 * to the domain's own checks.
 */
function validateFilterSemantics(
  condition: string | null | undefined,
  actions: readonly FilterAction[] | null | undefined,
): void {
  try {
    if (condition) compileFilterCondition(condition);
    if (actions && actions.length > 0) compileFilterActions(actions);
  } catch (error) {
    if (error instanceof InvalidDestinationFilterError) {
      throw ConfigApiError.invalidArgument(`filter.${error.field}: ${error.message}`);
    }
    throw error;
  }
}
