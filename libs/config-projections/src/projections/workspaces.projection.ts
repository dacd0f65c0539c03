import { workspaceDecider, WorkspaceRecord, WorkspaceState } from '@tributary/config-domain';
import { ConfigProjection, unchanged } from './config-projection';

/** Workspaces by slug. */
export type WorkspacesView = Map<string, WorkspaceRecord>;

export const workspacesProjection: ConfigProjection<WorkspacesView> = {
  initial: () => new Map(),

  evolve(view, event) {
    if (event.type !== 'WorkspaceCreated' && event.type !== 'WorkspaceUpdated') return unchanged(view);
    const before = view.get(event.data.slug);
    const stateBefore: WorkspaceState = before
      ? { status: 'active', workspace: before }
      : { status: 'absent' };
    const state = workspaceDecider.evolve(stateBefore, event);
    if (state.status !== 'active') return unchanged(view);
    view.set(state.workspace.slug, state.workspace);
    return { view, changes: [{ kind: 'workspace-upserted', workspace: state.workspace }] };
  },
};

export function workspaceOf(view: WorkspacesView, slug: string): WorkspaceRecord | undefined {
  return view.get(slug);
}

export function allWorkspaces(view: WorkspacesView): WorkspaceRecord[] {
  return [...view.values()];
}
