import type { ConfigEvent } from '@tributary/config-domain';
import type { EventStore, RecordedEvent, Subscription } from '@tributary/event-store';
import { accessTokensProjection } from './projections/access-tokens.projection';
import { ConfigChange, ConfigProjection } from './projections/config-projection';
import { destinationsProjection } from './projections/destinations.projection';
import { functionsProjection } from './projections/functions.projection';
import { oauthApplicationsProjection } from './projections/oauth-applications.projection';
import { regulationsProjection } from './projections/regulations.projection';
import { sourcesProjection } from './projections/sources.projection';
import { trackingPlansProjection } from './projections/tracking-plans.projection';
import { usersProjection } from './projections/users.projection';
import { workspacesProjection } from './projections/workspaces.projection';

/**
 * Every projection the runner keeps, in the order each event is folded into them and their changes
 * are told: destinations before sources, so listeners hear a deleted source's destinations go before
 * the source itself.
 */
export const CONFIG_PROJECTIONS = {
  workspaces: workspacesProjection,
  users: usersProjection,
  accessTokens: accessTokensProjection,
  destinations: destinationsProjection,
  sources: sourcesProjection,
  trackingPlans: trackingPlansProjection,
  oauthApplications: oauthApplicationsProjection,
  regulations: regulationsProjection,
  functions: functionsProjection,
};

type ConfigProjections = typeof CONFIG_PROJECTIONS;
type ProjectionName = keyof ConfigProjections;

/** The current view of each projection. */
export type ConfigViews = {
  readonly [Name in ProjectionName]: ReturnType<ConfigProjections[Name]['initial']>;
};

/**
 * An event a projection could not fold, or a change a listener failed on. The runner skips it and
 * goes on: one event must not stop the subscription, which would freeze every read of the process,
 * nor every later start, which replays the same event.
 */
export interface ConfigFoldFailure {
  stage: 'fold' | 'listener';
  position: bigint;
  streamName: string;
  type: string;
  error: unknown;
}

/**
 * Folds the config events into every projection, from the event store's first event on and then live.
 * It owns what the projections share: the position they are at, `waitFor` for read-your-writes after
 * a command, and telling listeners what changed. Config data is small (thousands of resources,
 * bounded by the workspace quotas), so the views are in memory, rebuilt at every start; the audit
 * trail, which grows with every change, is read from the store page by page instead.
 *
 * Folding is total: an event a projection cannot fold (stored before a validation existed, or data no
 * fold expects) is reported through `onFailure`, counted, and skipped by that projection, and the
 * position still moves on, so `waitFor` never hangs on it.
 */
export class ConfigProjectionRunner {
  private readonly current = Object.fromEntries(
    Object.entries(CONFIG_PROJECTIONS).map(([name, projection]) => [name, projection.initial()]),
  ) as { -readonly [Name in ProjectionName]: ConfigViews[Name] };
  private readonly changeListeners = new Set<(change: ConfigChange) => void>();
  private position = -1n;
  private positionWaiters: { position: bigint; resolve: () => void }[] = [];
  private failures = { fold: 0, listener: 0 };
  /** Events folded in since the process started, and when the last one was: the projections' pulse. */
  private applied = { count: 0, lastAt: 0 };
  private subscription?: Subscription;

  constructor(private readonly onFailure: (failure: ConfigFoldFailure) => void = () => undefined) {}

  /**
   * For the query facade (`ConfigReadModel`) only, which reads them through each projection's query
   * functions: callers ask the facade, never a map.
   */
  get views(): ConfigViews {
    return this.current;
  }

  /** Events skipped because they could not be folded, and listener calls that threw, since start. */
  get foldFailures(): Readonly<{ fold: number; listener: number }> {
    return this.failures;
  }

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

  /** Called with each change after the event that made it is folded into every projection. */
  onChange(listener: (change: ConfigChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /**
   * Catches up from the first event (or from where the views are), then stays live. Resolves once the
   * views hold everything stored when it started.
   */
  start(store: EventStore): Promise<void> {
    return new Promise((resolve, reject) => {
      this.subscription = store.subscribeToAll((event) => this.apply(event), {
        after: this.position >= 0n ? this.position : undefined,
        onCaughtUp: () => resolve(),
        onError: (error) => reject(error),
      });
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  apply(recorded: RecordedEvent): void {
    if (recorded.position <= this.position) return;
    const event = { type: recorded.type, data: recorded.data } as ConfigEvent;
    const changes: ConfigChange[] = [];
    let failed = false;
    for (const name of Object.keys(CONFIG_PROJECTIONS) as ProjectionName[]) {
      const projection = CONFIG_PROJECTIONS[name] as ConfigProjection<ConfigViews[typeof name]>;
      try {
        const evolved = projection.evolve(this.current[name], event);
        (this.current as Record<ProjectionName, unknown>)[name] = evolved.view;
        changes.push(...evolved.changes);
      } catch (error) {
        // Counted once per event, however many projections refused it.
        if (!failed) this.reportFailure('fold', recorded, error);
        failed = true;
      }
    }
    changes.forEach((change) => this.tell(change, recorded));
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

  private tell(change: ConfigChange, recorded: RecordedEvent): void {
    for (const listener of this.changeListeners) {
      try {
        listener(change);
      } catch (error) {
        // The fold is done; one failing listener must not keep the others from hearing of it.
        this.reportFailure('listener', recorded, error);
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
}
