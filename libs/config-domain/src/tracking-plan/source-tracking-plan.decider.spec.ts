import { given } from '../testing/given-when-then';
import { SourceTrackingPlanCommand, sourceTrackingPlanDecider } from './source-tracking-plan.decider';

const planId = 'rs_1LMmY55PRAqJrqPrGzyk2nlYuZ3';
const facts = { workspaceSlug: 'ws', sourceSlug: 'js', sourceExists: true, planActive: true };
const connect = (overrides: Partial<SourceTrackingPlanCommand> = {}): SourceTrackingPlanCommand =>
  ({ type: 'ConnectTrackingPlan', planId, ...facts, ...overrides }) as SourceTrackingPlanCommand;
const disconnect = (overrides: Partial<SourceTrackingPlanCommand> = {}): SourceTrackingPlanCommand =>
  ({ type: 'DisconnectTrackingPlan', planId, ...facts, ...overrides }) as SourceTrackingPlanCommand;
const connected = {
  type: 'TrackingPlanSourceConnected' as const,
  data: { workspaceSlug: 'ws', planId, sourceSlug: 'js' },
};
const disconnected = { type: 'TrackingPlanSourceDisconnected' as const, data: connected.data };

describe('sourceTrackingPlanDecider', () => {
  describe('ConnectTrackingPlan', () => {
    it('connects an unconnected source to an active plan', () => {
      given(sourceTrackingPlanDecider).when(connect()).then([connected]);
    });

    it('is idempotent: a source already connected to this plan yields no event and no error', () => {
      given(sourceTrackingPlanDecider, [connected])
        .when(connect({ connectedPlanId: planId }))
        .then([]);
    });

    it('connects anew a source whose connection went with its plan or its deletion (the read model no longer shows it)', () => {
      given(sourceTrackingPlanDecider, [connected]).when(connect()).then([connected]);
    });

    it('refuses a source connected to another plan with already_exists, naming that plan', () => {
      given(sourceTrackingPlanDecider)
        .when(connect({ connectedPlanId: 'rs_other' }))
        .thenThrows(
          'already_exists',
          'workspaces/ws/sources/js is already connected to tracking plan rs_other',
        );
    });

    it('refuses a source that does not exist with not_found', () => {
      given(sourceTrackingPlanDecider)
        .when(connect({ sourceExists: false }))
        .thenThrows('not_found', 'workspaces/ws/sources/js not found');
    });

    it('refuses to connect to a plan that does not exist, or was deleted, with not_found', () => {
      given(sourceTrackingPlanDecider)
        .when(connect({ planActive: false }))
        .thenThrows('not_found', 'tracking plan not found');
    });
  });

  describe('DisconnectTrackingPlan', () => {
    it('disconnects a source connected to the plan', () => {
      given(sourceTrackingPlanDecider, [connected])
        .when(disconnect({ connectedPlanId: planId }))
        .then([disconnected]);
    });

    it('refuses a source that is not connected, or is connected to another plan, with not_found', () => {
      given(sourceTrackingPlanDecider)
        .when(disconnect())
        .thenThrows('not_found', `source js is not connected to tracking plan ${planId}`);
      given(sourceTrackingPlanDecider)
        .when(disconnect({ connectedPlanId: 'rs_other' }))
        .thenThrows('not_found', `source js is not connected to tracking plan ${planId}`);
    });

    it('refuses to disconnect from a deleted plan with not_found', () => {
      given(sourceTrackingPlanDecider, [connected])
        .when(disconnect({ connectedPlanId: planId, planActive: false }))
        .thenThrows('not_found', 'tracking plan not found');
    });
  });
});
