import {
  auditEventName,
  destinationName,
  lastSegment,
  oauthApplicationName,
  sourceName,
  trackingPlanName,
  workspaceName,
} from './resource-names';

describe('Config API resource names (docs/config-api.md §1.3)', () => {
  const destination = { workspaceSlug: 'ws', sourceSlug: 'js', destinationSlug: 'actions-mixpanel' };

  it('nests every name under its parent, with no scheme and no leading slash', () => {
    expect(workspaceName('ws')).toBe('workspaces/ws');
    expect(sourceName(destination)).toBe('workspaces/ws/sources/js');
    expect(destinationName(destination)).toBe('workspaces/ws/sources/js/destinations/actions-mixpanel');
    expect(trackingPlanName({ workspaceSlug: 'ws', planId: 'rs_1AAPTLy8ffAAQth0PvL8rOvU6PJ' })).toBe(
      'workspaces/ws/tracking-plans/rs_1AAPTLy8ffAAQth0PvL8rOvU6PJ',
    );
    expect(oauthApplicationName({ workspaceSlug: 'ws', applicationId: 'oa_1' })).toBe(
      'workspaces/ws/oauth-applications/oa_1',
    );
    expect(auditEventName('ws', 42n)).toBe('workspaces/ws/audit-events/42');
  });

  it('takes the segments as they are: callers building a URL path encode them first', () => {
    expect(workspaceName(encodeURIComponent('a b'))).toBe('workspaces/a%20b');
    expect(sourceName({ workspaceSlug: 'ws', sourceSlug: '' })).toBe('workspaces/ws/sources/');
  });
});

describe('lastSegment', () => {
  it('reads the slug of a full name, ignoring trailing slashes, and keeps a bare slug as it is', () => {
    expect(lastSegment('workspaces/ws/sources/js')).toBe('js');
    expect(lastSegment('workspaces/ws/sources/js//')).toBe('js');
    expect(lastSegment('js')).toBe('js');
    expect(lastSegment('')).toBe('');
  });
});
