import type { ConfigEvent, OAuthApplicationRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import {
  oauthApplicationByClientId,
  oauthApplicationOf,
  oauthApplicationsOfWorkspace,
  oauthApplicationsProjection,
} from './oauth-applications.projection';

const application = (workspaceSlug: string, applicationId: string): OAuthApplicationRecord => ({
  workspaceSlug,
  applicationId,
  clientId: `client-${applicationId}`,
  displayName: applicationId,
  publicKeys: [{ keyId: 'k1', pem: '-----BEGIN PUBLIC KEY-----' }],
  tokenLifetimeSeconds: 3600,
  createTime: '2026-01-01T00:00:00.000Z',
});
const created = (workspaceSlug: string, applicationId: string): ConfigEvent => ({
  type: 'OAuthApplicationCreated',
  data: application(workspaceSlug, applicationId),
});

describe('OAuth applications projection', () => {
  it('finds an application by workspace and id, by client id, and lists a workspace’s own', () => {
    const { view } = given(oauthApplicationsProjection, [created('ws', 'a1'), created('other', 'b1')]);
    expect(oauthApplicationOf(view, 'ws', 'a1')).toEqual(application('ws', 'a1'));
    expect(oauthApplicationOf(view, 'other', 'a1')).toBeUndefined();
    expect(oauthApplicationByClientId(view, 'client-b1')).toEqual(application('other', 'b1'));
    expect(oauthApplicationsOfWorkspace(view, 'ws')).toEqual([application('ws', 'a1')]);
  });

  it('applies an update to both lookups', () => {
    const { view } = given(oauthApplicationsProjection, [
      created('ws', 'a1'),
      {
        type: 'OAuthApplicationUpdated',
        data: { workspaceSlug: 'ws', applicationId: 'a1', changes: { tokenLifetimeSeconds: 60 } },
      },
    ]);
    const updated = { ...application('ws', 'a1'), tokenLifetimeSeconds: 60 };
    expect(oauthApplicationOf(view, 'ws', 'a1')).toEqual(updated);
    expect(oauthApplicationByClientId(view, 'client-a1')).toEqual(updated);
  });

  it('forgets a deleted application under both lookups', () => {
    const { view, changes } = given(oauthApplicationsProjection, [created('ws', 'a1')]).when({
      type: 'OAuthApplicationDeleted',
      data: { workspaceSlug: 'ws', applicationId: 'a1' },
    });
    expect(oauthApplicationOf(view, 'ws', 'a1')).toBeUndefined();
    expect(oauthApplicationByClientId(view, 'client-a1')).toBeUndefined();
    expect(changes).toEqual([]);
  });

  it('ignores an update of an application it does not hold', () => {
    const { view } = given(oauthApplicationsProjection, [
      {
        type: 'OAuthApplicationUpdated',
        data: { workspaceSlug: 'ws', applicationId: 'ghost', changes: { displayName: 'x' } },
      },
    ]);
    expect(oauthApplicationsOfWorkspace(view, 'ws')).toEqual([]);
  });
});
