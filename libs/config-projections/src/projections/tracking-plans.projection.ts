import {
  ConfigEvent,
  trackingPlanDecider,
  TrackingPlanRecord,
  TrackingPlanState,
} from '@tributary/config-domain';
import { ConfigProjection, unchanged } from './config-projection';
import { sourceKey } from './sources.projection';

export interface TrackingPlanView {
  plan: TrackingPlanRecord;
  connectedSourceSlugs: string[];
}

/** Tracking plans by workspace and plan id, and the plan each source is connected to. */
export interface TrackingPlansView {
  readonly byId: Map<string, TrackingPlanView>;
  /** By `sourceKey`: a source is connected to one plan at most. */
  readonly planIdBySource: Map<string, string>;
}

const planKey = (workspaceSlug: string, planId: string) => `${workspaceSlug}/${planId}`;

export const trackingPlansProjection: ConfigProjection<TrackingPlansView> = {
  initial: () => ({ byId: new Map(), planIdBySource: new Map() }),

  evolve(view, event) {
    switch (event.type) {
      case 'SourceDeleted':
        disconnectDeletedSource(view, event.data.workspaceSlug, event.data.sourceSlug);
        return unchanged(view);
      case 'TrackingPlanCreated':
      case 'TrackingPlanUpdated':
      case 'TrackingPlanDeleted':
      case 'TrackingPlanSourceConnected':
      case 'TrackingPlanSourceDisconnected':
        break;
      default:
        return unchanged(view);
    }
    const { workspaceSlug, planId } = event.data;
    const key = planKey(workspaceSlug, planId);
    const before = view.byId.get(key);
    const stateBefore: TrackingPlanState = before
      ? { status: 'active', plan: before.plan }
      : { status: 'absent' };
    const state = trackingPlanDecider.evolve(stateBefore, event);
    if (state.status === 'active') {
      const connectedSourceSlugs = connectedAfter(before?.connectedSourceSlugs ?? [], event);
      view.byId.set(key, { plan: state.plan, connectedSourceSlugs });
    } else {
      view.byId.delete(key);
    }
    if (event.type === 'TrackingPlanDeleted') {
      for (const sourceSlug of before?.connectedSourceSlugs ?? []) {
        view.planIdBySource.delete(sourceKey(workspaceSlug, sourceSlug));
      }
    }
    // Connections of a plan this process does not know are not recorded, as the plan's own fold does not.
    if (before && event.type === 'TrackingPlanSourceConnected') {
      view.planIdBySource.set(sourceKey(workspaceSlug, event.data.sourceSlug), planId);
    }
    if (before && event.type === 'TrackingPlanSourceDisconnected') {
      view.planIdBySource.delete(sourceKey(workspaceSlug, event.data.sourceSlug));
    }
    // Every change of a plan or of its connections reaches the tracking API's compiled plans.
    return { view, changes: [{ kind: 'protocols-changed', workspaceSlug }] };
  },
};

/**
 * The plan's connected sources, which only the view keeps: connections are decided in each source's
 * stream (`sourceTrackingPlanDecider`), and the plan's decider knows nothing of them.
 */
function connectedAfter(connected: string[], event: ConfigEvent): string[] {
  if (event.type === 'TrackingPlanSourceConnected' && !connected.includes(event.data.sourceSlug))
    return [...connected, event.data.sourceSlug];
  if (event.type === 'TrackingPlanSourceDisconnected' && connected.includes(event.data.sourceSlug))
    return connected.filter((slug) => slug !== event.data.sourceSlug);
  return connected;
}

/**
 * A deleted source loses its connection here, though the plan's own stream still lists it: the plan
 * aggregate never hears of the source's deletion, and a source created again under the slug starts
 * unconnected (connecting it again is a new connection, see the tracking-plan decider).
 */
function disconnectDeletedSource(view: TrackingPlansView, workspaceSlug: string, sourceSlug: string): void {
  const key = sourceKey(workspaceSlug, sourceSlug);
  const planId = view.planIdBySource.get(key);
  if (!planId) return;
  const plan = view.byId.get(planKey(workspaceSlug, planId));
  if (plan) {
    view.byId.set(planKey(workspaceSlug, planId), {
      ...plan,
      connectedSourceSlugs: plan.connectedSourceSlugs.filter((slug) => slug !== sourceSlug),
    });
  }
  view.planIdBySource.delete(key);
}

export function trackingPlanOf(
  view: TrackingPlansView,
  workspaceSlug: string,
  planId: string,
): TrackingPlanView | undefined {
  return view.byId.get(planKey(workspaceSlug, planId));
}

export function trackingPlansOfWorkspace(view: TrackingPlansView, workspaceSlug: string): TrackingPlanView[] {
  return [...view.byId.values()].filter((entry) => entry.plan.workspaceSlug === workspaceSlug);
}

export function trackingPlanIdOfSource(
  view: TrackingPlansView,
  workspaceSlug: string,
  sourceSlug: string,
): string | undefined {
  return view.planIdBySource.get(sourceKey(workspaceSlug, sourceSlug));
}
