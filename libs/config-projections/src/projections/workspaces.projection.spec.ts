import type { ConfigEvent, WorkspaceRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import { allWorkspaces, workspaceOf, workspacesProjection } from './workspaces.projection';

const workspace = (slug: string): WorkspaceRecord => ({
  slug,
  id: `id_${slug}`,
  displayName: slug.toUpperCase(),
  region: 'us-west-2',
  createTime: '2026-01-01T00:00:00.000Z',
});
const created = (slug: string): ConfigEvent => ({ type: 'WorkspaceCreated', data: workspace(slug) });

describe('workspaces projection', () => {
  it('holds every created workspace by slug, in the order they were created', () => {
    const { view } = given(workspacesProjection, [created('beta'), created('alpha')]);
    expect(workspaceOf(view, 'alpha')).toEqual(workspace('alpha'));
    expect(allWorkspaces(view).map((record) => record.slug)).toEqual(['beta', 'alpha']);
    expect(workspaceOf(view, 'gamma')).toBeUndefined();
  });

  it('applies an update over the record, as the workspace decider folds it, and tells listeners', () => {
    const { view, changes } = given(workspacesProjection, [created('alpha')]).when({
      type: 'WorkspaceUpdated',
      data: { slug: 'alpha', changes: { oauthRequired: true } },
    });
    const updated = { ...workspace('alpha'), oauthRequired: true };
    expect(workspaceOf(view, 'alpha')).toEqual(updated);
    expect(changes).toEqual([{ kind: 'workspace-upserted', workspace: updated }]);
  });

  it('tells listeners of a created workspace', () => {
    const { changes } = given(workspacesProjection).when(created('alpha'));
    expect(changes).toEqual([{ kind: 'workspace-upserted', workspace: workspace('alpha') }]);
  });

  it('ignores an update of a workspace it does not hold, and says nothing', () => {
    const { view, changes } = given(workspacesProjection).when({
      type: 'WorkspaceUpdated',
      data: { slug: 'ghost', changes: { displayName: 'Ghost' } },
    });
    expect(allWorkspaces(view)).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('leaves the view as it was on events of other resources', () => {
    const { view, changes } = given(workspacesProjection, [created('alpha')]).when({
      type: 'AccessTokenDeleted',
      data: { number: 1, workspaceSlugs: ['alpha'] },
    });
    expect(allWorkspaces(view)).toEqual([workspace('alpha')]);
    expect(changes).toEqual([]);
  });
});
