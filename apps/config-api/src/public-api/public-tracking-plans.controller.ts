import { Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  ChangeMetadata,
  CurrentPrincipal,
  maySeeSecrets,
  type Principal,
} from '@tributary/config-api-access';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel, TrackingPlanView } from '@tributary/config-projections';
import type { EventMetadata } from '@tributary/event-store';
import { TrackingPlanCommands } from '../tracking-plans/tracking-plan.commands';
import {
  PublicApiController,
  PublicBody,
  PublicQueryParams,
  PublicWorkspace,
} from './public-api-controller.decorator';
import { PublicApiError } from './public-api.error';
import { optionalString, requiredString } from './public-api-input';
import { paginatePublic, queryObjects, queryValue, type PublicQuery } from './public-api-query';
import { PublicApiResources, publicTrackingPlanId } from './public-api-resources';
import { presentPublicSource } from './public-source.presenter';
import { PublicRule, publicRulesOf, readRules, ruleKeyOf, v1betaRulesOf } from './public-tracking-plan.rules';

const PLAN_TYPES = ['LIVE', 'PROPERTY_LIBRARY', 'RULE_LIBRARY', 'TEMPLATE', 'ENGAGE'];

const SUCCESS = { data: { status: 'SUCCESS' } };

/**
 * Tracking plans (docs/public-api.md, "Tracking plans"): v1beta's plans, their rules mapped onto
 * v1beta's parts, their source connections the same connections.
 */
