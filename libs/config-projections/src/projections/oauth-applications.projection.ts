import {
  oauthApplicationDecider,
  OAuthApplicationRecord,
  OAuthApplicationState,
} from '@tributary/config-domain';
import { ConfigProjection, unchanged } from './config-projection';

/** OAuth applications by workspace and id, and by client id (what a token request names). */
export interface OAuthApplicationsView {
  readonly byId: Map<string, OAuthApplicationRecord>;
  readonly byClientId: Map<string, OAuthApplicationRecord>;
}

const applicationKey = (workspaceSlug: string, applicationId: string) => `${workspaceSlug}/${applicationId}`;

export const oauthApplicationsProjection: ConfigProjection<OAuthApplicationsView> = {
  initial: () => ({ byId: new Map(), byClientId: new Map() }),

  evolve(view, event) {
    switch (event.type) {
      case 'OAuthApplicationCreated':
      case 'OAuthApplicationUpdated':
      case 'OAuthApplicationDeleted':
        break;
      default:
        return unchanged(view);
    }
    const key = applicationKey(event.data.workspaceSlug, event.data.applicationId);
    const before = view.byId.get(key);
    const stateBefore: OAuthApplicationState = before
      ? { status: 'active', application: before }
      : { status: 'absent' };
    const state = oauthApplicationDecider.evolve(stateBefore, event);
    if (state.status === 'active') {
      view.byId.set(key, state.application);
      view.byClientId.set(state.application.clientId, state.application);
    } else if (before) {
      view.byId.delete(key);
      view.byClientId.delete(before.clientId);
    }
    return unchanged(view);
  },
};

export function oauthApplicationOf(
  view: OAuthApplicationsView,
  workspaceSlug: string,
  applicationId: string,
): OAuthApplicationRecord | undefined {
  return view.byId.get(applicationKey(workspaceSlug, applicationId));
}

export function oauthApplicationByClientId(
  view: OAuthApplicationsView,
  clientId: string,
): OAuthApplicationRecord | undefined {
  return view.byClientId.get(clientId);
}

export function oauthApplicationsOfWorkspace(
  view: OAuthApplicationsView,
  workspaceSlug: string,
): OAuthApplicationRecord[] {
  return [...view.byId.values()].filter((application) => application.workspaceSlug === workspaceSlug);
}
