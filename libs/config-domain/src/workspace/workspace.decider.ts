import { workspaceName } from '@tributary/contracts';
import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import { LabelRecord, WorkspaceEvent, WorkspaceRecord } from './workspace.events';

/** Labels are for grouping a few dozen sources, not a data store. */
export const MAX_WORKSPACE_LABELS = 100;
const LABEL_PART = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export type WorkspaceState = { status: 'absent' } | { status: 'active'; workspace: WorkspaceRecord };

export type WorkspaceCommand =
  | { type: 'CreateWorkspace'; workspace: WorkspaceRecord }
  | { type: 'UpdateWorkspace'; changes: { displayName?: string; oauthRequired?: boolean } }
  | { type: 'CreateLabel'; label: LabelRecord }
  | { type: 'DeleteLabel'; key: string; value: string };

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
      case 'CreateLabel': {
        if (state.status !== 'active') throw notFound('workspace not found');
        const { key, value, description } = command.label;
        for (const [part, text] of [
          ['key', key],
          ['value', value],
        ] as const) {
          if (typeof text !== 'string' || !LABEL_PART.test(text)) {
            throw invalidArgument(
              `label.${part} must be 1 to 100 letters, digits, "_", "." or "-", starting with a letter or digit`,
            );
          }
        }
        if (description !== undefined && (typeof description !== 'string' || description.length > 500)) {
          throw invalidArgument('label.description must be a string of at most 500 characters');
        }
        const labels = state.workspace.labels ?? [];
        if (labels.some((label) => label.key === key && label.value === value)) {
          throw alreadyExists(`label ${key}:${value} already exists`);
        }
        if (labels.length >= MAX_WORKSPACE_LABELS) {
          throw invalidArgument(`a workspace has at most ${MAX_WORKSPACE_LABELS} labels`);
        }
        const label = { key, value, ...(description !== undefined && { description }) };
        return [
          {
            type: 'WorkspaceUpdated',
            data: { slug: state.workspace.slug, changes: { labels: [...labels, label] } },
          },
        ];
      }
      case 'DeleteLabel': {
        if (state.status !== 'active') throw notFound('workspace not found');
        const labels = state.workspace.labels ?? [];
        const kept = labels.filter((label) => !(label.key === command.key && label.value === command.value));
        if (kept.length === labels.length) throw notFound(`label ${command.key}:${command.value} not found`);
        return [
          { type: 'WorkspaceUpdated', data: { slug: state.workspace.slug, changes: { labels: kept } } },
        ];
      }
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
