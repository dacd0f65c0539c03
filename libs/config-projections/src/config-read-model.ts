import {
  AccessTokenRecord,
  applyDestinationChanges,
  applyReplayFinished,
  applyTrackingPlanChanges,
  ConfigEvent,
  DestinationRecord,
  FilterRecord,
  OAuthApplicationRecord,
  ReplayRecord,
  SchemaConfig,
  SourceRecord,
  TrackingPlanRecord,
  UserRecord,
  WorkspaceRecord,
} from '@tributary/config-domain';
import type { RecordedEvent } from '@tributary/event-store';

export interface SourceView {
  source: SourceRecord;
  schemaConfig: SchemaConfig;
}

export interface DestinationView {
  destination: DestinationRecord;
  filters: FilterRecord[];
  replays: ReplayRecord[];
  /** Dead letters (by dead-letter sequence) that a redrive delivered: no longer listed. */
  redrivenDeadLetters: Set<number>;
  /** Redrives requested and not recorded yet, oldest first: the router's work to do. */
  pendingRedriveIds: string[];
}

export interface TrackingPlanView {
  plan: TrackingPlanRecord;
  connectedSourceSlugs: string[];
}

/** A change the tracking API and the router react to without polling. */
export type ConfigChange =
  | { kind: 'source-upserted'; source: SourceRecord }
  | { kind: 'source-deleted'; source: SourceRecord }
  | { kind: 'destination-upserted'; view: DestinationView }
  | { kind: 'destination-deleted'; destination: DestinationRecord }
  | { kind: 'dead-letter-redrive-requested'; view: DestinationView; redriveId: string }
  | { kind: 'workspace-upserted'; workspace: WorkspaceRecord }
  /** A tracking plan, a plan connection or a schema config of the workspace changed (Protocols). */
  | { kind: 'protocols-changed'; workspaceSlug: string };

/**
 * An event the model could not fold, or a change a listener failed on. The model skips it and goes on:
 * one event must not stop the subscription, which would freeze every read of the process, nor every
 * later start, which replays the same event.
 */
export interface ConfigFoldFailure {
  stage: 'fold' | 'listener';
  position: bigint;
  streamName: string;
  type: string;
  error: unknown;
}

const sourceKey = (workspaceSlug: string, sourceSlug: string) => `${workspaceSlug}/${sourceSlug}`;
const destinationKey = (sourceId: string, destinationSlug: string) => `${sourceId}/${destinationSlug}`;
const planKey = (workspaceSlug: string, planId: string) => `${workspaceSlug}/${planId}`;

/**
 * Every read of the Config API, the tracking API and the router comes from here: the config events
 * folded into in-memory maps. Config data is small (thousands of resources, bounded by the workspace
 * quotas), so memory is the right place; at start the model is rebuilt from the event store. The audit
 * trail, which grows with every change, is not kept here: it is read from the store page by page.
 *
 * Folding is total: an event that cannot be folded (stored before a validation existed, or data no
 * fold expects) is reported through `onFailure`, counted, and skipped, and the position still moves on,
 * so `waitFor` never hangs on it.
 */
export class ConfigReadModel {
  readonly workspaces = new Map<string, WorkspaceRecord>();
  readonly users = new Map<string, UserRecord>();
  readonly tokensByNumber = new Map<number, AccessTokenRecord>();
  readonly tokensByHash = new Map<string, AccessTokenRecord>();
  private readonly sources = new Map<string, SourceView>();
  private readonly sourcesByWriteKey = new Map<string, SourceRecord>();
  private readonly destinations = new Map<string, DestinationView>();
  private readonly trackingPlans = new Map<string, TrackingPlanView>();
  private readonly planIdBySource = new Map<string, string>();
  private readonly oauthApplications = new Map<string, OAuthApplicationRecord>();
  private readonly oauthApplicationsByClientId = new Map<string, OAuthApplicationRecord>();
  private readonly changeListeners = new Set<(change: ConfigChange) => void>();
  private position = -1n;
  private highestTokenNumber = 0;
  private positionWaiters: { position: bigint; resolve: () => void }[] = [];
  private failures = { fold: 0, listener: 0 };
  /** The event being folded, named in listener failures. */
  private folding?: RecordedEvent;

  constructor(private readonly onFailure: (failure: ConfigFoldFailure) => void = () => undefined) {}

  /** Events skipped because they could not be folded, and listener calls that threw, since start. */
  get foldFailures(): Readonly<{ fold: number; listener: number }> {
    return this.failures;
  }

  /** Events folded in since the process started, and when the last one was: the projection's pulse. */
  private applied = { count: 0, lastAt: 0 };

  get eventsApplied(): number {
    return this.applied.count;
  }

