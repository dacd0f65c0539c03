import { functionDecider, FunctionKind, FunctionState } from '@tributary/config-domain';
import { ConfigChange, ConfigProjection, unchanged } from './config-projection';
import type { FunctionView } from './config-views';

export type { FunctionView } from './config-views';

/** Functions by workspace, then function id; each inner map in creation order. */
export interface FunctionsView {
  readonly byWorkspace: Map<string, Map<string, FunctionView>>;
}

export const functionsProjection: ConfigProjection<FunctionsView> = {
  initial: () => ({ byWorkspace: new Map() }),

  evolve(view, event) {
    switch (event.type) {
      case 'FunctionCreated':
      case 'FunctionUpdated':
      case 'FunctionDeployed':
      case 'FunctionDeleted':
        break;
      default:
        return unchanged(view);
    }
    const { workspaceSlug, functionId } = event.data;
    const functions = view.byWorkspace.get(workspaceSlug) ?? new Map<string, FunctionView>();
    const before = functions.get(functionId);
    const stateBefore: FunctionState = before
      ? { status: 'active', function: before.function }
      : { status: 'absent' };
    const state = functionDecider.evolve(stateBefore, event);
    const changes: ConfigChange[] = [];
    if (state.status === 'active') {
      const updated: FunctionView = { function: state.function };
      functions.set(functionId, updated);
      view.byWorkspace.set(workspaceSlug, functions);
      changes.push({ kind: 'function-upserted', view: updated });
    } else if (before) {
      functions.delete(functionId);
      if (functions.size === 0) view.byWorkspace.delete(workspaceSlug);
      changes.push({ kind: 'function-deleted', function: before.function });
    }
    return { view, changes };
  },
};

export function functionOf(
  view: FunctionsView,
  workspaceSlug: string,
  functionId: string,
): FunctionView | undefined {
  return view.byWorkspace.get(workspaceSlug)?.get(functionId);
}

/** The workspace's functions, oldest first; only those of `type` when given. */
export function functionsOfWorkspace(
  view: FunctionsView,
  workspaceSlug: string,
  type?: FunctionKind,
): FunctionView[] {
  const all = [...(view.byWorkspace.get(workspaceSlug)?.values() ?? [])];
  return type === undefined ? all : all.filter((candidate) => candidate.function.type === type);
}