@ApiTags('Tracking Plans')
@PublicApiController('tracking-plans')
export class PublicTrackingPlansController {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly plans: TrackingPlanCommands,
    private readonly resources: PublicApiResources,
  ) {}

  @Get()
  list(@PublicWorkspace() workspace: WorkspaceRecord, @PublicQueryParams() query: PublicQuery) {
    const type = queryValue(query, 'type');
    const plans = this.resources
      .trackingPlans(workspace)
      .filter(({ plan }) => type === undefined || (plan.planType ?? 'LIVE') === type);
    const { items, pagination } = paginatePublic(plans, query);
    return { data: { trackingPlans: items.map(presentPlan), pagination } };
  }

  @Post()
  @HttpCode(200)
  async create(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const name = requiredString(body, 'name');
    const planType = optionalString(body, 'type') ?? 'LIVE';
    if (!PLAN_TYPES.includes(planType)) {
      throw PublicApiError.validation(`type must be one of ${PLAN_TYPES.join(', ')}`, 'type');
    }
    const description = optionalString(body, 'description');
    const planId = await this.plans.create(workspace.slug, { display_name: name, rules: {} }, metadata, {
      planType,
      ...(description !== undefined && { description }),
    });
    return { data: { trackingPlan: presentPlan(this.readModel.trackingPlan(workspace.slug, planId)!) } };
  }

  @Get(':id')
  get(@PublicWorkspace() workspace: WorkspaceRecord, @Param('id') id: string) {
    return { data: { trackingPlan: presentPlan(this.resources.trackingPlan(workspace, id)) } };
  }

  @Patch(':id')
  async update(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const displayName = optionalString(body, 'name');
    const description = optionalString(body, 'description');
    await this.plans.change(
      workspace.slug,
      plan.planId,
      {
        ...(displayName !== undefined && { displayName }),
        ...(description !== undefined && { description }),
      },
      metadata,
    );
    return SUCCESS;
  }

  @Delete(':id')
  async delete(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    await this.plans.delete(workspace.slug, plan.planId, metadata);
    return SUCCESS;
  }

  @Get(':id/rules')
  listRules(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicQueryParams() query: PublicQuery,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const { items, pagination } = paginatePublic(publicRulesOf(plan.rules), query);
    return { data: { rules: items, pagination } };
  }

  /** Replaces every rule; `[]` clears them. */
  @Put(':id/rules')
  async replaceRules(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    await this.writeRules(workspace, plan.planId, readRules(body), metadata);
    return SUCCESS;
  }

  /** Adds the rules, replacing those of the same type and key. */
  @Patch(':id/rules')
  async upsertRules(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const upserted = readRules(body);
    const replaced = new Set(upserted.map(ruleKeyOf));
    const kept = publicRulesOf(plan.rules).filter((rule) => !replaced.has(ruleKeyOf(rule)));
    await this.writeRules(workspace, plan.planId, [...kept, ...upserted], metadata);
    return SUCCESS;
  }

  /** Removes the rules the query names: `rules[0][type]=TRACK&rules[0][key]=...` in any encoding. */
  @Delete(':id/rules')
  async removeRules(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicQueryParams() query: PublicQuery,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const named = queryObjects(query, 'rules');
    if (named.length === 0 || named.some((rule) => !rule.type)) {
      throw PublicApiError.validation(
        'name the rules to remove: rules[0][type]=...&rules[0][key]=...',
        'rules',
      );
    }
    const removed = new Set(named.map((rule) => ruleKeyOf(rule as Pick<PublicRule, 'type' | 'key'>)));
    const kept = publicRulesOf(plan.rules).filter((rule) => !removed.has(ruleKeyOf(rule)));
    await this.writeRules(workspace, plan.planId, kept, metadata);
    return SUCCESS;
  }

  @Get(':id/sources')
  listSources(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicQueryParams() query: PublicQuery,
    @CurrentPrincipal() principal: Principal,
  ) {
    const view = this.resources.trackingPlan(workspace, id);
    const sources = this.resources
      .sources(workspace)
      .filter(({ source }) => view.connectedSourceSlugs.includes(source.sourceSlug));
    const { items, pagination } = paginatePublic(sources, query);
    return {
      data: {
        sources: items.map(({ source }) => presentPublicSource(source, workspace, maySeeSecrets(principal))),
        pagination,
      },
    };
  }

  @Post(':id/sources')
  @HttpCode(200)
  async connectSource(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicBody() body: Record<string, unknown>,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const sourceId = requiredString(body, 'sourceId');
    const { source } = this.resourceOrValidation(workspace, sourceId);
    await this.plans.connect(workspace.slug, plan.planId, [source.sourceSlug], metadata);
    return SUCCESS;
  }

  @Delete(':id/sources')
  async disconnectSource(
    @PublicWorkspace() workspace: WorkspaceRecord,
    @Param('id') id: string,
    @PublicQueryParams() query: PublicQuery,
    @ChangeMetadata() metadata: EventMetadata,
  ) {
    const { plan } = this.resources.trackingPlan(workspace, id);
    const sourceId = queryValue(query, 'sourceId');
    if (!sourceId) throw PublicApiError.validation('sourceId is required', 'sourceId');
    const { source } = this.resourceOrValidation(workspace, sourceId);
    await this.plans.disconnect(workspace.slug, plan.planId, source.sourceSlug, metadata);
    return SUCCESS;
  }

  private resourceOrValidation(workspace: WorkspaceRecord, sourceId: string) {
    try {
      return this.resources.source(workspace, sourceId);
    } catch {
      throw PublicApiError.validation(`sourceId "${sourceId}" is not a source of this workspace`, 'sourceId');
    }
  }

  private async writeRules(
    workspace: WorkspaceRecord,
    planId: string,
    rules: readonly PublicRule[],
    metadata: EventMetadata,
  ): Promise<void> {
    await this.plans.change(workspace.slug, planId, { rules: v1betaRulesOf(rules) }, metadata);
  }
}

function presentPlan({ plan }: TrackingPlanView) {
  return {
    id: publicTrackingPlanId(plan.planId),
    name: plan.displayName,
    slug: plan.planId,
    ...(plan.description !== undefined && plan.description !== '' && { description: plan.description }),
    type: plan.planType ?? 'LIVE',
    resourceSchemaId: plan.planId,
    createdAt: plan.createTime,
    updatedAt: plan.updateTime,
  };
}
