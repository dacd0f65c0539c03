import { accessTokenDecider } from './access-token/access-token.decider';
import { streamNames } from './config-event';
import { destinationDecider } from './destination/destination.decider';
import { functionDecider } from './function/function.decider';
import { oauthApplicationDecider } from './oauth-application/oauth-application.decider';
import { Aggregate } from './shared/aggregate';
import { Decider, DomainEvent } from './shared/decider';
import { regulationDecider } from './regulation/regulation.decider';
import { sourceDecider } from './source/source.decider';
import { sourceTrackingPlanDecider } from './tracking-plan/source-tracking-plan.decider';
import { trackingPlanDecider } from './tracking-plan/tracking-plan.decider';
import { userDecider } from './user/user.decider';
import { workspaceDecider } from './workspace/workspace.decider';

function aggregate<Id, State, Command, Event extends DomainEvent>(
  streamName: (id: Id) => string,
  decider: Decider<State, Command, Event>,
): Aggregate<Id, State, Command, Event> {
  return { streamName, decider };
}

/** Each aggregate of the config domain with the stream its instances live in (docs/architecture.md, Storage). */
export const workspaceAggregate = aggregate(
  (workspaceSlug: string) => streamNames.workspace(workspaceSlug),
  workspaceDecider,
);

export const userAggregate = aggregate((email: string) => streamNames.user(email), userDecider);

export const accessTokenAggregate = aggregate(
  (tokenNumber: number) => streamNames.accessToken(tokenNumber),
  accessTokenDecider,
);

export const sourceAggregate = aggregate(
  ({ workspaceSlug, sourceSlug }: { workspaceSlug: string; sourceSlug: string }) =>
    streamNames.source(workspaceSlug, sourceSlug),
  sourceDecider,
);

export const destinationAggregate = aggregate(
  ({ sourceId, destinationSlug }: { sourceId: string; destinationSlug: string }) =>
    streamNames.destination(sourceId, destinationSlug),
  destinationDecider,
);

export const trackingPlanAggregate = aggregate(
  ({ workspaceSlug, planId }: { workspaceSlug: string; planId: string }) =>
    streamNames.trackingPlan(workspaceSlug, planId),
  trackingPlanDecider,
);

/** A source's tracking-plan connection, keyed by the source id (see `sourceTrackingPlanDecider`). */
export const sourceTrackingPlanAggregate = aggregate(
  (sourceId: string) => streamNames.sourceTrackingPlan(sourceId),
  sourceTrackingPlanDecider,
);

export const oauthApplicationAggregate = aggregate(
  ({ workspaceSlug, applicationId }: { workspaceSlug: string; applicationId: string }) =>
    streamNames.oauthApplication(workspaceSlug, applicationId),
  oauthApplicationDecider,
);

export const regulationAggregate = aggregate(
  ({ workspaceSlug, regulationId }: { workspaceSlug: string; regulationId: string }) =>
    streamNames.regulation(workspaceSlug, regulationId),
  regulationDecider,
);

export const functionAggregate = aggregate(
  ({ workspaceSlug, functionId }: { workspaceSlug: string; functionId: string }) =>
    streamNames.function(workspaceSlug, functionId),
  functionDecider,
);
