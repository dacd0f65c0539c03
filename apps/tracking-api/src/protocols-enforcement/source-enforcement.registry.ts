import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { SchemaConfig, SourceRecord, TrackingPlanRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { compilePlan, type CompiledPlan } from '@tributary/protocols';
import { ProtocolsMetrics } from './protocols.metrics';

/** What Protocols needs to judge the messages of one source. */
export interface SourceEnforcement {
  source: SourceRecord;
  plan: CompiledPlan;
  settings: SchemaConfig;
}

interface CachedEnforcement {
  /** The read model's records this was built from: a change replaces them, so identity tells staleness. */
  planRecord: TrackingPlanRecord;
  settings: SchemaConfig;
  enforcement: SourceEnforcement;
}

/**
 * Compiled tracking plans of the sources this process serves. A plan version is compiled once (its
 * JSON Schemas turned into validate functions) and shared by every source connected to it; when a
 * plan, a connection or a schema config changes, the affected sources are compiled again right away,
 * outside any request. A request only looks its source up (R0: a source with no plan costs one map
 * lookup).
 */
@Injectable()
export class SourceEnforcementRegistry implements OnModuleDestroy {
  private readonly bySourceId = new Map<string, CachedEnforcement>();
  private readonly compiledPlans = new WeakMap<TrackingPlanRecord, CompiledPlan>();
  /** The newest compiled version of each plan: the next version reuses its unchanged rules. */
  private readonly latestByPlan = new Map<string, CompiledPlan>();
  private readonly stopListening: () => void;
  private readonly pendingWorkspaces = new Set<string>();

  constructor(
    private readonly readModel: ConfigReadModel,
    private readonly metrics: ProtocolsMetrics,
  ) {
    this.stopListening = readModel.onChange((change) => {
      if (change.kind === 'source-deleted') {
        this.bySourceId.delete(change.source.sourceId);
        return;
      }
      if (change.kind !== 'protocols-changed') return;
      // After the projection has folded the whole change (a catch-up folds many at once): compile
      // off the projection's path, once per workspace however many changes came.
      if (this.pendingWorkspaces.size === 0) setImmediate(() => this.compilePendingWorkspaces());
      this.pendingWorkspaces.add(change.workspaceSlug);
    });
  }

  onModuleDestroy(): void {
    this.stopListening();
  }

  /** The source's enforcement, or null when no plan is connected to it (R0). */
  enforcementFor(source: SourceRecord): SourceEnforcement | null {
    const planId = this.readModel.trackingPlanIdOfSource(source.workspaceSlug, source.sourceSlug);
    if (planId === undefined) return null;
    const planView = this.readModel.trackingPlan(source.workspaceSlug, planId);
    const sourceView = this.readModel.source(source.workspaceSlug, source.sourceSlug);
    if (!planView || !sourceView) return null;
    const cached = this.bySourceId.get(source.sourceId);
    if (cached && cached.planRecord === planView.plan && cached.settings === sourceView.schemaConfig) {
      return cached.enforcement;
    }
    const enforcement: SourceEnforcement = {
      source: sourceView.source,
      plan: this.compiled(planView.plan),
      settings: sourceView.schemaConfig,
    };
    this.bySourceId.set(source.sourceId, {
      planRecord: planView.plan,
      settings: sourceView.schemaConfig,
      enforcement,
    });
    return enforcement;
  }

  private compiled(record: TrackingPlanRecord): CompiledPlan {
    let plan = this.compiledPlans.get(record);
    if (!plan) {
      const planKey = `${record.workspaceSlug}/${record.planId}`;
      plan = compilePlan(
        { planId: record.planId, planName: record.displayName, rules: record.rules },
        this.latestByPlan.get(planKey),
      );
      this.compiledPlans.set(record, plan);
      this.latestByPlan.set(planKey, plan);
      this.metrics.recordCompiledPlan(plan);
    }
    return plan;
  }

  private compilePendingWorkspaces(): void {
    const workspaces = [...this.pendingWorkspaces];
    this.pendingWorkspaces.clear();
    for (const workspaceSlug of workspaces) this.compileWorkspace(workspaceSlug);
  }

  private compileWorkspace(workspaceSlug: string): void {
    const plans = new Set(this.readModel.listTrackingPlans(workspaceSlug).map((view) => view.plan.planId));
    for (const planKey of this.latestByPlan.keys()) {
      const [workspace, planId] = planKey.split('/');
      if (workspace === workspaceSlug && !plans.has(planId)) this.latestByPlan.delete(planKey);
    }
    for (const view of this.readModel.listSources(workspaceSlug)) {
      if (this.enforcementFor(view.source) === null) this.bySourceId.delete(view.source.sourceId);
    }
  }
}
