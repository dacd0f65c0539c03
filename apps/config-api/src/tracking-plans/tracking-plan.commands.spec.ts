// The tracking-plan use cases without HTTP, on a real SQLite event store and read model.
import { ConfigApiError } from '@tributary/config-api-access';
import { DomainError } from '@tributary/config-domain';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { SourceConnectionsHandler } from './source-connections.handler';
import { TrackingPlanCommands } from './tracking-plan.commands';

describe('TrackingPlanCommands', () => {
  let harness: CommandHarness;
  let trackingPlans: TrackingPlanCommands;

  const plan = (planId: string) => harness.readModel.trackingPlan('ws', planId);

  beforeEach(async () => {
    harness = await startCommandHarness({ trackingPlans: 3 });
    trackingPlans = new TrackingPlanCommands(
      harness.readModel,
      harness.commands,
      harness.lookup,
      harness.quotas,
      new SourceConnectionsHandler(harness.readModel, harness.commands),
    );
    await harness.seedWorkspace('ws');
    for (const source of ['web', 'server', 'ios']) await harness.seedSource('ws', source);
  });

  afterEach(() => harness.stop());

  it('creates a plan under a fresh rs_ id, with empty rules and name when none are given', async () => {
    const planId = await trackingPlans.create('ws', { display_name: 'Main' }, metadata);

    expect(planId).toMatch(/^rs_[0-9A-Za-z]{27}$/);
    expect(plan(planId)?.plan).toMatchObject({ displayName: 'Main', rules: {}, createTime: metadata.time });
    await expect(trackingPlans.create('nope', { display_name: 'x' }, metadata)).rejects.toEqual(
      new DomainError('not_found', 'workspaces/nope not found'),
    );
  });

  it('refuses a plan past the workspace quota with 429, code 8, and stores nothing', async () => {
    for (let count = 0; count < 3; count += 1)
      await trackingPlans.create('ws', { display_name: 'p' }, metadata);

    const refusal = await trackingPlans
      .create('ws', { display_name: 'one too many' }, metadata)
      .catch((e) => e);

    expect(refusal).toBeInstanceOf(ConfigApiError);
    expect(refusal).toMatchObject({ status: 429, code: 8 });
    expect(harness.readModel.listTrackingPlans('ws')).toHaveLength(3);
  });

  it('refuses, with 400 naming the field, a pattern RE2 cannot run or one over the budgets; stores nothing', async () => {
    const phoneRule = (pattern: string) => ({
      events: [
        {
          name: 'Order',
          rules: { properties: { properties: { properties: { phone: { type: 'string', pattern } } } } },
        },
      ],
    });
    const refusals = await Promise.all(
      ['^(a)\\1$', '(?=a)b', 'x'.repeat(257), '^[0-9]{0,1000}[0-9]{0,1000}$'].map((pattern) =>
        trackingPlans
          .create('ws', { display_name: 'p', rules: phoneRule(pattern) }, metadata)
          .catch((e) => e),
      ),
    );
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(ConfigApiError);
      expect(refusal).toMatchObject({ status: 400, code: 3 });
      expect(refusal.message).toContain(
        'tracking_plan.rules.events[0].rules.properties.properties.properties.phone.pattern: ',
      );
    }
    expect(harness.readModel.listTrackingPlans('ws')).toHaveLength(0);

    // The same check on an update of one part, and on patternProperties keys.
    const planId = await trackingPlans.create(
      'ws',
      { display_name: 'Main', rules: phoneRule('^[0-9]+$') },
      metadata,
    );
    const update = await trackingPlans
      .update(
        'ws',
        planId,
        {
          tracking_plan: { rules: { global: { patternProperties: { '(?<=a)b': { type: 'string' } } } } },
          update_mask: { paths: ['rules.global'] },
        },
        metadata,
      )
      .catch((e) => e);
    expect(update).toMatchObject({ status: 400, code: 3 });
    expect(update.message).toContain('tracking_plan.rules.global.patternProperties["(?<=a)b"]: ');
    expect(plan(planId)?.plan.rules.global).toBeUndefined();
  });

  it('updates what the mask names: one part of the rules, the other parts kept', async () => {
    const planId = await trackingPlans.create(
      'ws',
      {
        display_name: 'Main',
        rules: { events: [{ name: 'Signed Up' }], identify_traits: [{ name: 'email' }] },
      },
      metadata,
    );

    await trackingPlans.update(
      'ws',
      planId,
      {
        tracking_plan: { display_name: 'ignored', rules: { events: [] } },
        update_mask: { paths: ['tracking_plan.rules.events'] },
      },
      metadata,
    );

    expect(plan(planId)?.plan).toMatchObject({
      displayName: 'Main',
      rules: { events: [], identify_traits: [{ name: 'email' }] },
    });
  });

  it('connects sources named by full name or slug once each, and refuses one connected to another plan', async () => {
    const first = await trackingPlans.create('ws', { display_name: 'First' }, metadata);
    const second = await trackingPlans.create('ws', { display_name: 'Second' }, metadata);

    expect(
      await trackingPlans.connect('ws', first, ['workspaces/ws/sources/web', 'web', 'server'], metadata),
    ).toEqual(['web', 'server']);
    expect(plan(first)?.connectedSourceSlugs).toEqual(['web', 'server']);

    await expect(trackingPlans.connect('ws', second, ['server'], metadata)).rejects.toMatchObject({
      kind: 'already_exists',
      message: `workspaces/ws/sources/server is already connected to tracking plan ${first}`,
    });
    await expect(
      trackingPlans.connect('ws', second, ['workspaces/other/sources/x'], metadata),
    ).rejects.toEqual(
      ConfigApiError.invalidArgument(
        'source_name must be workspaces/ws/sources/<slug>, got "workspaces/other/sources/x"',
      ),
    );
    await expect(trackingPlans.connect('ws', 'rs_missing', ['ios'], metadata)).rejects.toEqual(
      ConfigApiError.notFound('workspaces/ws/tracking-plans/rs_missing not found'),
    );
  });

  it('connects a source to one plan only when two plans ask for it at once', async () => {
    const [first, second] = await Promise.all([
      trackingPlans.create('ws', { display_name: 'First' }, metadata),
      trackingPlans.create('ws', { display_name: 'Second' }, metadata),
    ]);

    const outcomes = await Promise.allSettled([
      trackingPlans.connect('ws', first, ['ios'], metadata),
      trackingPlans.connect('ws', second, ['ios'], metadata),
    ]);

    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const connectedTo = [first, second].filter((planId) =>
      plan(planId)?.connectedSourceSlugs.includes('ios'),
    );
    expect(connectedTo).toHaveLength(1);
    expect(harness.readModel.trackingPlanIdOfSource('ws', 'ios')).toBe(connectedTo[0]);
  });

  it('disconnects a source named by its full name, and deletes the plan', async () => {
    const planId = await trackingPlans.create('ws', { display_name: 'Main' }, metadata);
    await trackingPlans.connect('ws', planId, ['web', 'ios'], metadata);

    await trackingPlans.disconnect('ws', planId, 'workspaces/ws/sources/web', metadata);
    expect(plan(planId)?.connectedSourceSlugs).toEqual(['ios']);

    await trackingPlans.delete('ws', planId, metadata);
    expect(plan(planId)).toBeUndefined();
    expect(harness.readModel.trackingPlanIdOfSource('ws', 'ios')).toBeUndefined();
  });
});
