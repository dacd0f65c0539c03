import type {
  AccessTokenRecord,
  FunctionKind,
  OAuthApplicationRecord,
  SourceRecord,
  UserRecord,
  WorkspaceRecord,
} from '@tributary/config-domain';
import { ConfigProjectionRunner } from './config-projection.runner';
import {
  accessTokenByHash,
  accessTokenByNumber,
  allAccessTokens,
  nextAccessTokenNumber,
} from './projections/access-tokens.projection';
import type { ConfigChange } from './projections/config-projection';
import {
  allDestinations,
  destinationOf,
  destinationsOfSource,
  DestinationView,
} from './projections/destinations.projection';
import { functionOf, functionsOfWorkspace, FunctionView } from './projections/functions.projection';
import {
  oauthApplicationByClientId,
  oauthApplicationOf,
  oauthApplicationsOfWorkspace,
} from './projections/oauth-applications.projection';
import {
  allRegulations,
  regulationOf,
  regulationsOfWorkspace,
  RegulationView,
  suppressionsOfWorkspace,
  WorkspaceSuppressions,
} from './projections/regulations.projection';
import { sourceByWriteKey, sourceOf, sourcesOfWorkspace, SourceView } from './projections/sources.projection';
import {
  trackingPlanIdOfSource,
  trackingPlanOf,
  trackingPlansOfWorkspace,
  TrackingPlanView,
} from './projections/tracking-plans.projection';
import { userByEmail } from './projections/users.projection';
import { allWorkspaces, workspaceOf } from './projections/workspaces.projection';

/**
 * Every read of the Config API, the tracking API and the router comes from here: one query facade over
 * the projections the runner keeps (`projections/`), so callers ask questions and never hold a map.
 * It folds nothing itself; `waitFor`, `onChange` and `currentPosition` are the runner's.
 */
export class ConfigReadModel {
  constructor(private readonly runner: ConfigProjectionRunner) {}

  get currentPosition(): bigint {
    return this.runner.currentPosition;
  }

  /** Resolves once every event up to `position` is folded in: read-your-writes after a command. */
  waitFor(position: bigint): Promise<void> {
    return this.runner.waitFor(position);
  }

  onChange(listener: (change: ConfigChange) => void): () => void {
    return this.runner.onChange(listener);
  }

  workspace(slug: string): WorkspaceRecord | undefined {
    return workspaceOf(this.runner.views.workspaces, slug);
  }

  listWorkspaces(): WorkspaceRecord[] {
    return allWorkspaces(this.runner.views.workspaces);
  }

  /** `email` in any case. */
  user(email: string): UserRecord | undefined {
    return userByEmail(this.runner.views.users, email);
  }

  /** A token that was not deleted, by the hash of its secret. */
  accessTokenByHash(tokenHash: string): AccessTokenRecord | undefined {
    return accessTokenByHash(this.runner.views.accessTokens, tokenHash);
  }

  /** A token that was not deleted, by its number. */
  accessToken(number: number): AccessTokenRecord | undefined {
    return accessTokenByNumber(this.runner.views.accessTokens, number);
  }

  /** Tokens that were not deleted, in the order they were created. */
  listAccessTokens(): AccessTokenRecord[] {
    return allAccessTokens(this.runner.views.accessTokens);
  }

  nextTokenNumber(): number {
    return nextAccessTokenNumber(this.runner.views.accessTokens);
  }

  source(workspaceSlug: string, sourceSlug: string): SourceView | undefined {
    return sourceOf(this.runner.views.sources, workspaceSlug, sourceSlug);
  }

  listSources(workspaceSlug: string): SourceView[] {
    return sourcesOfWorkspace(this.runner.views.sources, workspaceSlug);
  }

  sourceByWriteKey(writeKey: string): SourceRecord | undefined {
    return sourceByWriteKey(this.runner.views.sources, writeKey);
  }

  destination(sourceId: string, destinationSlug: string): DestinationView | undefined {
    return destinationOf(this.runner.views.destinations, sourceId, destinationSlug);
  }

  listDestinations(sourceId: string): DestinationView[] {
    return destinationsOfSource(this.runner.views.destinations, sourceId);
  }

  listAllDestinations(): DestinationView[] {
    return allDestinations(this.runner.views.destinations);
  }

  trackingPlan(workspaceSlug: string, planId: string): TrackingPlanView | undefined {
    return trackingPlanOf(this.runner.views.trackingPlans, workspaceSlug, planId);
  }

  listTrackingPlans(workspaceSlug: string): TrackingPlanView[] {
    return trackingPlansOfWorkspace(this.runner.views.trackingPlans, workspaceSlug);
  }

  trackingPlanIdOfSource(workspaceSlug: string, sourceSlug: string): string | undefined {
    return trackingPlanIdOfSource(this.runner.views.trackingPlans, workspaceSlug, sourceSlug);
  }

  oauthApplication(workspaceSlug: string, applicationId: string): OAuthApplicationRecord | undefined {
    return oauthApplicationOf(this.runner.views.oauthApplications, workspaceSlug, applicationId);
  }

  oauthApplicationByClientId(clientId: string): OAuthApplicationRecord | undefined {
    return oauthApplicationByClientId(this.runner.views.oauthApplications, clientId);
  }

  listOAuthApplications(workspaceSlug: string): OAuthApplicationRecord[] {
    return oauthApplicationsOfWorkspace(this.runner.views.oauthApplications, workspaceSlug);
  }

  regulation(workspaceSlug: string, regulationId: string): RegulationView | undefined {
    return regulationOf(this.runner.views.regulations, workspaceSlug, regulationId);
  }

  /** The workspace's regulations, oldest first. */
  listRegulations(workspaceSlug: string): RegulationView[] {
    return regulationsOfWorkspace(this.runner.views.regulations, workspaceSlug);
  }

  listAllRegulations(): RegulationView[] {
    return allRegulations(this.runner.views.regulations);
  }

  /** Who the workspace suppresses (ask with `isSuppressedUser`); undefined when nobody. */
  suppressions(workspaceSlug: string): WorkspaceSuppressions | undefined {
    return suppressionsOfWorkspace(this.runner.views.regulations, workspaceSlug);
  }

  function(workspaceSlug: string, functionId: string): FunctionView | undefined {
    return functionOf(this.runner.views.functions, workspaceSlug, functionId);
  }

  /** The workspace's functions, oldest first; only those of `type` when given. */
  listFunctions(workspaceSlug: string, type?: FunctionKind): FunctionView[] {
    return functionsOfWorkspace(this.runner.views.functions, workspaceSlug, type);
  }
}
