import fc from 'fast-check';
import { compilePlan } from '../plan/compile-plan';
import type { EnforcementSettings, JsonSchema, TrackingMessage } from '../protocols.types';
import { propertiesRule, settings } from '../testing/protocols.fixtures';
import { judgeMessage } from './judge-message';

const keys = fc.constantFrom('a', 'b', 'c', 'plan', 'price', 'user.name', 'x_1');
const leafSchema: fc.Arbitrary<JsonSchema> = fc.oneof(
  fc
    .constantFrom('string', 'integer', 'number', 'boolean', 'array', 'object', 'null')
    .map((type) => ({ type })),
  fc.constant({ type: ['string', 'null'] }),
  fc.constant({ enum: ['free', 'pro', null] }),
  fc.constant({ type: 'string', pattern: '^[a-z]+$' }),
  fc.constant({ type: 'string', format: 'date-time' }),
  fc.constant({ type: 'number', minimum: 0 }),
);
const jsonValue = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constant('2026-01-01T00:00:00Z'),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);
const eventNames = fc.constantFrom('A', 'B', 'Page Viewed');

const plans = fc.record({
  events: fc.array(
    fc.record({
      name: eventNames,
      version: fc.integer({ min: 1, max: 3 }),
      properties: fc.dictionary(keys, leafSchema, { maxKeys: 4 }),
      required: fc.subarray(['a', 'b', 'plan']),
    }),
    { maxLength: 4 },
  ),
  global: fc.option(fc.dictionary(keys, leafSchema, { maxKeys: 2 }), { nil: undefined }),
  identify: fc.option(fc.dictionary(keys, leafSchema, { maxKeys: 3 }), { nil: undefined }),
});

const messages: fc.Arbitrary<TrackingMessage> = fc
  .record({
    type: fc.constantFrom('track', 'identify', 'group', 'page', 'screen', 'alias'),
    event: eventNames,
    values: fc.dictionary(keys, jsonValue, { maxKeys: 5 }),
    eventVersion: fc.option(fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constant(1.5)), { nil: undefined }),
    messageId: fc.uuid(),
  })
  .map(({ type, event, values, eventVersion, messageId }) => {
    const message: Record<string, unknown> = {
      type,
      messageId,
      userId: 'u',
      context: eventVersion === undefined ? {} : { protocols: { event_version: eventVersion } },
      integrations: {},
      timestamp: '2026-01-01T00:00:00.000Z',
      receivedAt: '2026-01-01T00:00:00.000Z',
    };
    if (type === 'track') message.event = event;
    if (type === 'identify' || type === 'group') message.traits = values;
    else message.properties = values;
    return message as TrackingMessage;
  });

const settingsArbitrary: fc.Arbitrary<EnforcementSettings> = fc
  .record({
    allow_unplanned_track_events: fc.boolean(),
    allow_unplanned_track_event_properties: fc.boolean(),
    allow_unplanned_identify_traits: fc.boolean(),
    allow_track_event_on_violations: fc.boolean(),
    allow_track_properties_on_violations: fc.boolean(),
    allow_identify_traits_on_violations: fc.boolean(),
    common_track_event_on_violations: fc.constantFrom('ALLOW', 'OMIT_PROPERTIES', 'BLOCK'),
    common_identify_event_on_violations: fc.constantFrom('ALLOW', 'OMIT_TRAITS', 'BLOCK'),
  } as const)
  .map((overrides) => settings(overrides));

describe('judgeMessage properties', () => {
  it('never changes its input; an unchanged verdict reports nothing; a changed one only removes and annotates', () => {
    fc.assert(
      fc.property(plans, settingsArbitrary, messages, (planShape, config, message) => {
        const plan = compilePlan({
          planId: 'rs_p',
          planName: 'P',
          rules: {
            events: planShape.events.map((event) => ({
              name: event.name,
              version: event.version,
              rules: propertiesRule(event.properties, event.required),
            })),
            ...(planShape.global && {
              global: {
                type: 'object',
                properties: { properties: { type: 'object', properties: planShape.global } },
              },
            }),
            ...(planShape.identify && {
              identify: {
                type: 'object',
                properties: { traits: { type: 'object', properties: planShape.identify } },
              },
            }),
          },
        });
        const before = JSON.stringify(message);
        const verdict = judgeMessage(plan, config, 'src', message);
        expect(JSON.stringify(message)).toBe(before);
        if (verdict.kind === 'block') return;
        if (!verdict.changed) {
          expect(verdict.violations).toEqual([]);
          return;
        }
        const stored = verdict.message;
        expect(
          verdict.violations.length + verdict.omitted.length + verdict.omittedOnViolation.length,
        ).toBeGreaterThan(0);
        const container = message.type === 'identify' || message.type === 'group' ? 'traits' : 'properties';
        const originalValues = message[container] as Record<string, unknown>;
        const storedValues = stored[container] as Record<string, unknown>;
        // Only whole top-level keys are removed, exactly those listed; nothing else changes.
        const removed = Object.keys(originalValues).filter((key) => !(key in storedValues));
        expect(removed.sort()).toEqual([...verdict.omitted, ...verdict.omittedOnViolation].sort());
        for (const key of Object.keys(storedValues)) expect(storedValues[key]).toBe(originalValues[key]);
        const { context: storedContext, [container]: _stored, ...restStored } = stored;
        const { context: originalContext, [container]: _original, ...restOriginal } = message;
        expect(restStored).toEqual(restOriginal);
        const { protocols, ...otherContext } = storedContext as Record<string, any>;
        const { protocols: _clientProtocols, ...otherOriginalContext } = originalContext as Record<
          string,
          any
        >;
        expect(otherContext).toEqual(otherOriginalContext);
        expect(protocols.sourceId).toBe('src');
      }),
      { numRuns: 400 },
    );
  });
});
