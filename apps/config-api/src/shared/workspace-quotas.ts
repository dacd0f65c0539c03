import { Inject, Injectable } from '@nestjs/common';
import { ConfigReadModel, type DestinationView } from '@tributary/config-projections';
import { ConfigApiError, GrpcCode } from '@tributary/config-api-access';

/** Most resources of each kind one workspace may hold (set by the environment variable named). */
export interface WorkspaceQuotaLimits {
  /** `WORKSPACE_MAX_SOURCES` */
  sources: number;
  /** `WORKSPACE_MAX_DESTINATIONS`, over all the workspace's sources. */
  destinations: number;
  /** `DESTINATION_MAX_FILTERS`, per destination. */
  filtersPerDestination: number;
  /** `WORKSPACE_MAX_TRACKING_PLANS` */
  trackingPlans: number;
  /** `WORKSPACE_MAX_OAUTH_APPLICATIONS` */
  oauthApplications: number;
  /** `WORKSPACE_MAX_RUNNING_REPLAYS`, replays not finished yet. */
  runningReplays: number;
  /** `WORKSPACE_MAX_CONFIG_BYTES`: bytes of JSON of all the workspace's sources, destinations, filters and plans. */
  configBytes: number;
  /** `FILTER_MAX_BYTES`: bytes of JSON of one filter. */
  filterBytes: number;
}

export const WORKSPACE_QUOTA_LIMITS = Symbol('WorkspaceQuotaLimits');

/**
 * Per-workspace counts checked before a create. Every process holds every workspace's resources in
 * memory and replays every event at start, so one tenant creating without end would cost all of
 * them; a running replay reads the log from its start time and competes with live delivery.
 *
 * A quota reached is 429 with code 8, RESOURCE_EXHAUSTED: gRPC's code for an exhausted per-user quota,
 * which the spec's error table maps to 429. No `Retry-After`, unlike the rate limit: waiting does not
 * help, deleting a resource (or an operator raising the limit) does, and the message says which.
 *
 * The counts come from the read model, so two creates racing in different processes may both pass at
 * the last free place: a quota can be overshot by the number of concurrent writers, never by more.
 */
@Injectable()
export class WorkspaceQuotas {
  private readonly recordBytes = new WeakMap<object, number>();

  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(WORKSPACE_QUOTA_LIMITS) private readonly limits: WorkspaceQuotaLimits,
  ) {}

  /**
   * Counts cap how many resources a workspace holds, not how large they are: every process keeps
   * every resource in memory, so the bytes of JSON of a workspace's resources have a budget too.
   * `added` is what a write brings (the resource, or an update's changes); an update no larger than
   * the record it changes is never refused, so a workspace at its budget can still disable or shrink.
   */
  assertWithinConfigBytes(workspaceSlug: string, added: unknown, replaced?: object): void {
    const addedBytes = jsonBytes(added);
    if (replaced !== undefined && addedBytes <= this.bytesOf(replaced)) return;
    const stored = this.configBytesOf(workspaceSlug);
    if (stored + addedBytes <= this.limits.configBytes) return;
    throw quotaExceeded(
      `quota exceeded: workspace ${workspaceSlug} holds ${stored} bytes of configuration and this write ` +
        `adds ${addedBytes}, past the ${this.limits.configBytes} a workspace may hold (WORKSPACE_MAX_CONFIG_BYTES); ` +
        'delete or shrink resources first',
    );
  }

  /** One filter's JSON at most `FILTER_MAX_BYTES` (400, code 3): the router keeps and runs every one. */
  assertFilterSize(filter: unknown): void {
    const bytes = jsonBytes(filter);
    if (bytes <= this.limits.filterBytes) return;
    throw ConfigApiError.invalidArgument(
      `filter: ${bytes} bytes of JSON; a filter may have at most ${this.limits.filterBytes} (FILTER_MAX_BYTES)`,
    );
  }

  private configBytesOf(workspaceSlug: string): number {
    let total = 0;
    for (const view of this.readModel.listSources(workspaceSlug)) total += this.bytesOf(view.source);
    for (const view of this.destinationsOf(workspaceSlug)) {
      total += this.bytesOf(view.destination);
      for (const filter of view.filters) total += this.bytesOf(filter);
    }
    for (const view of this.readModel.listTrackingPlans(workspaceSlug)) total += this.bytesOf(view.plan);
    return total;
  }

  /** Records are replaced, never changed, on every update: each one's size is measured once. */
  private bytesOf(record: object): number {
    let bytes = this.recordBytes.get(record);
    if (bytes === undefined) {
      bytes = jsonBytes(record);
      this.recordBytes.set(record, bytes);
    }
    return bytes;
  }

  assertCanAddSource(workspaceSlug: string): void {
    const count = this.readModel.listSources(workspaceSlug).length;
    this.assertBelow(count, this.limits.sources, workspaceSlug, 'sources', 'WORKSPACE_MAX_SOURCES');
  }

  assertCanAddDestination(workspaceSlug: string): void {
    const count = this.destinationsOf(workspaceSlug).length;
    this.assertBelow(
      count,
      this.limits.destinations,
      workspaceSlug,
      'destinations',
      'WORKSPACE_MAX_DESTINATIONS',
    );
  }

  assertCanAddFilter(view: DestinationView): void {
    const { filters, destination } = view;
    if (filters.length < this.limits.filtersPerDestination) return;
    throw quotaExceeded(
      `quota exceeded: destination ${destination.destinationSlug} of source ${destination.sourceSlug} ` +
        `already has ${filters.length} filters, the most a destination may have (DESTINATION_MAX_FILTERS); ` +
        'delete a filter or combine filters first',
    );
  }

  assertCanAddTrackingPlan(workspaceSlug: string): void {
    const count = this.readModel.listTrackingPlans(workspaceSlug).length;
    this.assertBelow(
      count,
      this.limits.trackingPlans,
      workspaceSlug,
      'tracking plans',
      'WORKSPACE_MAX_TRACKING_PLANS',
    );
  }

  assertCanAddOAuthApplication(workspaceSlug: string): void {
    const count = this.readModel.listOAuthApplications(workspaceSlug).length;
    this.assertBelow(
      count,
      this.limits.oauthApplications,
      workspaceSlug,
      'OAuth applications',
      'WORKSPACE_MAX_OAUTH_APPLICATIONS',
    );
  }

  assertCanStartReplay(workspaceSlug: string): void {
    const running = this.destinationsOf(workspaceSlug)
      .flatMap((view) => view.replays)
      .filter((replay) => replay.state === 'RUNNING').length;
    if (running < this.limits.runningReplays) return;
    throw quotaExceeded(
      `quota exceeded: workspace ${workspaceSlug} already has ${running} replays running, the most at once ` +
        '(WORKSPACE_MAX_RUNNING_REPLAYS); request this one when a running replay has finished',
    );
  }

  private destinationsOf(workspaceSlug: string): DestinationView[] {
    return this.readModel
      .listAllDestinations()
      .filter((view) => view.destination.workspaceSlug === workspaceSlug);
  }

  private assertBelow(count: number, limit: number, workspaceSlug: string, what: string, variable: string) {
    if (count < limit) return;
    throw quotaExceeded(
      `quota exceeded: workspace ${workspaceSlug} already has ${count} ${what}, the most a workspace may ` +
        `have (${variable}); delete one first`,
    );
  }
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

function quotaExceeded(message: string): ConfigApiError {
  return new ConfigApiError(429, GrpcCode.RESOURCE_EXHAUSTED, message);
}
