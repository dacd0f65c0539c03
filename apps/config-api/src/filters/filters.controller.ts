import {
  ConfigApiController,
  ConfigApiError,
  ChangeMetadata,
  ResourceLookup,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import {
  destinationAggregate,
  FilterAction,
  FilterChanges,
  resolveUpdateMask,
} from '@tributary/config-domain';
import { FilterRequestSchema } from '@tributary/contracts';
import {
  compileFilterActions,
  compileFilterCondition,
  InvalidDestinationFilterError,
} from '@tributary/routing';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { presentFilter } from './filter.presenter';

class FilterRequestDto extends createZodDto(FilterRequestSchema) {}

/** Filters take bare mask paths (`if`, `actions`, ...) as C1 sends them; prefixed ones work too. */
const FILTER_ZERO_VALUES = { title: '', description: '', if: '', enabled: false, actions: [] };

@ApiTags('destination filters')
@ConfigApiController('v1beta/workspaces/:workspace/sources/:source/destinations/:destination/filters')
export class FiltersController {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Query() query: PageRequest,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const { page, nextPageToken } = paginate(view.filters, query);
    return {
      filters: page.map((filter) => presentFilter(view.destination, filter)),
      next_page_token: nextPageToken,
    };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    validateFilterSemantics(body.filter.if, body.filter.actions);
    const filterId = `df_${generateKsuid()}`;
    this.quotas.assertCanAddFilter(view);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: view.destination.sourceId, destinationSlug },
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
    return this.get(workspaceSlug, sourceSlug, destinationSlug, filterId);
  }

  @Get(':filter')
  get(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Param('filter') filterId: string,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const filter = view.filters.find((candidate) => candidate.filterId === filterId);
    if (!filter) throw ConfigApiError.notFound(`filter ${filterId} not found`);
    return presentFilter(view.destination, filter);
  }

  @Patch(':filter')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Param('filter') filterId: string,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    const changes = resolveUpdateMask(
      'filter',
      body.filter,
      body.update_mask?.paths ?? undefined,
      FILTER_ZERO_VALUES,
    );
    validateFilterSemantics(changes.if as string | undefined, changes.actions as FilterAction[] | undefined);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: view.destination.sourceId, destinationSlug },
      { type: 'UpdateFilter', filterId, changes: changes as FilterChanges, now: metadata.time },
      metadata,
    );
    return this.get(workspaceSlug, sourceSlug, destinationSlug, filterId);
  }

  @Put(':filter')
  replace(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Param('filter') filterId: string,
    @Body() body: FilterRequestDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, sourceSlug, destinationSlug, filterId, body, metadata);
  }

  @Delete(':filter')
  async delete(
    @Param('workspace') workspaceSlug: string,
    @Param('source') sourceSlug: string,
    @Param('destination') destinationSlug: string,
    @Param('filter') filter: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const view = this.lookup.destination(workspaceSlug, sourceSlug, destinationSlug);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: view.destination.sourceId, destinationSlug },
      { type: 'DeleteFilter', filterId: lastSegment(filter) },
      metadata,
    );
    return {};
  }
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
