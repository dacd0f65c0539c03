import { workspaceName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import { WorkspaceEvent, WorkspaceRecord } from './workspace.events';

export type WorkspaceState = { status: 'absent' } | { status: 'active'; workspace: WorkspaceRecord };

export type WorkspaceCommand =
  | { type: 'CreateWorkspace'; workspace: WorkspaceRecord }
  | { type: 'UpdateWorkspace'; changes: { displayName?: string; oauthRequired?: boolean } };

export const workspaceDecider: Decider<WorkspaceState, WorkspaceCommand, WorkspaceEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateWorkspace':
        if (state.status === 'active')
          throw alreadyExists(`${workspaceName(command.workspace.slug)} already exists`);
        if (!command.workspace.displayName.trim())
          throw invalidArgument('workspace.display_name is required');
        return [{ type: 'WorkspaceCreated', data: command.workspace }];
      case 'UpdateWorkspace':
        if (state.status !== 'active') throw notFound('workspace not found');
        // The same rule as on create: a masked-but-absent display_name arrives as "" (docs/config-api.md §1.6).
        if (command.changes.displayName !== undefined && !command.changes.displayName.trim()) {
          throw invalidArgument('workspace.display_name must not be empty');
        }
        return [{ type: 'WorkspaceUpdated', data: { slug: state.workspace.slug, changes: command.changes } }];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        return { status: 'active', workspace: event.data };
      case 'WorkspaceUpdated':
        if (state.status !== 'active') return state;
        return { status: 'active', workspace: { ...state.workspace, ...event.data.changes } };
    }
  },
};
