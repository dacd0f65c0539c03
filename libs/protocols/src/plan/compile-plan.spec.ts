import { judgeMessage } from '../enforce/judge-message';
import type { PlanRules } from '../protocols.types';
import { normalized, propertiesRule, settings } from '../testing/protocols.fixtures';
import { SEGMENT_UI_PLAN_RULES } from '../testing/segment-ui-plan.fixture';
import { compilePlan } from './compile-plan';

function violationsOf(rules: PlanRules, message: Record<string, unknown>) {
  const plan = compilePlan({ planId: 'rs_1', planName: 'Plan', rules });
  expect(plan.skipped).toEqual([]);
  return judgeMessage(plan, settings(), 'src_1', normalized(message)).violations;
}

describe('compilePlan (R16: the validator)', () => {
  it('compiles a Segment UI export (draft-04, labels, id paths repeated across events) and enforces it', () => {
    const plan = compilePlan({ planId: 'rs_ui', planName: 'UI', rules: SEGMENT_UI_PLAN_RULES });
    expect(plan.skipped).toEqual([]);
    expect([...plan.events.keys()]).toEqual(['Order Completed', 'Product Viewed']);
    const valid = normalized({
      event: 'Order Completed',
      properties: {
        order_id: 'ord_1',
        revenue: 10,
        coupon: null,
        currency: null,
        completed_at: '2026-01-01T10:00:00Z',
      },
    });
    expect(judgeMessage(plan, settings(), 'src', valid)).toEqual({
      kind: 'allow',
      changed: false,
      violations: [],
    });
    const invalid = normalized({
      event: 'Order Completed',
      properties: { order_id: 'x', revenue: 0, coupon: 3, currency: 'GBP', completed_at: 'yesterday' },
    });
    expect(judgeMessage(plan, settings(), 'src', invalid).violations).toEqual([
      { type: 'Pattern', field: 'properties.order_id', description: "Does not match pattern '^ord_[0-9]+$'" },
      // draft-04's boolean exclusiveMinimum
      { type: 'Number Gt', field: 'properties.revenue', description: 'Must be greater than 0' },
      {
        type: 'Invalid Type',
        field: 'properties.coupon',
        description: 'Invalid type. Expected: string,null, given: integer',
      },
      {
        type: 'Enum',
        field: 'properties.currency',
        description: 'properties.currency must be one of the following: "EUR", "USD", null',
      },
      { type: 'Format', field: 'properties.completed_at', description: "Does not match format 'date-time'" },
    ]);
    const identify = normalized({ type: 'identify', traits: { email: 'not-an-email', plan: 'gold' } });
    expect(judgeMessage(plan, settings(), 'src', identify).violations.map((v) => v.type)).toEqual([
      'Format',
      'Enum',
    ]);
  });

  it('checks draft-06, an unknown $schema and no $schema as draft-07 (if/then/else, const)', () => {
    const rule = (schemaUri?: string) => ({
      ...(schemaUri ? { $schema: schemaUri } : {}),
      type: 'object',
      properties: {
        properties: {
          type: 'object',
          if: { properties: { kind: { const: 'card' } } },
          then: { required: ['last4'] },
          properties: { version: { const: 2 } },
        },
      },
    });
    for (const uri of [
      undefined,
      'https://example.com/my-meta#',
      'http://json-schema.org/draft-06/schema#',
    ]) {
      const violations = violationsOf(
        { events: [{ name: 'Paid', rules: rule(uri) }] },
        {
          event: 'Paid',
          properties: { kind: 'card', version: 1 },
        },
      );
      // Draft-06 is checked by the draft-07 engine too (Ajv has no separate one); a draft-06 plan has
      // no if/then/else to be surprised by.
      expect(violations.map((violation) => violation.type).sort()).toEqual([
        'Condition Then',
        'Const',
        'Required',
      ]);
    }
  });

  it('reports anyOf and oneOf as one violation, not one per branch', () => {
    const violations = violationsOf(
      {
        events: [
          {
            name: 'E',
            rules: propertiesRule({ id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } }),
          },
        ],
      },
      { event: 'E', properties: { id: 1.5 } },
    );
    expect(violations).toEqual([
      {
        type: 'Number Any Of',
        field: 'properties.id',
        description: 'Must validate at least one schema (anyOf)',
      },
    ]);
  });

  it('names array items by index and reports additional properties at their own path', () => {
    const violations = violationsOf(
      {
        events: [
          {
            name: 'E',
            rules: propertiesRule(
              {
                items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
              },
              [],
              { additionalProperties: false },
            ),
          },
        ],
      },
      { event: 'E', properties: { items: [{ sku: 'a' }, { sku: 2 }], extra: true } },
    );
    expect(violations).toEqual([
      {
        type: 'Additional Property Not Allowed',
        field: 'properties.extra',
        description: 'Additional property extra is not allowed',
      },
      {
        type: 'Invalid Type',
        field: 'properties.items.1.sku',
        description: 'Invalid type. Expected: string, given: integer',
      },
    ]);
  });

  it('uses (root) for an error on the message itself', () => {
    const violations = violationsOf(
      { events: [], global: { type: 'object', maxProperties: 2 } },
      { type: 'alias' },
    );
    expect(violations).toEqual([
      { type: 'Array Max Properties', field: '(root)', description: 'Must have at most 2 properties' },
    ]);
  });

  it('skips and reports a rule whose schema or regex does not compile, and keeps enforcing the others', () => {
    const plan = compilePlan({
      planId: 'rs_bad',
      planName: 'Bad',
      rules: {
        events: [
          { name: 'Bad Regex', rules: propertiesRule({ code: { type: 'string', pattern: '([a-z' } }) },
          { name: 'Bad Type', rules: propertiesRule({ code: { type: 'strung' } }) },
          { name: 'Good', rules: propertiesRule({}, ['must']) },
        ],
        global: { type: 'object', properties: { userId: { minLength: 'three' } } },
      },
    });
    expect(plan.skipped.map((skipped) => skipped.rule)).toEqual([
      'events[Bad Regex v1]',
      'events[Bad Type v1]',
      'global',
    ]);
    expect(plan.skipped.every((skipped) => skipped.error.length > 0)).toBe(true);
    // Skipped rules check nothing, but their events stay planned.
    const strict = settings({ allow_unplanned_track_events: false, allow_track_event_on_violations: false });
    expect(
      judgeMessage(plan, strict, 's', normalized({ event: 'Bad Regex', properties: { code: 1 } })),
    ).toMatchObject({
      kind: 'allow',
    });
    expect(judgeMessage(plan, strict, 's', normalized({ event: 'Good', properties: {} }))).toMatchObject({
      kind: 'block',
      reason: 'schema_violation',
    });
  });

  it('ignores event entries without a name and keeps the first of two with the same name and version', () => {
    const plan = compilePlan({
      planId: 'rs_odd',
      planName: 'Odd',
      rules: {
        events: [
          { version: 1, rules: {} },
          { name: 'Twice', version: 1, rules: propertiesRule({}, ['first']) },
          { name: 'Twice', version: 1, rules: propertiesRule({}, ['second']) },
        ],
      },
    });
    expect([...plan.events.keys()]).toEqual(['Twice']);
    const verdict = judgeMessage(plan, settings(), 's', normalized({ event: 'Twice', properties: {} }));
    expect(verdict.violations.map((violation) => violation.field)).toEqual(['properties.first']);
  });

  it('reuses the unchanged rules of the previous version and compiles only what changed', () => {
    const rulesWith = (aType: string) => ({
      events: [
        { name: 'Same', version: 1, rules: propertiesRule({ x: { type: 'string' } }) },
        { name: 'Edited', version: 1, rules: propertiesRule({ a: { type: aType } }) },
        { name: 'Broken', version: 1, rules: propertiesRule({ b: { type: 'string', pattern: '([' } }) },
      ],
      global: { type: 'object', required: ['userId'] },
    });
    const first = compilePlan({ planId: 'rs_v', planName: 'V', rules: rulesWith('string') });
    const second = compilePlan({ planId: 'rs_v', planName: 'V', rules: rulesWith('integer') }, first);
    expect(second.events.get('Same')!.lowest).toBe(first.events.get('Same')!.lowest);
    expect(second.global).toBe(first.global);
    expect(second.events.get('Edited')!.lowest).not.toBe(first.events.get('Edited')!.lowest);
    // A reused rule that did not compile is still reported for the new version.
    expect(second.skipped.map((skipped) => skipped.rule)).toEqual(['events[Broken v1]']);
    const message = normalized({ event: 'Edited', properties: { a: 'text' } });
    expect(judgeMessage(first, settings(), 's', message).violations).toEqual([]);
    expect(judgeMessage(second, settings(), 's', message).violations.map((v) => v.type)).toEqual([
      'Invalid Type',
    ]);
  });

  it('compiles a plan of 50 events once, and judging reuses the compiled functions', () => {
    const events = Array.from({ length: 50 }, (_, index) => ({
      name: `Event ${index}`,
      version: 1,
      rules: propertiesRule({ a: { type: 'string' }, b: { type: 'integer' } }, ['a']),
    }));
    const plan = compilePlan({ planId: 'rs_big', planName: 'Big', rules: { events } });
    const check = plan.events.get('Event 7')!.lowest.check;
    for (let round = 0; round < 3; round += 1) {
      judgeMessage(plan, settings(), 's', normalized({ event: 'Event 7', properties: { a: 'x' } }));
    }
    expect(plan.events.get('Event 7')!.lowest.check).toBe(check);
  });
});
