import { ConfigApiController, ChangeMetadata, ResourceLookup } from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import { resolveUpdateMask, trackingPlanAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  BatchCreateSourceConnectionsRequestSchema,
  CreateSourceConnectionRequestSchema,
  CreateTrackingPlanRequestSchema,
  UpdateTrackingPlanRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { lastSegment, slugUnder, workspaceName } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { SourceConnectionsHandler } from './source-connections.handler';
import { presentConnection, presentTrackingPlan } from './tracking-plan.presenter';

class CreateTrackingPlanDto extends createZodDto(CreateTrackingPlanRequestSchema) {}
class UpdateTrackingPlanDto extends createZodDto(UpdateTrackingPlanRequestSchema) {}
class CreateSourceConnectionDto extends createZodDto(CreateSourceConnectionRequestSchema) {}
class BatchCreateSourceConnectionsDto extends createZodDto(BatchCreateSourceConnectionsRequestSchema) {}

/**
 * `rules` replaces the rules wholesale; the narrower `rules.<part>` paths replace one part each
 * (docs/config-api.md §1.6). A masked-but-absent part is emptied (lists) or removed (schemas).
 */
const TRACKING_PLAN_ZERO_VALUES = {
  display_name: '',
  rules: {},
  'rules.events': [],
  'rules.identify_traits': [],
  'rules.group_traits': [],
  'rules.global': null,
  'rules.identify': null,
  'rules.group': null,
};

@ApiTags('tracking plans')
@ConfigApiController('v1beta/workspaces/:workspace/tracking-plans')
export class TrackingPlansController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
    private readonly connections: SourceConnectionsHandler,
  ) {}

  @Get()
  list(@Param('workspace') workspaceSlug: string, @Query() query: PageRequest) {
    this.lookup.workspace(workspaceSlug);
    const plans = this.readModel
      .listTrackingPlans(workspaceSlug)
      .sort(
        (a, b) =>
          a.plan.createTime.localeCompare(b.plan.createTime) || a.plan.planId.localeCompare(b.plan.planId),
      );
    const { page, nextPageToken } = paginate(plans, query);
    return {
      tracking_plans: page.map((view) => presentTrackingPlan(view.plan)),
      next_page_token: nextPageToken,
    };
  }

  @Post()
  async create(
    @Param('workspace') workspaceSlug: string,
    @Body() body: CreateTrackingPlanDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const planId = `rs_${generateKsuid()}`;
    this.quotas.assertCanAddTrackingPlan(workspaceSlug);
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      {
        type: 'CreateTrackingPlan',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        plan: {
          workspaceSlug,
          planId,
          displayName: body.tracking_plan.display_name ?? '',
          rules: body.tracking_plan.rules ?? {},
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return presentTrackingPlan(this.lookup.trackingPlan(workspaceSlug, planId).plan);
  }

  @Get(':plan')
  get(@Param('workspace') workspaceSlug: string, @Param('plan') planId: string) {
    return presentTrackingPlan(this.lookup.trackingPlan(workspaceSlug, planId).plan);
  }

  /** Tracking plans are updated with PUT by every client (docs/config-api.md §1.2); PATCH works the same. */
  @Put(':plan')
  async update(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Body() body: UpdateTrackingPlanDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.trackingPlan(workspaceSlug, planId);
    const masked = resolveUpdateMask(
      'tracking_plan',
      body.tracking_plan,
      body.update_mask?.paths ?? undefined,
      TRACKING_PLAN_ZERO_VALUES,
    );
    const ruleParts: Record<string, unknown> = {};
    for (const [path, value] of Object.entries(masked)) {
      if (path.startsWith('rules.')) ruleParts[path.slice('rules.'.length)] = value;
    }
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      {
        type: 'UpdateTrackingPlan',
        now: metadata.time,
        changes: {
          displayName: masked.display_name as string | undefined,
          rules: masked.rules,
          ruleParts: Object.keys(ruleParts).length > 0 ? ruleParts : undefined,
        },
      },
      metadata,
    );
    return presentTrackingPlan(this.lookup.trackingPlan(workspaceSlug, planId).plan);
  }

  @Patch(':plan')
  patch(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Body() body: UpdateTrackingPlanDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(workspaceSlug, planId, body, metadata);
  }

  @Delete(':plan')
  async delete(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.trackingPlan(workspaceSlug, planId);
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      { type: 'DeleteTrackingPlan' },
      metadata,
    );
    return {};
  }

  @Get(':plan/source-connections')
  listConnections(@Param('workspace') workspaceSlug: string, @Param('plan') planId: string) {
    const view = this.lookup.trackingPlan(workspaceSlug, planId);
    return {
      connections: view.connectedSourceSlugs.map((sourceSlug) =>
        presentConnection(workspaceSlug, sourceSlug, planId),
      ),
      next_page_token: '',
    };
  }

  /** Returns the connection flat, as the docs show (docs/config-api.md §2.7). */
  @Post(':plan/source-connections')
  async createConnection(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Body() body: CreateSourceConnectionDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const [sourceSlug] = await this.connect(workspaceSlug, planId, [body.source_name], metadata);
    return presentConnection(workspaceSlug, sourceSlug, planId);
  }

  @Post(':plan/source-connections/@batchCreateConnections')
  async batchCreateConnections(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Body() body: BatchCreateSourceConnectionsDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const sourceSlugs = await this.connect(workspaceSlug, planId, body.source_names, metadata);
    return {
      connections: sourceSlugs.map((sourceSlug) => presentConnection(workspaceSlug, sourceSlug, planId)),
    };
  }

  /** Answers exactly `{}`: C1 fails on any other body. `{source}` may be a full source name. */
  @Delete(':plan/source-connections/:source')
  async deleteConnection(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Param('source') source: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    this.lookup.trackingPlan(workspaceSlug, planId);
    await this.connections.disconnect(workspaceSlug, planId, lastSegment(source), metadata);
    return {};
  }

  private async connect(
    workspaceSlug: string,
    planId: string,
    sourceNames: readonly string[],
    metadata: EventMetadata,
  ): Promise<string[]> {
    this.lookup.trackingPlan(workspaceSlug, planId);
    const sourceSlugs = [
      ...new Set(
        sourceNames.map((name) => slugUnder(workspaceName(workspaceSlug), 'sources', name, 'source_name')),
      ),
    ];
    await this.connections.connect(workspaceSlug, planId, sourceSlugs, metadata);
    return sourceSlugs;
  }
}
