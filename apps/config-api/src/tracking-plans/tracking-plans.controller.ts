import {
  ChangeMetadata,
  ConfigApiController,
  ResourceLookup,
  TrackingPlanInPath,
  WorkspaceInPath,
} from '@tributary/config-api-access';
import { Body, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel, TrackingPlanView } from '@tributary/config-projections';
import {
  BatchCreateSourceConnectionsRequestSchema,
  CreateSourceConnectionRequestSchema,
  CreateTrackingPlanRequestSchema,
  UpdateTrackingPlanRequestSchema,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { createZodDto } from 'nestjs-zod';
import { paginate, PageRequest } from '../shared/pagination';
import { TrackingPlanCommands } from './tracking-plan.commands';
import { presentConnection, presentTrackingPlan } from './tracking-plan.presenter';

class CreateTrackingPlanDto extends createZodDto(CreateTrackingPlanRequestSchema) {}
class UpdateTrackingPlanDto extends createZodDto(UpdateTrackingPlanRequestSchema) {}
class CreateSourceConnectionDto extends createZodDto(CreateSourceConnectionRequestSchema) {}
class BatchCreateSourceConnectionsDto extends createZodDto(BatchCreateSourceConnectionsRequestSchema) {}

/** Tracking plans over HTTP; what a request does is `TrackingPlanCommands`'. */
@ApiTags('tracking plans')
@ConfigApiController('v1beta/workspaces/:workspace/tracking-plans')
export class TrackingPlansController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly trackingPlans: TrackingPlanCommands,
    private readonly lookup: ResourceLookup,
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
    const planId = await this.trackingPlans.create(workspaceSlug, body.tracking_plan, metadata);
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
    await this.trackingPlans.update(workspaceSlug, planId, body, metadata);
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
    await this.trackingPlans.delete(workspaceSlug, planId, metadata);
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
    const [sourceSlug] = await this.trackingPlans.connect(
      workspaceSlug,
      planId,
      [body.source_name],
      metadata,
    );
    return presentConnection(workspaceSlug, sourceSlug, planId);
  }

  @Post(':plan/source-connections/@batchCreateConnections')
  async batchCreateConnections(
    @Param('workspace') workspaceSlug: string,
    @Param('plan') planId: string,
    @Body() body: BatchCreateSourceConnectionsDto,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const sourceSlugs = await this.trackingPlans.connect(workspaceSlug, planId, body.source_names, metadata);
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
    await this.trackingPlans.disconnect(workspaceSlug, planId, source, metadata);
    return {};
  }
}
