import { given, stateAfter } from '../testing/given-when-then';
import { normalizeRules, TrackingPlanCommand, trackingPlanDecider } from './tracking-plan.decider';
import { TrackingPlanEvent, TrackingPlanRecord, TrackingPlanRules } from './tracking-plan.events';

const planIdentity = { workspaceSlug: 'ws', planId: 'rs_1LMmY55PRAqJrqPrGzyk2nlYuZ3' };
const createdAt = '2019-05-17T15:19:44Z';
const later = '2019-10-20T03:47:14Z';

/** JSON Schema content that must come back exactly as written (docs/config-api.md §3, "Store rule schemas verbatim"). */
const orderCompletedSchema = {
  $schema: 'http://json-schema.org/draft-04/schema#',
  id: 'https://example.com/schemas/order-completed',
  labels: { team: 'growth', priority: 'high' },
  type: 'object',
  properties: {
    context: {},
    traits: {},
    properties: {
      type: 'object',
      properties: {
        coupon: { type: ['string', 'null'], pattern: '^[A-Z0-9]+$' },
        currency: { enum: ['EUR', 'USD', null] },
        placed_at: { type: 'string', format: 'date-time' },
        total: { type: 'number', minimum: 0 },
      },
      required: ['currency'],
      additionalProperties: false,
    },
  },
  required: ['properties'],
};
const commandRunSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  labels: {},
  properties: { context: {}, traits: {}, properties: { type: 'object', properties: {}, required: [] } },
  required: ['properties'],
};
const orderCompleted = {
  name: 'Order Completed',
  description: 'a checkout finished',
  version: 2,
  rules: orderCompletedSchema,
};
const commandRun = { name: 'Command Run', description: '', version: 1, rules: commandRunSchema };
const globalSchema = {
  type: 'object',
  properties: { context: { type: 'object' }, traits: {}, properties: {} },
};
const identifySchema = {
  $schema: 'http://json-schema.org/draft-04/schema#',
  type: 'object',
  properties: { traits: { type: 'object', properties: { email: { type: ['string', 'null'] } } } },
};

const emptyRules: TrackingPlanRules = { events: [], identify_traits: [], group_traits: [] };
const plan: TrackingPlanRecord = {
  ...planIdentity,
  displayName: 'Typewriter Tracking Plan',
  rules: { events: [commandRun], identify_traits: [], group_traits: [] },
  createTime: createdAt,
  updateTime: createdAt,
};
const planCreated: TrackingPlanEvent = { type: 'TrackingPlanCreated', data: plan };
const planDeleted: TrackingPlanEvent = { type: 'TrackingPlanDeleted', data: planIdentity };
const createCommand = (rules: unknown, displayName = plan.displayName): TrackingPlanCommand => ({
  type: 'CreateTrackingPlan',
  plan: { ...plan, displayName, rules },
  workspaceExists: true,
});
const update = (
  changes: Extract<TrackingPlanCommand, { type: 'UpdateTrackingPlan' }>['changes'],
): TrackingPlanCommand => ({
  type: 'UpdateTrackingPlan',
  changes,
  now: later,
});
const connected = (sourceSlug: string): TrackingPlanEvent => ({
  type: 'TrackingPlanSourceConnected',
  data: { ...planIdentity, sourceSlug },
});
const disconnected = (sourceSlug: string): TrackingPlanEvent => ({
  type: 'TrackingPlanSourceDisconnected',
  data: { ...planIdentity, sourceSlug },
});

function rulesAfter(history: TrackingPlanEvent[]): TrackingPlanRules {
  const state = stateAfter(trackingPlanDecider, history);
  if (state.status !== 'active') throw new Error(`expected an active plan, got ${state.status}`);
  return state.plan.rules;
}

