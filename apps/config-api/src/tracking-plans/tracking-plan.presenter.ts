import { TrackingPlanRecord } from '@tributary/config-domain';
import { withSeconds } from '../shared/timestamps';

export const trackingPlanResourceName = (plan: TrackingPlanRecord) =>
  `workspaces/${plan.workspaceSlug}/tracking-plans/${plan.planId}`;

export function presentTrackingPlan(plan: TrackingPlanRecord) {
  return {
    name: trackingPlanResourceName(plan),
    display_name: plan.displayName,
    rules: plan.rules,
    create_time: withSeconds(plan.createTime),
    update_time: withSeconds(plan.updateTime),
  };
}

export function presentConnection(workspaceSlug: string, sourceSlug: string, planId: string) {
  return { source_name: `workspaces/${workspaceSlug}/sources/${sourceSlug}`, tracking_plan_id: planId };
}
