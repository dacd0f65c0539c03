import { Injectable } from '@nestjs/common';
import { generateKsuid } from '@tributary/auth';
import { ResourceLookup } from '@tributary/config-api-access';
import { KeyedLock } from '@tributary/concurrency';
import { resolveUpdateMask, streamNames, trackingPlanDecider } from '@tributary/config-domain';
import { CommandRunner, ConfigReadModel } from '@tributary/config-projections';
import {
  lastSegment,
  type TrackingPlanBody,
  type UpdateTrackingPlanRequest,
  workspaceName,
} from '@tributary/contracts';
import type { EventMetadata } from '@tributary/event-store';
import { slugUnder } from '../shared/resource-names';
import { WorkspaceQuotas } from '../shared/workspace-quotas';

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
 * changes, and the rule that spans plans (a source is connected to at most one). Each ends in one
 * command of the plan's aggregate; its caller reads the result back from the read model.
 */
@Injectable()
export class TrackingPlanCommands {
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

  /** Creates a plan in the workspace and answers its id (`rs_` and a KSUID). */
  async create(workspaceSlug: string, body: TrackingPlanBody, metadata: EventMetadata): Promise<string> {
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
          displayName: body.display_name ?? '',
          rules: body.rules ?? {},
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
  }

  async delete(workspaceSlug: string, planId: string, metadata: EventMetadata): Promise<void> {
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
      { type: 'DeleteTrackingPlan' },
      metadata,
    );
  }

  /**
   * Connects the sources named (full names or bare slugs) to the plan and answers their slugs, each
   * once. A source connected to another plan of the workspace is refused (409).
   */
  connect(
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

  /** `source` may be a full source name (docs/config-api.md §5.12). */
  async disconnect(
    workspaceSlug: string,
    planId: string,
    source: string,
    metadata: EventMetadata,
  ): Promise<void> {
    await this.commands.execute(
      streamNames.trackingPlan(workspaceSlug, planId),
      trackingPlanDecider,
      { type: 'DisconnectSource', sourceSlug: lastSegment(source) },
      metadata,
    );
  }
}