describe('tracking plan decider', () => {
  describe('CreateTrackingPlan', () => {
    it('creates a plan with its rules', () => {
      const { state } = given(trackingPlanDecider).when(createCommand(plan.rules)).then([planCreated]);
      expect(state).toEqual({ status: 'active', plan });
    });

    it('fills the always-present parts: missing rules, missing parts and null traits become empty lists', () => {
      for (const rules of [
        undefined,
        null,
        {},
        { events: null, identify_traits: null, group_traits: null },
      ]) {
        given(trackingPlanDecider)
          .when(createCommand(rules))
          .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules: emptyRules } }]);
      }
    });

    it('turns identify_traits: null (sent by C4) into [] and keeps the other parts', () => {
      given(trackingPlanDecider)
        .when(createCommand({ events: [commandRun], identify_traits: null, group_traits: [{ key: 'plan' }] }))
        .then([
          {
            type: 'TrackingPlanCreated',
            data: {
              ...plan,
              rules: { events: [commandRun], identify_traits: [], group_traits: [{ key: 'plan' }] },
            },
          },
        ]);
    });

    it('includes global, identify and group only when they are set', () => {
      const { state } = given(trackingPlanDecider)
        .when(createCommand({ events: [], global: null, identify: undefined }))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules: emptyRules } }]);
      const rules = state.status === 'active' ? state.plan.rules : undefined;
      expect(Object.keys(rules ?? {}).sort()).toEqual(['events', 'group_traits', 'identify_traits']);

      const withAll = {
        events: [],
        global: globalSchema,
        identify: identifySchema,
        group: { type: 'object' },
      };
      given(trackingPlanDecider)
        .when(createCommand(withAll))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules: { ...emptyRules, ...withAll } } }]);
    });

    it('stores rule schemas verbatim: draft-04 $schema, id, labels, type arrays, enum with null, pattern, format', () => {
      const rules = {
        events: [orderCompleted, commandRun],
        identify_traits: [],
        group_traits: [],
        identify: identifySchema,
      };
      const { state } = given(trackingPlanDecider)
        .when(createCommand(JSON.parse(JSON.stringify(rules))))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules } }]);
      // Byte for byte, key order included: clients diff what they wrote against what they read back.
      expect(JSON.stringify(state.status === 'active' && state.plan.rules)).toBe(JSON.stringify(rules));
    });

    it('keeps rule keys it does not know as they were sent', () => {
      const rules = { events: [], identify_traits: [], group_traits: [], extension: { anything: [1, null] } };
      given(trackingPlanDecider)
        .when(createCommand(rules))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules } }]);
    });

    it('accepts one name at several versions', () => {
      const events = [
        { name: 'A', version: 1 },
        { name: 'A', version: 2 },
      ];
      given(trackingPlanDecider)
        .when(createCommand({ events }))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules: { ...emptyRules, events } } }]);
    });

    it('accepts an event without a version, and integer versions', () => {
      const events = [{ name: 'A' }, { name: 'B', version: 1 }, { name: 'C', version: 4 }];
      const stored = [{ name: 'A', version: 1 }, events[1], events[2]];
      given(trackingPlanDecider)
        .when(createCommand({ events }))
        .then([{ type: 'TrackingPlanCreated', data: { ...plan, rules: { ...emptyRules, events: stored } } }]);
    });

    it.each<[string, unknown, string]>([
      ['rules that are a list', [], 'tracking_plan.rules must be an object'],
      ['rules that are a string', 'events', 'tracking_plan.rules must be an object'],
      ['events that are an object', { events: { name: 'A' } }, 'tracking_plan.rules.events must be a list'],
      [
        'identify_traits that are a string',
        { identify_traits: 'email' },
        'tracking_plan.rules.identify_traits must be a list',
      ],
      [
        'group_traits that are an object',
        { group_traits: {} },
        'tracking_plan.rules.group_traits must be a list',
      ],
      [
        'an event without a name',
        { events: [{ version: 1 }] },
        'tracking_plan.rules.events[0] needs a string name',
      ],
      [
        'an event that is not an object',
        { events: ['Order Completed'] },
        'tracking_plan.rules.events[0] needs a string name',
      ],
      [
        'an event with a numeric name',
        { events: [{ name: 7 }] },
        'tracking_plan.rules.events[0] needs a string name',
      ],
      [
        'a fractional version',
        { events: [{ name: 'A' }, { name: 'B', version: 1.5 }] },
        'events[1].version must be an integer',
      ],
      [
        'a version as a string',
        { events: [{ name: 'A', version: '1' }] },
        'events[0].version must be an integer',
      ],
      ['a null version', { events: [{ name: 'A', version: null }] }, 'events[0].version must be an integer'],
      [
        'two entries with one name and version',
        { events: [{ name: 'A', version: 2 }, { name: 'B' }, { name: 'A', version: 2 }] },
        'tracking_plan.rules.events[2] repeats events[0]: "A" version 2',
      ],
      [
        'an entry without version beside the same name at version 1',
        { events: [{ name: 'A' }, { name: 'A', version: 1 }] },
        'events[1] repeats events[0]',
      ],
      ['global as a list', { global: [] }, 'tracking_plan.rules.global must be a JSON Schema object'],
      [
        'identify as a string',
        { identify: 'object' },
        'tracking_plan.rules.identify must be a JSON Schema object',
      ],
      ['group as a boolean', { group: true }, 'tracking_plan.rules.group must be a JSON Schema object'],
    ])('refuses %s with invalid_argument', (_case, rules, message) => {
      given(trackingPlanDecider).when(createCommand(rules)).thenThrows('invalid_argument', message);
    });

    it.each(['', '   ', undefined])('refuses a blank display name (%j)', (displayName) => {
      given(trackingPlanDecider)
        .when({
          ...createCommand({}),
          plan: { ...plan, rules: {}, displayName: displayName as string },
        } as TrackingPlanCommand)
        .thenThrows('invalid_argument', 'tracking_plan.display_name is required');
    });

    it('refuses a plan in a workspace that does not exist with not_found', () => {
      given(trackingPlanDecider)
        .when({ ...createCommand({}), workspaceExists: false } as TrackingPlanCommand)
        .thenThrows('not_found', 'workspaces/ws not found');
    });

    it('refuses a plan id in use with already_exists', () => {
      given(trackingPlanDecider, [planCreated])
        .when(createCommand({}))
        .thenThrows('already_exists', `tracking plan ${planIdentity.planId} already exists`);
    });

    it('never reuses the id of a deleted plan', () => {
      given(trackingPlanDecider, [planCreated, planDeleted])
        .when(createCommand({}))
        .thenThrows('already_exists', `tracking plan ${planIdentity.planId} already exists`);
    });
  });

  describe('UpdateTrackingPlan', () => {
    it('renames the plan and stamps the update time', () => {
      const { state } = given(trackingPlanDecider, [planCreated])
        .when(update({ displayName: 'Renamed' }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: { ...planIdentity, changes: { displayName: 'Renamed' }, updateTime: later },
          },
        ]);
      expect(state.status === 'active' && state.plan).toEqual({
        ...plan,
        displayName: 'Renamed',
        updateTime: later,
      });
    });

    it.each(['', '  ', 42])('refuses a display name that is blank or not a string (%j)', (displayName) => {
      given(trackingPlanDecider, [planCreated])
        .when(update({ displayName: displayName as string }))
        .thenThrows('invalid_argument', 'tracking_plan.display_name must be a non-empty string');
    });

    it('replaces the rules wholesale (tracking_plan.rules): parts not sent are gone or empty', () => {
      const withGlobal: TrackingPlanEvent = {
        type: 'TrackingPlanUpdated',
        data: {
          ...planIdentity,
          changes: {
            rules: {
              ...emptyRules,
              events: [commandRun],
              identify_traits: [{ key: 'email' }],
              global: globalSchema,
            },
          },
          updateTime: later,
        },
      };
      const newRules = { events: [orderCompleted], identify_traits: null };
      const normalized = { events: [orderCompleted], identify_traits: [], group_traits: [] };
      given(trackingPlanDecider, [planCreated, withGlobal])
        .when(update({ rules: newRules }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: { ...planIdentity, changes: { rules: normalized }, updateTime: later },
          },
        ]);
      expect(rulesAfter([planCreated, withGlobal])).toHaveProperty('global');
    });

    it('replaces a single part (tracking_plan.rules.events) and keeps the rest', () => {
      const withIdentify: TrackingPlanEvent = {
        type: 'TrackingPlanUpdated',
        data: {
          ...planIdentity,
          changes: { ruleParts: { identify: identifySchema, identify_traits: [{ key: 'email' }] } },
          updateTime: later,
        },
      };
      const { state } = given(trackingPlanDecider, [planCreated, withIdentify])
        .when(update({ ruleParts: { events: [orderCompleted] } }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: {
              ...planIdentity,
              changes: { ruleParts: { events: [orderCompleted] } },
              updateTime: later,
            },
          },
        ]);
      expect(state.status === 'active' && state.plan.rules).toEqual({
        events: [orderCompleted],
        identify_traits: [{ key: 'email' }],
        group_traits: [],
        identify: identifySchema,
      });
    });

    it('sets global, identify and group through their narrow paths, verbatim', () => {
      const ruleParts = {
        global: globalSchema,
        identify: identifySchema,
        group: { type: ['object', 'null'] },
      };
      const { state } = given(trackingPlanDecider, [planCreated])
        .when(update({ ruleParts }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: { ...planIdentity, changes: { ruleParts }, updateTime: later },
          },
        ]);
      expect(state.status === 'active' && state.plan.rules).toEqual({ ...plan.rules, ...ruleParts });
    });

    it('clears an optional part masked without a value, and it stays cleared when the stream is replayed', () => {
      const withGlobal: TrackingPlanEvent = {
        type: 'TrackingPlanUpdated',
        data: { ...planIdentity, changes: { ruleParts: { global: globalSchema } }, updateTime: createdAt },
      };
      // The mask names tracking_plan.rules.global and the body lacks it: the zero value (null) arrives.
      const { events, state } = given(trackingPlanDecider, [planCreated, withGlobal])
        .when(update({ ruleParts: { global: null } }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: { ...planIdentity, changes: { ruleParts: { global: null } }, updateTime: later },
          },
        ]);
      expect(state.status === 'active' && state.plan.rules).toEqual(plan.rules);
      expect(rulesAfter([planCreated, withGlobal, ...events])).not.toHaveProperty('global');
    });

    it('turns a masked-but-absent list part into [] rather than removing it', () => {
      const { state } = given(trackingPlanDecider, [planCreated])
        .when(update({ ruleParts: { events: undefined, identify_traits: null } }))
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: {
              ...planIdentity,
              changes: { ruleParts: { events: [], identify_traits: [] } },
              updateTime: later,
            },
          },
        ]);
      expect(state.status === 'active' && state.plan.rules).toEqual(emptyRules);
    });

    it('applies narrow parts after the wholesale rules when both are masked', () => {
      const { state } = given(trackingPlanDecider, [planCreated])
        .when(
          update({
            rules: { events: [commandRun], global: globalSchema },
            ruleParts: { events: [orderCompleted] },
          }),
        )
        .then([
          {
            type: 'TrackingPlanUpdated',
            data: {
              ...planIdentity,
              changes: {
                rules: { events: [commandRun], identify_traits: [], group_traits: [], global: globalSchema },
                ruleParts: { events: [orderCompleted] },
              },
              updateTime: later,
            },
          },
        ]);
      expect(state.status === 'active' && state.plan.rules).toEqual({
        events: [orderCompleted],
        identify_traits: [],
        group_traits: [],
        global: globalSchema,
      });
    });

    it('validates what it replaces', () => {
      given(trackingPlanDecider, [planCreated])
        .when(update({ rules: null }))
        .thenThrows('invalid_argument', 'tracking_plan.rules must be an object');
      given(trackingPlanDecider, [planCreated])
        .when(update({ ruleParts: { events: [{ name: 'A', version: 2.5 }] } }))
        .thenThrows('invalid_argument', 'tracking_plan.rules.events[0].version must be an integer');
      given(trackingPlanDecider, [planCreated])
        .when(update({ ruleParts: { global: 'object' } }))
        .thenThrows('invalid_argument', 'tracking_plan.rules.global must be a JSON Schema object');
      given(trackingPlanDecider, [planCreated])
        .when(update({ ruleParts: { screens: [] } }))
        .thenThrows('invalid_argument', 'tracking_plan.rules.screens is not a rules part');
    });

    it('refuses to update a plan that does not exist, or was deleted, with not_found', () => {
      given(trackingPlanDecider)
        .when(update({ displayName: 'x' }))
        .thenThrows('not_found', 'tracking plan not found');
      given(trackingPlanDecider, [planCreated, planDeleted])
        .when(update({ displayName: 'x' }))
        .thenThrows('not_found', 'tracking plan not found');
    });
  });

  describe('DeleteTrackingPlan', () => {
    it('deletes an active plan', () => {
      const { state } = given(trackingPlanDecider, [planCreated, connected('js')])
        .when({ type: 'DeleteTrackingPlan' })
        .then([planDeleted]);
      expect(state).toEqual({ status: 'deleted' });
    });

    it('refuses to delete a plan that does not exist, or twice, with not_found', () => {
      given(trackingPlanDecider)
        .when({ type: 'DeleteTrackingPlan' })
        .thenThrows('not_found', 'tracking plan not found');
      given(trackingPlanDecider, [planCreated, planDeleted])
        .when({ type: 'DeleteTrackingPlan' })
        .thenThrows('not_found', 'tracking plan not found');
    });
  });

  it('ignores changes to a plan that is not active when folding', () => {
    expect(stateAfter(trackingPlanDecider, [planCreated, planDeleted, connected('js')])).toEqual({
      status: 'deleted',
    });
    expect(stateAfter(trackingPlanDecider, [connected('js')])).toEqual({ status: 'absent' });
  });

  it('folds the connections a plan stream holds from before per-source streams into nothing it decides on', () => {
    expect(stateAfter(trackingPlanDecider, [planCreated, connected('js'), disconnected('js')])).toEqual({
      status: 'active',
      plan,
    });
  });
});

describe('normalizeRules', () => {
  it('does not change the object it was given', () => {
    const input = { events: [commandRun], identify_traits: null, global: null };
    const copy = JSON.parse(JSON.stringify(input));
    normalizeRules(input);
    expect(input).toEqual(copy);
  });
});
