import {
  REGULATION_TYPE_RULES,
  regulationDecider,
  RegulationRecord,
  RegulationState,
} from '@tributary/config-domain';
import { ConfigChange, ConfigProjection, unchanged } from './config-projection';
import type { RegulationView } from './config-views';

export type { RegulationView } from './config-views';

/**
 * The users a workspace suppresses, by subject id, each with the regulations that suppress it (a
 * cancelled one lifts only its own part). Read on the ingest path for every message, so it is kept
 * as maps the tracking API asks `has` of; it is changed in place, by the fold only.
 */
export interface WorkspaceSuppressions {
  /** Suppressed for every source of the workspace. */
  readonly workspaceWide: Map<string, Set<string>>;
  /** Suppressed for one source, by source id. */
  readonly bySource: Map<string, Map<string, Set<string>>>;
}

export interface RegulationsView {
  /** By workspace, then regulation id; each inner map in creation order. */
  readonly byWorkspace: Map<string, Map<string, RegulationView>>;
  /** Only workspaces that suppress someone: a workspace absent here costs ingest one map lookup. */
  readonly suppressions: Map<string, WorkspaceSuppressions>;
}

export const regulationsProjection: ConfigProjection<RegulationsView> = {
  initial: () => ({ byWorkspace: new Map(), suppressions: new Map() }),

  evolve(view, event) {
    switch (event.type) {
      case 'RegulationCreated':
      case 'RegulationDeleted':
      case 'RegulationStarted':
      case 'RegulationDestinationSettled':
      case 'RegulationFinished':
        break;
      default:
        return unchanged(view);
    }
    const { workspaceSlug, regulationId } = event.data;
    const regulations = view.byWorkspace.get(workspaceSlug) ?? new Map<string, RegulationView>();
    const before = regulations.get(regulationId);
    const stateBefore: RegulationState = before ? { status: 'active', ...before } : { status: 'absent' };
    const state = regulationDecider.evolve(stateBefore, event);

    if (event.type === 'RegulationCreated') applySuppression(view, event.data, 'add');
    if (event.type === 'RegulationDeleted') applySuppression(view, event.data, 'cancel');

    const changes: ConfigChange[] = [];
    if (state.status === 'active') {
      const updated: RegulationView = { regulation: state.regulation, progress: state.progress };
      regulations.set(regulationId, updated);
      view.byWorkspace.set(workspaceSlug, regulations);
      changes.push({ kind: 'regulation-upserted', view: updated });
    } else if (before) {
      regulations.delete(regulationId);
    }
    return { view, changes };
  },
};

/**
 * Suppressions take effect when the regulation is recorded, before any deletion runs, so no message of
 * a subject is stored while its older ones are erased. UNSUPPRESS at workspace scope lifts a subject
 * everywhere in the workspace, at source scope only on that source (docs/regulations.md §3).
 */
function applySuppression(view: RegulationsView, regulation: RegulationRecord, how: 'add' | 'cancel'): void {
  const rules = REGULATION_TYPE_RULES[regulation.regulationType];
  if (!rules.suppresses && !(rules.unsuppresses && how === 'add')) return;
  const { workspaceSlug, regulationId, subjectIds, source } = regulation;
  const suppressions = view.suppressions.get(workspaceSlug) ?? {
    workspaceWide: new Map<string, Set<string>>(),
    bySource: new Map<string, Map<string, Set<string>>>(),
  };
  const scoped = (sourceId: string) => {
    let subjects = suppressions.bySource.get(sourceId);
    if (!subjects) suppressions.bySource.set(sourceId, (subjects = new Map()));
    return subjects;
  };
  const subjects = source ? scoped(source.sourceId) : suppressions.workspaceWide;

  if (rules.suppresses && how === 'add') {
    for (const subjectId of subjectIds) {
      const by = subjects.get(subjectId);
      if (by) by.add(regulationId);
      else subjects.set(subjectId, new Set([regulationId]));
    }
  } else if (rules.suppresses) {
    for (const subjectId of subjectIds) {
      const by = subjects.get(subjectId);
      by?.delete(regulationId);
      if (by?.size === 0) subjects.delete(subjectId);
    }
  } else {
    const lifted = source ? [subjects] : [subjects, ...suppressions.bySource.values()];
    for (const from of lifted) for (const subjectId of subjectIds) from.delete(subjectId);
  }

  for (const [sourceId, bySubject] of suppressions.bySource) {
    if (bySubject.size === 0) suppressions.bySource.delete(sourceId);
  }
  if (suppressions.workspaceWide.size === 0 && suppressions.bySource.size === 0) {
    view.suppressions.delete(workspaceSlug);
  } else {
    view.suppressions.set(workspaceSlug, suppressions);
  }
}

export function regulationOf(
  view: RegulationsView,
  workspaceSlug: string,
  regulationId: string,
): RegulationView | undefined {
  return view.byWorkspace.get(workspaceSlug)?.get(regulationId);
}

/** The workspace's regulations in creation order, oldest first. */
export function regulationsOfWorkspace(view: RegulationsView, workspaceSlug: string): RegulationView[] {
  return [...(view.byWorkspace.get(workspaceSlug)?.values() ?? [])];
}

export function allRegulations(view: RegulationsView): RegulationView[] {
  return [...view.byWorkspace.values()].flatMap((regulations) => [...regulations.values()]);
}

export function suppressionsOfWorkspace(
  view: RegulationsView,
  workspaceSlug: string,
): WorkspaceSuppressions | undefined {
  return view.suppressions.get(workspaceSlug);
}

/** Whether a message of `sourceId` with this `userId` is dropped at ingest. */
export function isSuppressedUser(
  suppressions: WorkspaceSuppressions,
  sourceId: string,
  userId: unknown,
): boolean {
  if (typeof userId !== 'string') return false;
  return suppressions.workspaceWide.has(userId) || suppressions.bySource.get(sourceId)?.has(userId) === true;
}
