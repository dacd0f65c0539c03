import {
  ChangeMetadata,
  ConfigApiController,
  ResourceLookup,
  TrackingPlanInPath,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { generateKsuid } from '@tributary/auth';
import {
  resolveUpdateMask,
  streamNames,
  trackingPlanDecider,
  WorkspaceRecord,
} from '@tributary/config-domain';
import { CommandRunner, ConfigReadModel, TrackingPlanView } from '@tributary/config-projections';
import {
  BatchCreateSourceConnectionsRequestSchema,
  CreateSourceConnectionRequestSchema,
  CreateTrackingPlanRequestSchema,
  UpdateTrackingPlanRequestSchema,
  workspaceName,
  lastSegment,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { KeyedLock } from '@tributary/concurrency';
import { paginate, PageRequest } from '../shared/pagination';
import { slugUnder } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
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
  /**
   * Connections of one workspace are decided one at a time. "A source is connected to at most one
   * tracking plan" spans streams (one per plan), so it is checked against the read model, and two
   * requests could both pass the check before either had written; holding the workspace's key from
   * the check until the write is in the read model closes that gap for one Config API process.
   */
  private readonly connectionLock = new KeyedLock();

  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: CommandRunner,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
  ) {}

  @Get()
  list(@WorkspaceInPath() workspace: WorkspaceRecord, @Query() query: PageRequest) {
    const plans = this.readModel
      .listTrackingPlans(workspace.slug)
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
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
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
  get(@TrackingPlanInPath() { plan }: TrackingPlanView) {
    return presentTrackingPlan(plan);
  }

  /** Tracking plans are updated with PUT by every client (docs/config-api.md §1.2); PATCH works the same. */
  @Put(':plan')
  async update(
    @TrackingPlanInPath() { plan: { workspaceSlug, planId } }: TrackingPlanView,
    @Body() body: UpdateTrackingPlanDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
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
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
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
    @TrackingPlanInPath() view: TrackingPlanView,
    @Body() body: UpdateTrackingPlanDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    return this.update(view, body, metadata);
  }

  @Delete(':plan')
  async delete(
    @TrackingPlanInPath() { plan: { workspaceSlug, planId } }: TrackingPlanView,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
      { type: 'DeleteTrackingPlan' },
      metadata,
    );
    return {};
  }

  @Get(':plan/source-connections')
  listConnections(@TrackingPlanInPath() view: TrackingPlanView) {
    const { workspaceSlug, planId } = view.plan;
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
    @TrackingPlanInPath() { plan: { workspaceSlug, planId } }: TrackingPlanView,
    @Param('source') source: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
      { type: 'DisconnectSource', sourceSlug: lastSegment(source) },
      metadata,
    );
    return {};
  }

  private connect(
    workspaceSlug: string,
    planId: string,
    sourceNames: readonly string[],
    metadata: EventMetadata,
  ): Promise<string[]> {
    // Whether a source is already connected elsewhere is read from the read model, across plans'
    // streams; the lock keeps that answer true until this connection is written and folded in.
    return this.connectionLock.run(workspaceSlug, async () => {
      this.lookup.trackingPlan(workspaceSlug, planId);
      const sourceSlugs = [
        ...new Set(
          sourceNames.map((name) => slugUnder(workspaceName(workspaceSlug), 'sources', name, 'source_name')),
        ),
      ];
      const sources = Object.fromEntries(
        sourceSlugs.map((sourceSlug) => [
          sourceSlug,
          {
            exists: Boolean(this.readModel.source(workspaceSlug, sourceSlug)),
            connectedPlanId: this.readModel.trackingPlanIdOfSource(workspaceSlug, sourceSlug),
          },
        ]),
      );
      await this.commands.execute(
        streamNames.trackingPlan(workspaceSlug, planId),
        trackingPlanDecider,
        { type: 'ConnectSources', sourceSlugs, sources },
        metadata,
      );
      return sourceSlugs;
    });
  }
}
