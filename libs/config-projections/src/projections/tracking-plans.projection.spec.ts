import type { ConfigEvent, TrackingPlanRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import {
  trackingPlanIdOfSource,
  trackingPlanOf,
  trackingPlansOfWorkspace,
  trackingPlansProjection,
} from './tracking-plans.projection';

const plan = (workspaceSlug: string, planId: string): TrackingPlanRecord => ({
  workspaceSlug,
  planId,
  displayName: planId,
  rules: { events: [], identify_traits: [], group_traits: [] },
  createTime: '2026-01-01T00:00:00.000Z',
  updateTime: '2026-01-01T00:00:00.000Z',
});
const created = (planId: string): ConfigEvent => ({ type: 'TrackingPlanCreated', data: plan('ws', planId) });
const connected = (planId: string, sourceSlug: string): ConfigEvent => ({
  type: 'TrackingPlanSourceConnected',
  data: { workspaceSlug: 'ws', planId, sourceSlug },
});

describe('tracking plans projection', () => {
  it('holds a created plan, unconnected, and lists a workspace’s plans', () => {
    const { view } = given(trackingPlansProjection, [
      created('rs_1'),
      { type: 'TrackingPlanCreated', data: plan('other', 'rs_2') },
    ]);
    expect(trackingPlanOf(view, 'ws', 'rs_1')).toEqual({
      plan: plan('ws', 'rs_1'),
      connectedSourceSlugs: [],
    });
    expect(trackingPlansOfWorkspace(view, 'ws').map((entry) => entry.plan.planId)).toEqual(['rs_1']);
  });

  it('applies an update as the tracking-plan decider folds it, as a new plan record', () => {
    const given_ = given(trackingPlansProjection, [created('rs_1')]);
    const before = trackingPlanOf(given_.view, 'ws', 'rs_1')!.plan;
    const { view } = given_.when({
      type: 'TrackingPlanUpdated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_1',
        changes: { displayName: 'Renamed', ruleParts: { global: { type: 'object' } } },
        updateTime: '2026-02-01T00:00:00.000Z',
      },
    });
    const after = trackingPlanOf(view, 'ws', 'rs_1')!.plan;
    expect(after).toEqual({
      ...plan('ws', 'rs_1'),
      displayName: 'Renamed',
      rules: { ...plan('ws', 'rs_1').rules, global: { type: 'object' } },
      updateTime: '2026-02-01T00:00:00.000Z',
    });
    // The tracking API compiles a plan again when its record is a new one.
    expect(after).not.toBe(before);
  });

  it('records which plan a source is connected to, and forgets it when disconnected', () => {
    const { view } = given(trackingPlansProjection, [
      created('rs_1'),
      connected('rs_1', 'web'),
      connected('rs_1', 'app'),
    ]);
    expect(trackingPlanIdOfSource(view, 'ws', 'web')).toBe('rs_1');
    expect(trackingPlanOf(view, 'ws', 'rs_1')?.connectedSourceSlugs).toEqual(['web', 'app']);
    const after = given(trackingPlansProjection, [created('rs_1'), connected('rs_1', 'web')]).when({
      type: 'TrackingPlanSourceDisconnected',
      data: { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'web' },
    }).view;
    expect(trackingPlanIdOfSource(after, 'ws', 'web')).toBeUndefined();
    expect(trackingPlanOf(after, 'ws', 'rs_1')?.connectedSourceSlugs).toEqual([]);
  });

  it('does not record a connection to a plan it does not hold', () => {
    const { view } = given(trackingPlansProjection, [connected('ghost', 'web')]);
    expect(trackingPlanIdOfSource(view, 'ws', 'web')).toBeUndefined();
  });

  it('drops a deleted plan and the connections of its sources', () => {
    const { view } = given(trackingPlansProjection, [
      created('rs_1'),
      connected('rs_1', 'web'),
      { type: 'TrackingPlanDeleted', data: { workspaceSlug: 'ws', planId: 'rs_1' } },
    ]);
    expect(trackingPlanOf(view, 'ws', 'rs_1')).toBeUndefined();
    expect(trackingPlanIdOfSource(view, 'ws', 'web')).toBeUndefined();
  });

  it('drops the connection of a deleted source, from the plan too', () => {
    const { view } = given(trackingPlansProjection, [
      created('rs_1'),
      connected('rs_1', 'web'),
      connected('rs_1', 'app'),
      { type: 'SourceDeleted', data: { workspaceSlug: 'ws', sourceSlug: 'web', sourceId: 'id_web' } },
    ]);
    expect(trackingPlanIdOfSource(view, 'ws', 'web')).toBeUndefined();
    expect(trackingPlanIdOfSource(view, 'ws', 'app')).toBe('rs_1');
    expect(trackingPlanOf(view, 'ws', 'rs_1')?.connectedSourceSlugs).toEqual(['app']);
  });

  it('tells Protocols of every plan event of the workspace, and of nothing else', () => {
    const protocolsChanged = [{ kind: 'protocols-changed', workspaceSlug: 'ws' }];
    expect(given(trackingPlansProjection).when(created('rs_1')).changes).toEqual(protocolsChanged);
    expect(given(trackingPlansProjection, [created('rs_1')]).when(connected('rs_1', 'web')).changes).toEqual(
      protocolsChanged,
    );
    // A plan it does not hold still concerns the workspace's compiled plans.
    expect(given(trackingPlansProjection).when(connected('ghost', 'web')).changes).toEqual(protocolsChanged);
    expect(
      given(trackingPlansProjection, [created('rs_1'), connected('rs_1', 'web')]).when({
        type: 'SourceDeleted',
        data: { workspaceSlug: 'ws', sourceSlug: 'web', sourceId: 'id_web' },
      }).changes,
    ).toEqual([]);
  });
});
