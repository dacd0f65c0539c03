import { AccessTokenEvent } from './access-token/access-token.events';
import { DestinationEvent } from './destination/destination.events';
import { FunctionEvent } from './function/function.events';
import { OAuthApplicationEvent } from './oauth-application/oauth-application.events';
import { RegulationEvent } from './regulation/regulation.events';
import { SourceEvent } from './source/source.events';
import { TrackingPlanEvent } from './tracking-plan/tracking-plan.events';
import { UserEvent } from './user/user.events';
import { WorkspaceEvent } from './workspace/workspace.events';

/** Every event of the config domain; projections switch over `type`. */
export type ConfigEvent =
  | WorkspaceEvent
  | UserEvent
  | AccessTokenEvent
  | SourceEvent
  | DestinationEvent
  | TrackingPlanEvent
  | OAuthApplicationEvent
  | RegulationEvent
  | FunctionEvent;

/** Stream names, one per aggregate instance (docs/architecture.md, Storage). */
export const streamNames = {
  workspace: (workspaceSlug: string) => `workspace-${workspaceSlug}`,
  user: (email: string) => `user-${email.toLowerCase()}`,
  accessToken: (tokenNumber: number) => `access-token-${tokenNumber}`,
  source: (workspaceSlug: string, sourceSlug: string) => `source-${workspaceSlug}/${sourceSlug}`,
  /** Keyed by the source id, so a re-created source starts without the old one's destinations. */
  destination: (sourceId: string, destinationSlug: string) => `destination-${sourceId}/${destinationSlug}`,
  trackingPlan: (workspaceSlug: string, planId: string) => `tracking-plan-${workspaceSlug}/${planId}`,
  /** Keyed by the source id, so a re-created source starts unconnected, as its read model view does. */
  sourceTrackingPlan: (sourceId: string) => `source-tracking-plan-${sourceId}`,
  oauthApplication: (workspaceSlug: string, applicationId: string) =>
    `oauth-application-${workspaceSlug}/${applicationId}`,
  regulation: (workspaceSlug: string, regulationId: string) => `regulation-${workspaceSlug}/${regulationId}`,
  function: (workspaceSlug: string, functionId: string) => `function-${workspaceSlug}/${functionId}`,
};
