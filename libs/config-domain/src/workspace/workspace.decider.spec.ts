import { given, stateAfter } from '../testing/given-when-then';
import { workspaceDecider } from './workspace.decider';
import { WorkspaceEvent, WorkspaceRecord } from './workspace.events';

const myWorkspace: WorkspaceRecord = {
  slug: 'myworkspace',
  id: 'e5bdb0902b',
  displayName: 'My Space',
  region: 'local',
  createTime: '2018-08-08T13:24:02.651Z',
};
const workspaceCreated: WorkspaceEvent = { type: 'WorkspaceCreated', data: myWorkspace };

describe('workspace decider', () => {
  describe('CreateWorkspace', () => {
    it('creates a workspace that does not exist yet', () => {
      const { state } = given(workspaceDecider)
        .when({ type: 'CreateWorkspace', workspace: myWorkspace })
        .then([workspaceCreated]);
      expect(state).toEqual({ status: 'active', workspace: myWorkspace });
    });

    it('refuses a second workspace of the same slug with already_exists', () => {
      given(workspaceDecider, [workspaceCreated])
        .when({
          type: 'CreateWorkspace',
          workspace: { ...myWorkspace, id: 'ffffffffff', displayName: 'Other' },
        })
        .thenThrows('already_exists', 'workspaces/myworkspace already exists');
    });

    it.each(['', '   '])('refuses a blank display name (%j) with invalid_argument', (displayName) => {
      given(workspaceDecider)
        .when({ type: 'CreateWorkspace', workspace: { ...myWorkspace, displayName } })
        .thenThrows('invalid_argument', 'workspace.display_name is required');
    });
  });

  describe('UpdateWorkspace', () => {
    it('renames an existing workspace and keeps its other fields', () => {
      const { state } = given(workspaceDecider, [workspaceCreated])
        .when({ type: 'UpdateWorkspace', changes: { displayName: 'Renamed' } })
        .then([
          { type: 'WorkspaceUpdated', data: { slug: 'myworkspace', changes: { displayName: 'Renamed' } } },
        ]);
      expect(state).toEqual({ status: 'active', workspace: { ...myWorkspace, displayName: 'Renamed' } });
    });

    it('accepts an update with no changes, leaving the workspace as it was', () => {
      const { state } = given(workspaceDecider, [workspaceCreated])
        .when({ type: 'UpdateWorkspace', changes: {} })
        .then([{ type: 'WorkspaceUpdated', data: { slug: 'myworkspace', changes: {} } }]);
      expect(state).toEqual({ status: 'active', workspace: myWorkspace });
    });

    it.each(['', '  '])('refuses renaming to a blank display name (%j), as create does', (displayName) => {
      // A masked-but-absent display_name resolves to "" (docs/config-api.md §1.6); a workspace must keep a name.
      given(workspaceDecider, [workspaceCreated])
        .when({ type: 'UpdateWorkspace', changes: { displayName } })
        .thenThrows('invalid_argument', 'workspace.display_name');
    });

    it('refuses to update a workspace that does not exist with not_found', () => {
      given(workspaceDecider)
        .when({ type: 'UpdateWorkspace', changes: { displayName: 'Renamed' } })
        .thenThrows('not_found', 'workspace not found');
    });
  });

  it('ignores an update event without a created workspace when folding', () => {
    expect(
      stateAfter(workspaceDecider, [
        { type: 'WorkspaceUpdated', data: { slug: 'ghost', changes: { displayName: 'X' } } },
      ]),
    ).toEqual({ status: 'absent' });
  });
});
