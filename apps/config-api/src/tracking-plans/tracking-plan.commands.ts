import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { ConfigApiError, ResourceLookup } from '@tributary/config-api-access';
import { resolveUpdateMask, trackingPlanAggregate } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigReadModel } from '@tributary/config-projections';
import {
  lastSegment,
  type TrackingPlanBody,
  type UpdateTrackingPlanRequest,
  workspaceName,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { findRefusedPattern, type PlanRules } from '@tributary/protocols';
import { slugUnder } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';
import { SourceConnectionsHandler } from './source-connections.handler';

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

/**
 * The tracking-plan use cases of the Config API, apart from HTTP: the plan's id, what an update mask
 * changes, and which sources a connection names. A plan's own changes end in one command of the
 * plan's aggregate; connections are decided in each source's stream by `SourceConnectionsHandler`.
 * The caller reads the result back from the read model.
 */
@Injectable()
export class TrackingPlanCommands {
  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly commands: ConfigCommandHandler,
    private readonly lookup: ResourceLookup,
    private readonly quotas: WorkspaceQuotas,
    private readonly connections: SourceConnectionsHandler,
  ) {}

  /**
   * Creates a plan in the workspace and answers its id (`rs_` and a KSUID); `extra` holds what only the
   * Public API sets.
   */
  async create(
    workspaceSlug: string,
    body: TrackingPlanBody,
    metadata: EventMetadata,
    extra: { planType?: string; description?: string } = {},
  ): Promise<string> {
    const planId = `rs_${generateKsuid()}`;
    this.quotas.assertCanAddTrackingPlan(workspaceSlug);
    assertPatternsRun(body.rules);
    this.quotas.assertWithinConfigBytes(workspaceSlug, body);
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      {
        type: 'CreateTrackingPlan',
        workspaceExists: Boolean(this.readModel.workspace(workspaceSlug)),
        plan: {
          workspaceSlug,
          planId,
          displayName: body.display_name ?? '',
          rules: body.rules ?? {},
          ...(extra.planType !== undefined && { planType: extra.planType }),
          ...(extra.description !== undefined && { description: extra.description }),
          createTime: metadata.time,
          updateTime: metadata.time,
        },
      },
      metadata,
    );
    return planId;
  }

  /** Changes what the update mask names; without a mask, every field the body holds. */
  async update(
    workspaceSlug: string,
    planId: string,
    body: UpdateTrackingPlanRequest,
    metadata: EventMetadata,
  ): Promise<void> {
    const masked = resolveUpdateMask(
      'tracking_plan',
      body.tracking_plan,
      body.update_mask?.paths ?? undefined,
      TRACKING_PLAN_ZERO_VALUES,
    );
    const current = this.readModel.trackingPlan(workspaceSlug, planId)?.plan;
    this.quotas.assertWithinConfigBytes(workspaceSlug, masked, current ?? {});
    const ruleParts: Record<string, unknown> = {};
    for (const [path, value] of Object.entries(masked)) {
      if (path.startsWith('rules.')) ruleParts[path.slice('rules.'.length)] = value;
    }
    assertPatternsRun(masked.rules);
    assertPatternsRun(ruleParts);
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
  }

  /** The Public API's changes: name, description, and the rules replaced whole. */
  async change(
    workspaceSlug: string,
    planId: string,
    changes: { displayName?: string; description?: string; rules?: Record<string, unknown> },
    metadata: EventMetadata,
  ): Promise<void> {
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      { type: 'UpdateTrackingPlan', now: metadata.time, changes },
      metadata,
    );
  }

  async delete(workspaceSlug: string, planId: string, metadata: EventMetadata): Promise<void> {
    await this.commands.handle(
      trackingPlanAggregate,
      { workspaceSlug, planId },
      { type: 'DeleteTrackingPlan' },
      metadata,
    );
  }

  /**
   * Connects the sources named (full names or bare slugs) to the plan and answers their slugs, each
   * once. A source connected to another plan of the workspace is refused (409); the rule is held by
   * each source's own stream (`SourceConnectionsHandler`).
   */
  async connect(
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

  /** `source` may be a full source name (docs/config-api.md §5.12). */
  async disconnect(
    workspaceSlug: string,
    planId: string,
    source: string,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.connections.disconnect(workspaceSlug, planId, lastSegment(source), metadata);
  }
}

/**
 * Every pattern of a plan runs on RE2 within its budgets (docs/protocols.md, "Patterns"): one that
 * cannot is refused here, naming the field, rather than skipped at enforcement. Segment accepts
 * Go's syntax, which is RE2's; what it would accept and this refuses is only a pattern over the budgets.
 */
function assertPatternsRun(rules: unknown): void {
  if (typeof rules !== 'object' || rules === null || Array.isArray(rules)) return;
  const refused = findRefusedPattern(rules as PlanRules, 'tracking_plan.rules');
  if (refused) throw ConfigApiError.invalidArgument(`${refused.field}: ${refused.reason}`);
}
