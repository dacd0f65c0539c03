import { compilePlan } from '../plan/compile-plan';
import type { EnforcementSettings, PlanRules, TrackingMessage, Verdict } from '../protocols.types';
import { normalized, propertiesRule, settings, traitsRule } from '../testing/protocols.fixtures';
import { judgeMessage } from './judge-message';

const SOURCE_ID = 'src_1';

function judge(rules: PlanRules, config: Partial<EnforcementSettings>, message: TrackingMessage): Verdict {
  const plan = compilePlan({ planId: 'rs_1', planName: 'Plan', rules });
  return judgeMessage(plan, settings(config), SOURCE_ID, message);
}

function stored(verdict: Verdict, original: TrackingMessage): TrackingMessage {
  if (verdict.kind === 'block') throw new Error(`blocked (${verdict.reason})`);
  return verdict.changed ? verdict.message : original;
}

const subscriptionPlan: PlanRules = {
  events: [
    {
      name: 'Subscription Started',
      version: 1,
      rules: propertiesRule({ subscription_id: { type: 'string' } }, ['subscription_id']),
    },
  ],
};

describe('judgeMessage', () => {
  describe('R1/R19: one message alone, integrations ignored', () => {
    it('judges a message with integrations {Protocols:false} like any other', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: {},
        integrations: { Protocols: false, All: false },
      });
      const verdict = judge(subscriptionPlan, { allow_track_event_on_violations: false }, message);
      expect(verdict).toMatchObject({ kind: 'block', reason: 'schema_violation' });
    });
  });

  describe('R2: event match and version', () => {
    const versioned: PlanRules = {
      events: [
        { name: 'Order', version: 1, rules: propertiesRule({}, ['a']) },
        { name: 'Order', version: 2, rules: propertiesRule({}, ['b']) },
      ],
    };

    it('uses the version named by context.protocols.event_version', () => {
      const message = normalized({
        event: 'Order',
        properties: { b: 1 },
        context: { protocols: { event_version: 2 } },
      });
      expect(judge(versioned, {}, message)).toMatchObject({ kind: 'allow', changed: false });
    });

    it.each([[3.2], [3], ['2'], [undefined]])(
      'falls back to the lowest version for event_version %p',
      (version) => {
        const message = normalized({
          event: 'Order',
          properties: { b: 1 },
          context: version === undefined ? {} : { protocols: { event_version: version } },
        });
        const verdict = judge(versioned, {}, message);
        expect(verdict.violations).toEqual([
          { type: 'Required', field: 'properties.a', description: 'properties.a is required' },
        ]);
      },
    );

    it('matches names exactly, case included', () => {
      const message = normalized({ event: 'subscription started', properties: {} });
      expect(judge(subscriptionPlan, { allow_unplanned_track_events: false }, message)).toMatchObject({
        kind: 'block',
        reason: 'unplanned',
      });
    });

    it('counts an entry without version as version 1', () => {
      const plan: PlanRules = {
        events: [
          { name: 'E', rules: propertiesRule({}, ['one']) },
          { name: 'E', version: 2, rules: propertiesRule({}, ['two']) },
        ],
      };
      const message = normalized({
        event: 'E',
        properties: {},
        context: { protocols: { event_version: 1 } },
      });
      expect(judge(plan, {}, message).violations.map((violation) => violation.field)).toEqual([
        'properties.one',
      ]);
    });
  });

  describe('R3: unplanned track events', () => {
    it('blocks them with reason unplanned and no violation when not allowed', () => {
      const verdict = judge(
        subscriptionPlan,
        { allow_unplanned_track_events: false },
        normalized({ event: 'Other' }),
      );
      expect(verdict).toEqual({ kind: 'block', reason: 'unplanned', violations: [] });
    });

    it('lets them through unchanged when allowed, with no event schema and no violation', () => {
      const message = normalized({ event: 'Other', properties: { anything: true } });
      expect(
        judge(subscriptionPlan, { allow_unplanned_track_event_properties: false }, message),
      ).toMatchObject({
        kind: 'allow',
        changed: false,
      });
    });
  });

  describe('R4: the event schema validates the whole message', () => {
    it('reports every error, on top-level keys as well as properties', () => {
      const plan: PlanRules = {
        events: [
          {
            name: 'E',
            rules: {
              type: 'object',
              properties: {
                userId: { type: 'string', pattern: '^u-' },
                properties: {
                  type: 'object',
                  properties: { plan: { enum: ['free', 'pro'] }, seats: { type: 'integer' } },
                },
              },
            },
          },
        ],
      };
      const message = normalized({ event: 'E', userId: 'x', properties: { plan: 'gold', seats: 1.5 } });
      expect(judge(plan, {}, message).violations).toEqual([
        { type: 'Pattern', field: 'userId', description: "Does not match pattern '^u-'" },
        {
          type: 'Enum',
          field: 'properties.plan',
          description: 'properties.plan must be one of the following: "free", "pro"',
        },
        {
          type: 'Invalid Type',
          field: 'properties.seats',
          description: 'Invalid type. Expected: integer, given: number',
        },
      ]);
    });

    it('uses rules.identify for identify and rules.group for group', () => {
      const plan: PlanRules = {
        events: [],
        identify: traitsRule({ email: { type: 'string' } }),
        group: traitsRule({ seats: { type: 'integer' } }),
      };
      expect(judge(plan, {}, normalized({ type: 'identify', traits: { email: 5 } })).violations).toEqual([
        {
          type: 'Invalid Type',
          field: 'traits.email',
          description: 'Invalid type. Expected: string, given: integer',
        },
      ]);
      expect(
        judge(plan, {}, normalized({ type: 'group', groupId: 'g', traits: { seats: 'x' } })).violations,
      ).toEqual([
        {
          type: 'Invalid Type',
          field: 'traits.seats',
          description: 'Invalid type. Expected: integer, given: string',
        },
      ]);
    });

    it('uses "Page Viewed" for page and "Screen Viewed" for screen, and nothing for alias', () => {
      const plan: PlanRules = {
        events: [
          { name: 'Page Viewed', rules: propertiesRule({}, ['path']) },
          { name: 'Screen Viewed', rules: propertiesRule({}, ['screen_name']) },
        ],
        global: { type: 'object', properties: { userId: { type: 'string', minLength: 5 } } },
      };
      expect(judge(plan, {}, normalized({ type: 'page', properties: {} })).violations[0].field).toBe(
        'properties.path',
      );
      expect(judge(plan, {}, normalized({ type: 'screen', properties: {} })).violations[0].field).toBe(
        'properties.screen_name',
      );
      // Alias: only the common schema.
      expect(judge(plan, {}, normalized({ type: 'alias', previousId: 'p', userId: 'u' })).violations).toEqual(
        [
          {
            type: 'String Gte',
            field: 'userId',
            description: 'String length must be greater than or equal to 5',
          },
        ],
      );
    });
  });

  describe('R5: unplanned properties', () => {
    it('removes undeclared top-level properties into omitted when not allowed', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: { subscription_id: 's1', subscription_name: 'Pro' },
      });
      const verdict = judge(subscriptionPlan, { allow_unplanned_track_event_properties: false }, message);
      const result = stored(verdict, message);
      expect(result.properties).toEqual({ subscription_id: 's1' });
      expect((result.context as any).protocols).toEqual({
        sourceId: SOURCE_ID,
        omitted: ['subscription_name'],
      });
      expect(verdict.violations).toEqual([]);
      // The input is left as it was.
      expect(message.properties).toEqual({ subscription_id: 's1', subscription_name: 'Pro' });
    });

    it('keeps keys matching patternProperties, and checks top-level keys only', () => {
      const plan: PlanRules = {
        events: [
          {
            name: 'E',
            rules: propertiesRule({ nested: { type: 'object' } }, [], { patternProperties: { '^x_': {} } }),
          },
        ],
      };
      const message = normalized({ event: 'E', properties: { x_one: 1, nested: { deep: 1 }, other: 2 } });
      const result = stored(judge(plan, { allow_unplanned_track_event_properties: false }, message), message);
      expect(result.properties).toEqual({ x_one: 1, nested: { deep: 1 } });
    });

    it('treats every key as unplanned when the entry declares no properties schema', () => {
      const plan: PlanRules = { events: [{ name: 'E', rules: { type: 'object' } }] };
      const message = normalized({ event: 'E', properties: { a: 1, b: 2 } });
      const result = stored(judge(plan, { allow_unplanned_track_event_properties: false }, message), message);
      expect(result.properties).toEqual({});
      expect((result.context as any).protocols.omitted).toEqual(['a', 'b']);
    });

    it('leaves properties alone when allowed', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: { subscription_id: 's', extra: 1 },
      });
      expect(judge(subscriptionPlan, {}, message)).toMatchObject({ kind: 'allow', changed: false });
    });
  });

  describe('R6: unplanned traits', () => {
    const plan: PlanRules = {
      events: [],
      identify: traitsRule({ name: {}, email: {}, join_date: {} }),
    };

    it('removes undeclared traits of identify', () => {
      const message = normalized({ type: 'identify', traits: { email: 'a@b.c', first_name: 'A' } });
      const result = stored(judge(plan, { allow_unplanned_identify_traits: false }, message), message);
      expect(result.traits).toEqual({ email: 'a@b.c' });
      expect((result.context as any).protocols.omitted).toEqual(['first_name']);
    });

    it('treats every trait as unplanned when rules.identify or rules.group is absent', () => {
      const message = normalized({ type: 'group', groupId: 'g', traits: { seats: 3 } });
      const result = stored(judge(plan, { allow_unplanned_group_traits: false }, message), message);
      expect(result.traits).toEqual({});
      expect((result.context as any).protocols.omitted).toEqual(['seats']);
    });
  });

  describe('R7: what event-schema violations do', () => {
    it('blocks a failing track when allow_track_event_on_violations is false', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: { customer_type: 'enterprise' },
      });
      expect(judge(subscriptionPlan, { allow_track_event_on_violations: false }, message)).toEqual({
        kind: 'block',
        reason: 'schema_violation',
        violations: [
          {
            type: 'Required',
            field: 'properties.subscription_id',
            description: 'properties.subscription_id is required',
          },
        ],
      });
    });

    it('with only the properties flag false, a missing required key removes nothing', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: { customer_type: 'enterprise' },
      });
      const verdict = judge(subscriptionPlan, { allow_track_properties_on_violations: false }, message);
      const result = stored(verdict, message);
      expect(result.properties).toEqual({ customer_type: 'enterprise' });
      expect((result.context as any).protocols).toEqual({
        sourceId: SOURCE_ID,
        violations: [
          {
            type: 'Required',
            field: 'properties.subscription_id',
            description: 'properties.subscription_id is required',
          },
        ],
      });
    });

    it('removes the top-level property a violation names, nested or not', () => {
      const plan: PlanRules = {
        events: [
          {
            name: 'E',
            rules: propertiesRule({
              price: { type: 'number' },
              address: { type: 'object', properties: { zip: { type: 'string' } } },
            }),
          },
        ],
      };
      const message = normalized({ event: 'E', properties: { price: 'ten', address: { zip: 75 }, ok: 1 } });
      const result = stored(judge(plan, { allow_track_properties_on_violations: false }, message), message);
      expect(result.properties).toEqual({ ok: 1 });
      expect((result.context as any).protocols.omitted_on_violation).toEqual(['price', 'address']);
      expect((result.context as any).protocols.violations.map((v: any) => v.field)).toEqual([
        'properties.price',
        'properties.address.zip',
      ]);
    });

    it('removes violating traits of identify and group, and never blocks them', () => {
      const plan: PlanRules = { events: [], identify: traitsRule({ age: { type: 'integer' } }, ['email']) };
      const message = normalized({ type: 'identify', traits: { age: 'old', name: 'n' } });
      const verdict = judge(
        plan,
        { allow_identify_traits_on_violations: false, allow_track_event_on_violations: false },
        message,
      );
      const result = stored(verdict, message);
      expect(result.traits).toEqual({ name: 'n' });
      expect((result.context as any).protocols.omitted_on_violation).toEqual(['age']);
      expect(verdict.violations).toHaveLength(2);
    });

    it('keeps violating traits when allowed, reporting them', () => {
      const plan: PlanRules = { events: [], group: traitsRule({ seats: { type: 'integer' } }) };
      const message = normalized({ type: 'group', groupId: 'g', traits: { seats: 'many' } });
      const result = stored(judge(plan, {}, message), message);
      expect(result.traits).toEqual({ seats: 'many' });
      expect((result.context as any).protocols.violations).toHaveLength(1);
    });
  });

  describe('R8: the common schema', () => {
    const plan: PlanRules = {
      events: [{ name: 'E', rules: propertiesRule({ price: { type: 'number' } }) }],
      global: {
        type: 'object',
        properties: {
          context: {
            type: 'object',
            properties: { device: { type: 'object', required: ['advertisingId'] } },
            required: ['device'],
          },
          properties: { type: 'object', properties: { currency: { type: 'string' } } },
          traits: { type: 'object', properties: { plan: { type: 'string' } } },
        },
      },
    };
    const device = { device: { advertisingId: 'ad' } };

    it('BLOCK blocks a track that fails it', () => {
      const message = normalized({ event: 'E', properties: {} });
      expect(judge(plan, { common_track_event_on_violations: 'BLOCK' }, message)).toEqual({
        kind: 'block',
        reason: 'common_schema_violation',
        violations: [
          { type: 'Required', field: 'context.device', description: 'context.device is required' },
        ],
      });
    });

    it('reports context.device.advertisingId as Required under ALLOW', () => {
      const message = normalized({ event: 'E', properties: {}, context: { device: {} } });
      const result = stored(judge(plan, {}, message), message);
      expect((result.context as any).protocols.violations).toEqual([
        {
          type: 'Required',
          field: 'context.device.advertisingId',
          description: 'context.device.advertisingId is required',
        },
      ]);
      expect((result.context as any).device).toEqual({});
    });

    it('uses unplanned_and_schema_violation for an unplanned event that was let through', () => {
      const message = normalized({ event: 'Unplanned', properties: {} });
      expect(judge(plan, { common_track_event_on_violations: 'BLOCK' }, message)).toMatchObject({
        kind: 'block',
        reason: 'unplanned_and_schema_violation',
      });
    });

    it('OMIT_PROPERTIES removes the named properties; context violations remove nothing', () => {
      const message = normalized({ event: 'E', properties: { currency: 7, price: 1 }, context: {} });
      const result = stored(
        judge(plan, { common_track_event_on_violations: 'OMIT_PROPERTIES' }, message),
        message,
      );
      expect(result.properties).toEqual({ price: 1 });
      expect((result.context as any).protocols.omitted_on_violation).toEqual(['currency']);
      expect((result.context as any).protocols.violations.map((v: any) => v.field)).toEqual([
        'context.device',
        'properties.currency',
      ]);
    });

    it('runs on the message as already omitted, after the event schema', () => {
      const message = normalized({ event: 'E', properties: { currency: 7, price: 'x' }, context: device });
      const verdict = judge(
        plan,
        { allow_unplanned_track_event_properties: false, common_track_event_on_violations: 'BLOCK' },
        message,
      );
      // `currency` is unplanned for E, so it is gone before the common schema could see it.
      const result = stored(verdict, message);
      expect(result.properties).toEqual({ price: 'x' });
      expect((result.context as any).protocols.omitted).toEqual(['currency']);
      expect(verdict.violations.map((violation) => violation.field)).toEqual(['properties.price']);
    });

    it('OMIT_TRAITS and BLOCK apply to identify and group', () => {
      const identify = normalized({ type: 'identify', traits: { plan: 1, name: 'n' }, context: device });
      const omittedIdentify = stored(
        judge(plan, { common_identify_event_on_violations: 'OMIT_TRAITS' }, identify),
        identify,
      );
      expect(omittedIdentify.traits).toEqual({ name: 'n' });
      const group = normalized({ type: 'group', groupId: 'g', traits: { plan: 1 }, context: device });
      expect(judge(plan, { common_group_event_on_violations: 'BLOCK' }, group)).toMatchObject({
        kind: 'block',
        reason: 'common_schema_violation',
      });
    });

    it('only reports on page, screen and alias', () => {
      const strict = {
        common_track_event_on_violations: 'BLOCK',
        common_identify_event_on_violations: 'BLOCK',
        common_group_event_on_violations: 'BLOCK',
      } as const;
      for (const message of [
        normalized({ type: 'page', properties: { currency: 1 } }),
        normalized({ type: 'screen', properties: { currency: 1 } }),
        normalized({ type: 'alias', previousId: 'p' }),
      ]) {
        const verdict = judge(plan, strict, message);
        expect(verdict.kind).toBe('allow');
        expect(verdict.violations.length).toBeGreaterThan(0);
        expect(stored(verdict, message).properties).toEqual(message.properties);
      }
    });
  });

  describe('R10: annotation', () => {
    it('keeps the client keys of context.protocols and overwrites the four it reports', () => {
      const message = normalized({
        event: 'Subscription Started',
        properties: {},
        context: {
          ip: '1.2.3.4',
          protocols: { event_version: 1, sourceId: 'forged', omitted: ['x'], violations: 'no' },
        },
      });
      const result = stored(judge(subscriptionPlan, {}, message), message);
      expect(result.context).toEqual({
        ip: '1.2.3.4',
        protocols: {
          event_version: 1,
          sourceId: SOURCE_ID,
          violations: [
            {
              type: 'Required',
              field: 'properties.subscription_id',
              description: 'properties.subscription_id is required',
            },
          ],
        },
      });
    });

    it('stores a message with nothing to report as the very same object', () => {
      const message = normalized({ event: 'Subscription Started', properties: { subscription_id: 's' } });
      const verdict = judge(subscriptionPlan, { allow_unplanned_track_event_properties: false }, message);
      expect(verdict).toEqual({ kind: 'allow', changed: false, violations: [] });
    });
  });
});