  /** Milliseconds since the epoch; 0 before the first event. */
  get lastAppliedAt(): number {
    return this.applied.lastAt;
  }

  get currentPosition(): bigint {
    return this.position;
  }

  /** Resolves once every event up to `position` is folded in: read-your-writes after a command. */
  waitFor(position: bigint): Promise<void> {
    if (this.position >= position) return Promise.resolve();
    return new Promise((resolve) => this.positionWaiters.push({ position, resolve }));
  }

  onChange(listener: (change: ConfigChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  nextTokenNumber(): number {
    return this.highestTokenNumber + 1;
  }

  workspace(slug: string): WorkspaceRecord | undefined {
    return this.workspaces.get(slug);
  }

  listWorkspaces(): WorkspaceRecord[] {
    return [...this.workspaces.values()];
  }

  source(workspaceSlug: string, sourceSlug: string): SourceView | undefined {
    return this.sources.get(sourceKey(workspaceSlug, sourceSlug));
  }

  listSources(workspaceSlug: string): SourceView[] {
    return [...this.sources.values()].filter((view) => view.source.workspaceSlug === workspaceSlug);
  }

  sourceByWriteKey(writeKey: string): SourceRecord | undefined {
    return this.sourcesByWriteKey.get(writeKey);
  }

  destination(sourceId: string, destinationSlug: string): DestinationView | undefined {
    return this.destinations.get(destinationKey(sourceId, destinationSlug));
  }

  listDestinations(sourceId: string): DestinationView[] {
    return [...this.destinations.values()].filter((view) => view.destination.sourceId === sourceId);
  }

  listAllDestinations(): DestinationView[] {
    return [...this.destinations.values()];
  }

  trackingPlan(workspaceSlug: string, planId: string): TrackingPlanView | undefined {
    return this.trackingPlans.get(planKey(workspaceSlug, planId));
  }

  listTrackingPlans(workspaceSlug: string): TrackingPlanView[] {
    return [...this.trackingPlans.values()].filter((view) => view.plan.workspaceSlug === workspaceSlug);
  }

  trackingPlanIdOfSource(workspaceSlug: string, sourceSlug: string): string | undefined {
    return this.planIdBySource.get(sourceKey(workspaceSlug, sourceSlug));
  }

  oauthApplication(workspaceSlug: string, applicationId: string): OAuthApplicationRecord | undefined {
    return this.oauthApplications.get(`${workspaceSlug}/${applicationId}`);
  }

  oauthApplicationByClientId(clientId: string): OAuthApplicationRecord | undefined {
    return this.oauthApplicationsByClientId.get(clientId);
  }

  listOAuthApplications(workspaceSlug: string): OAuthApplicationRecord[] {
    return [...this.oauthApplications.values()].filter(
      (application) => application.workspaceSlug === workspaceSlug,
    );
  }

  apply(recorded: RecordedEvent): void {
    if (recorded.position <= this.position) return;
    const event = { type: recorded.type, data: recorded.data } as ConfigEvent;
    this.folding = recorded;
    try {
      this.fold(event);
    } catch (error) {
      this.reportFailure('fold', recorded, error);
    } finally {
      this.folding = undefined;
    }
    this.position = recorded.position;
    this.applied.count += 1;
    this.applied.lastAt = Date.now();
    this.releaseWaiters();
  }

  private releaseWaiters(): void {
    if (this.positionWaiters.length === 0) return;
    const ready = this.positionWaiters.filter((waiter) => waiter.position <= this.position);
    this.positionWaiters = this.positionWaiters.filter((waiter) => waiter.position > this.position);
    ready.forEach((waiter) => waiter.resolve());
  }

  private emit(change: ConfigChange): void {
    for (const listener of this.changeListeners) {
      try {
        listener(change);
      } catch (error) {
        // The fold is done; one failing listener must not keep the others from hearing of it.
        if (this.folding) this.reportFailure('listener', this.folding, error);
      }
    }
  }

  private reportFailure(stage: ConfigFoldFailure['stage'], recorded: RecordedEvent, error: unknown): void {
    this.failures[stage] += 1;
    try {
      this.onFailure({
        stage,
        position: recorded.position,
        streamName: recorded.streamName,
        type: recorded.type,
        error,
      });
    } catch {
      // Reporting is best effort; the count above is the record that stays.
    }
  }

  private fold(event: ConfigEvent): void {
    this.foldConfig(event);
    if (event.type.startsWith('TrackingPlan')) {
      this.emit({
        kind: 'protocols-changed',
        workspaceSlug: (event.data as { workspaceSlug: string }).workspaceSlug,
      });
    }
  }

  private foldConfig(event: ConfigEvent): void {
    switch (event.type) {
      case 'WorkspaceCreated':
        this.workspaces.set(event.data.slug, event.data);
        this.emit({ kind: 'workspace-upserted', workspace: event.data });
        return;
      case 'WorkspaceUpdated': {
        const workspace = this.workspaces.get(event.data.slug);
        if (!workspace) return;
        const updated = { ...workspace, ...event.data.changes };
        this.workspaces.set(workspace.slug, updated);
        this.emit({ kind: 'workspace-upserted', workspace: updated });
        return;
      }
      case 'UserRegistered':
        this.users.set(event.data.email.toLowerCase(), event.data);
        return;
      case 'AccessTokenCreated':
        this.tokensByNumber.set(event.data.number, event.data);
        this.tokensByHash.set(event.data.tokenHash, event.data);
        this.highestTokenNumber = Math.max(this.highestTokenNumber, event.data.number);
        return;
      case 'AccessTokenDeleted': {
        const token = this.tokensByNumber.get(event.data.number);
        this.tokensByNumber.delete(event.data.number);
        if (token) this.tokensByHash.delete(token.tokenHash);
        return;
      }
      case 'SourceCreated': {
        const { schemaConfig, ...source } = event.data;
        this.sources.set(sourceKey(source.workspaceSlug, source.sourceSlug), { source, schemaConfig });
        this.sourcesByWriteKey.set(source.writeKey, source);
        this.emit({ kind: 'source-upserted', source });
        return;
      }
      case 'SourceUpdated': {
        const view = this.sources.get(sourceKey(event.data.workspaceSlug, event.data.sourceSlug));
        if (!view) return;
        // A new record, not an edit in place: readers holding the old one see a consistent source.
        const source = { ...view.source, ...event.data.changes };
        view.source = source;
        this.sourcesByWriteKey.set(source.writeKey, source);
        this.emit({ kind: 'source-upserted', source });
        return;
      }
      case 'SchemaConfigUpdated': {
        const view = this.sources.get(sourceKey(event.data.workspaceSlug, event.data.sourceSlug));
        // A new object, never an edit in place: the tracking API knows its compiled plans are stale
        // by the identity of the schema config and plan records they were compiled from.
        if (view) view.schemaConfig = { ...view.schemaConfig, ...event.data.changes };
        this.emit({ kind: 'protocols-changed', workspaceSlug: event.data.workspaceSlug });
        return;
      }
      case 'SourceDeleted':
        return this.removeSource(event.data.workspaceSlug, event.data.sourceSlug);
      case 'DestinationCreated': {
        const view = {
          destination: event.data,
          filters: [],
          replays: [],
          redrivenDeadLetters: new Set<number>(),
          pendingRedriveIds: [],
        };
        this.destinations.set(destinationKey(event.data.sourceId, event.data.destinationSlug), view);
        this.emit({ kind: 'destination-upserted', view });
        return;
      }
      case 'DestinationDeleted': {
        const key = destinationKey(event.data.sourceId, event.data.destinationSlug);
        const view = this.destinations.get(key);
        this.destinations.delete(key);
        if (view) this.emit({ kind: 'destination-deleted', destination: view.destination });
        return;
      }
      case 'DestinationUpdated':
      case 'DestinationFilterCreated':
      case 'DestinationFilterUpdated':
      case 'DestinationFilterDeleted':
      case 'DestinationReplayRequested':
      case 'DestinationReplayFinished':
      case 'DestinationDeadLettersRedriveRequested':
      case 'DestinationDeadLettersRedriven':
        return this.foldDestinationChange(event);
      case 'OAuthApplicationCreated':
        this.oauthApplications.set(`${event.data.workspaceSlug}/${event.data.applicationId}`, event.data);
        this.oauthApplicationsByClientId.set(event.data.clientId, event.data);
        return;
      case 'OAuthApplicationUpdated': {
        const key = `${event.data.workspaceSlug}/${event.data.applicationId}`;
        const application = this.oauthApplications.get(key);
        if (!application) return;
        const updated = { ...application, ...event.data.changes };
        this.oauthApplications.set(key, updated);
        this.oauthApplicationsByClientId.set(updated.clientId, updated);
        return;
      }
      case 'OAuthApplicationDeleted': {
        const key = `${event.data.workspaceSlug}/${event.data.applicationId}`;
        const application = this.oauthApplications.get(key);
        this.oauthApplications.delete(key);
        if (application) this.oauthApplicationsByClientId.delete(application.clientId);
        return;
      }
      case 'TrackingPlanCreated':
        this.trackingPlans.set(planKey(event.data.workspaceSlug, event.data.planId), {
          plan: event.data,
          connectedSourceSlugs: [],
        });
        return;
      case 'TrackingPlanUpdated': {
        const view = this.trackingPlans.get(planKey(event.data.workspaceSlug, event.data.planId));
        if (view) view.plan = applyTrackingPlanChanges(view.plan, event.data);
        return;
      }
      case 'TrackingPlanDeleted': {
        const key = planKey(event.data.workspaceSlug, event.data.planId);
        for (const sourceSlug of this.trackingPlans.get(key)?.connectedSourceSlugs ?? []) {
          this.planIdBySource.delete(sourceKey(event.data.workspaceSlug, sourceSlug));
        }
        this.trackingPlans.delete(key);
        return;
      }
      case 'TrackingPlanSourceConnected': {
        const view = this.trackingPlans.get(planKey(event.data.workspaceSlug, event.data.planId));
        if (!view) return;
        view.connectedSourceSlugs = [...new Set([...view.connectedSourceSlugs, event.data.sourceSlug])];
        this.planIdBySource.set(
          sourceKey(event.data.workspaceSlug, event.data.sourceSlug),
          event.data.planId,
        );
        return;
      }
      case 'TrackingPlanSourceDisconnected': {
        const view = this.trackingPlans.get(planKey(event.data.workspaceSlug, event.data.planId));
        if (!view) return;
        view.connectedSourceSlugs = view.connectedSourceSlugs.filter(
          (slug) => slug !== event.data.sourceSlug,
        );
        this.planIdBySource.delete(sourceKey(event.data.workspaceSlug, event.data.sourceSlug));
        return;
      }
    }
  }

  private foldDestinationChange(
    event: Extract<
      ConfigEvent,
      {
        type:
          | 'DestinationUpdated'
          | 'DestinationFilterCreated'
          | 'DestinationFilterUpdated'
          | 'DestinationFilterDeleted'
          | 'DestinationReplayRequested'
          | 'DestinationReplayFinished'
          | 'DestinationDeadLettersRedriveRequested'
          | 'DestinationDeadLettersRedriven';
      }
    >,
  ): void {
    const view = this.destinations.get(destinationKey(event.data.sourceId, event.data.destinationSlug));
    if (!view) return;
    switch (event.type) {
      case 'DestinationUpdated':
        view.destination = applyDestinationChanges(view.destination, event.data);
        break;
      case 'DestinationFilterCreated':
        view.filters = [...view.filters, event.data.filter];
        break;
      case 'DestinationFilterUpdated':
        view.filters = view.filters.map((filter) =>
          filter.filterId === event.data.filterId
            ? { ...filter, ...event.data.changes, updateTime: event.data.updateTime }
            : filter,
        );
        break;
      case 'DestinationFilterDeleted':
        view.filters = view.filters.filter((filter) => filter.filterId !== event.data.filterId);
        break;
      case 'DestinationReplayRequested':
        view.replays = [...view.replays, event.data.replay];
        break;
      case 'DestinationReplayFinished':
        view.replays = applyReplayFinished(view.replays, event.data);
        break;
      case 'DestinationDeadLettersRedriveRequested':
        view.pendingRedriveIds = [...view.pendingRedriveIds, event.data.redriveId];
        this.emit({ kind: 'dead-letter-redrive-requested', view, redriveId: event.data.redriveId });
        return;
      case 'DestinationDeadLettersRedriven':
        event.data.delivered.forEach((sequence) => view.redrivenDeadLetters.add(sequence));
        view.pendingRedriveIds = view.pendingRedriveIds.filter((id) => id !== event.data.redriveId);
        return;
    }
    this.emit({ kind: 'destination-upserted', view });
  }

  /** A deleted source takes its destinations and tracking-plan connection with it. */
  private removeSource(workspaceSlug: string, sourceSlug: string): void {
    const key = sourceKey(workspaceSlug, sourceSlug);
    const view = this.sources.get(key);
    if (!view) return;
    this.sources.delete(key);
    this.sourcesByWriteKey.delete(view.source.writeKey);
    for (const destination of this.listDestinations(view.source.sourceId)) {
      this.destinations.delete(
        destinationKey(destination.destination.sourceId, destination.destination.destinationSlug),
      );
      this.emit({ kind: 'destination-deleted', destination: destination.destination });
    }
    const planId = this.planIdBySource.get(key);
    if (planId) {
      const plan = this.trackingPlans.get(planKey(workspaceSlug, planId));
      if (plan) plan.connectedSourceSlugs = plan.connectedSourceSlugs.filter((slug) => slug !== sourceSlug);
      this.planIdBySource.delete(key);
    }
    this.emit({ kind: 'source-deleted', source: view.source });
  }
}
