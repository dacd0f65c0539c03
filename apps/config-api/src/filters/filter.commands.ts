import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { ConfigApiError } from '@tributary/config-api-access';
import {
  destinationAggregate,
  DestinationRecord,
  FilterAction,
  FilterChanges,
  resolveUpdateMask,
} from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel, DestinationView } from '@tributary/config-projections';
import { type FilterRequest, lastSegment } from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import {
  compileFilterActions,
  compileFilterCondition,
  InvalidDestinationFilterError,
} from '@tributary/routing';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

/** Filters take bare mask paths (`if`, `actions`, ...) as C1 sends them; prefixed ones work too. */
const FILTER_ZERO_VALUES = { title: '', description: '', if: '', enabled: false, actions: [] };

/**
 * The destination-filter use cases of the Config API, apart from HTTP: the filter's id, its FQL
 * condition and actions compiled before they are stored, and what an update mask changes. Each ends
 * in one command of the destination's aggregate; its caller reads the result back from the read model.
 */
@Injectable()
export class FilterCommands {
  constructor(
    private readonly commands: ConfigCommandHandler,
    private readonly quotas: WorkspaceQuotas,
    private readonly readModel: ConfigReadModel,
  ) {}

  /** Adds a filter to the destination and answers its id (`df_` and a KSUID). */
  async create(
    view: DestinationView,
    request: FilterRequest['filter'],
    metadata: EventMetadata,
  ): Promise<string> {
    const { destination } = view;
    validateFilterSemantics(request.if, request.actions);
    const filterId = `df_${generateKsuid()}`;
    this.quotas.assertCanAddFilter(view);
    const filter = {
      filterId,
      title: request.title ?? '',
      description: request.description ?? '',
      if: request.if ?? '',
      enabled: request.enabled ?? false,
      actions: request.actions ?? [],
      createTime: metadata.time,
      updateTime: metadata.time,
    };
    this.quotas.assertFilterSize(filter);
    this.quotas.assertWithinConfigBytes(destination.workspaceSlug, filter);
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'CreateFilter', filter },
      metadata,
    );
    return filterId;
  }

  async update(
    destination: DestinationRecord,
    filterId: string,
    body: FilterRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const changes = resolveUpdateMask(
      'filter',
      body.filter,
      body.update_mask?.paths ?? undefined,
      FILTER_ZERO_VALUES,
    );
    validateFilterSemantics(changes.if as string | undefined, changes.actions as FilterAction[] | undefined);
    const current = this.readModel
      .destination(destination.sourceId, destination.destinationSlug)
      ?.filters.find((filter) => filter.filterId === lastSegment(filterId));
    if (current) {
      this.quotas.assertFilterSize({ ...current, ...changes });
      this.quotas.assertWithinConfigBytes(destination.workspaceSlug, changes, current);
    }
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'UpdateFilter', filterId, changes: changes as FilterChanges, now: metadata.time },
      metadata,
    );
  }

  /** `filter` may be the filter's full name (docs/config-api.md §5.12). */
  async delete(destination: DestinationRecord, filter: string, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      destinationAggregate,
      { sourceId: destination.sourceId, destinationSlug: destination.destinationSlug },
      { type: 'DeleteFilter', filterId: lastSegment(filter) },
      metadata,
    );
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
