import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { SchemaConfig, SourceRecord, TrackingPlanRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { compilePlanInSlices, type CompiledPlan } from '@tributary/protocols';
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
 *
 * Compiling a large plan takes seconds, so it runs in slices that let requests through
 * (`compilePlanInSlices`), and until a new version of a plan is compiled its previous version goes
 * on judging the messages of its sources. Only a source with no compiled version of its plan at all
 * (a first connection, a process that just started) waits for the compilation.
 */
@Injectable()
export class SourceEnforcementRegistry implements OnModuleDestroy {
  private readonly bySourceId = new Map<string, CachedEnforcement>();
  private readonly compiledPlans = new WeakMap<TrackingPlanRecord, CompiledPlan>();
  /** Compilations under way, so that one version is compiled once however many ask for it. */
  private readonly compiling = new WeakMap<TrackingPlanRecord, Promise<CompiledPlan>>();
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

  /**
   * The source's enforcement, or null when no plan is connected to it (R0). Answers at once, except
   * when the source's plan has no compiled version yet: then once it is compiled.
   */
  enforcementFor(source: SourceRecord): SourceEnforcement | null | Promise<SourceEnforcement | null> {
    const planId = this.readModel.trackingPlanIdOfSource(source.workspaceSlug, source.sourceSlug);
    if (planId === undefined) return null;
    const planView = this.readModel.trackingPlan(source.workspaceSlug, planId);
    const sourceView = this.readModel.source(source.workspaceSlug, source.sourceSlug);
    if (!planView || !sourceView) return null;
    const cached = this.bySourceId.get(source.sourceId);
    if (cached && cached.planRecord === planView.plan && cached.settings === sourceView.schemaConfig) {
      return cached.enforcement;
    }
    const compiled = this.compiledPlans.get(planView.plan);
    if (compiled) return this.remember(sourceView.source, planView.plan, sourceView.schemaConfig, compiled);
    const compiling = this.compile(planView.plan);
    // The previous version of the same plan applies until the new one is compiled.
    const previous = this.latestByPlan.get(planKeyOf(planView.plan));
    if (previous) return { source: sourceView.source, plan: previous, settings: sourceView.schemaConfig };
    return compiling.then(() => this.enforcementFor(source));
  }

  private remember(
    source: SourceRecord,
    planRecord: TrackingPlanRecord,
    settings: SchemaConfig,
    plan: CompiledPlan,
  ): SourceEnforcement {
    const enforcement: SourceEnforcement = { source, plan, settings };
    this.bySourceId.set(source.sourceId, { planRecord, settings, enforcement });
    return enforcement;
  }

  private compile(record: TrackingPlanRecord): Promise<CompiledPlan> {
    let compiling = this.compiling.get(record);
    if (!compiling) {
      const planKey = planKeyOf(record);
      compiling = compilePlanInSlices(
        { planId: record.planId, planName: record.displayName, rules: record.rules },
        this.latestByPlan.get(planKey),
      ).then((plan) => {
        this.compiledPlans.set(record, plan);
        // A newer version may have been compiled meanwhile: only the plan's current record moves `latest`.
        if (this.readModel.trackingPlan(record.workspaceSlug, record.planId)?.plan === record) {
          this.latestByPlan.set(planKey, plan);
        }
        this.metrics.recordCompiledPlan(plan);
        return plan;
      });
      // A failed compilation is not kept: the next request tries again.
      compiling.catch(() => this.compiling.delete(record));
      this.compiling.set(record, compiling);
    }
    return compiling;
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
      // Starts the compilations the change calls for; requests meanwhile get the previous version.
      if (this.enforcementFor(view.source) === null) this.bySourceId.delete(view.source.sourceId);
    }
  }
}

function planKeyOf(record: TrackingPlanRecord): string {
  return `${record.workspaceSlug}/${record.planId}`;
}
