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
  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(WORKSPACE_QUOTA_LIMITS) private readonly limits: WorkspaceQuotaLimits,
  ) {}

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

function quotaExceeded(message: string): ConfigApiError {
  return new ConfigApiError(429, GrpcCode.RESOURCE_EXHAUSTED, message);
}
