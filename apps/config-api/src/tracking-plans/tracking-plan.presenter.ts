import { sourceName, trackingPlanName } from '@tributary/contracts';
import { TrackingPlanRecord } from '@tributary/config-domain';
import { withSeconds } from '../shared/timestamps';

export function presentTrackingPlan(plan: TrackingPlanRecord) {
  return {
    name: trackingPlanName(plan),
    display_name: plan.displayName,
    rules: plan.rules,
    create_time: withSeconds(plan.createTime),
    update_time: withSeconds(plan.updateTime),
  };
}

export function presentConnection(workspaceSlug: string, sourceSlug: string, planId: string) {
  return { source_name: sourceName({ workspaceSlug, sourceSlug }), tracking_plan_id: planId };
}
