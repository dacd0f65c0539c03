// Property, through HTTP: for random plans, schema configs and messages, a message Protocols lets
// through unchanged is stored byte for byte as a source with no plan stores it; a blocked one is not
// stored; a changed one carries context.protocols. The pure verdict (libs/protocols) is the oracle.
import { compilePlan, judgeMessage, type TrackingMessage } from '@tributary/protocols';
import fc from 'fast-check';
import { PERMISSIVE_SETTINGS } from '../../../../libs/protocols/src/testing/protocols.fixtures';
import { randomUUID } from 'node:crypto';
import { createSource, createWorkspace, postJson, readLog } from '../../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../../test/support/tributary-test-instance';
import { connectPlan, createPlan, eventRule, setSchemaConfig } from './protocols-e2e.kit';

const keys = fc.constantFrom('a', 'b', 'plan', 'price', 'email');
const propertySchema = fc.constantFrom<Record<string, unknown>>(
  { type: 'string' },
  { type: 'integer' },
  { type: 'number', minimum: 0 },
  { type: ['string', 'null'] },
  { enum: ['free', 'pro', null] },
  { type: 'string', format: 'date-time' },
  {},
);
const value = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -5, max: 100 }),
  fc.constantFrom(null, true, 1.5, 'pro', '2026-01-01T00:00:00Z', [1, 2], { nested: 'x' }),
);
const names = fc.constantFrom('Order Completed', 'Signed Up', 'Unplanned');

const scenario = fc.record({
  events: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom('Order Completed', 'Signed Up'),
      properties: fc.dictionary(keys, propertySchema, { maxKeys: 3 }),
      required: fc.subarray(['a', 'plan']),
    }),
    { selector: (event) => event.name, maxLength: 2 },
  ),
  identifyTraits: fc.option(fc.dictionary(keys, propertySchema, { maxKeys: 2 }), { nil: undefined }),
  settings: fc.record({
    allow_unplanned_track_events: fc.boolean(),
    allow_unplanned_track_event_properties: fc.boolean(),
    allow_unplanned_identify_traits: fc.boolean(),
    allow_track_event_on_violations: fc.boolean(),
    allow_track_properties_on_violations: fc.boolean(),
  }),
  messages: fc.array(
    fc.record({
      type: fc.constantFrom('track', 'identify', 'page'),
      event: names,
      values: fc.dictionary(keys, value, { maxKeys: 4 }),
      context: fc.constantFrom<Record<string, unknown>>(
        {},
        { ip: '10.0.0.1', locale: 'fr-FR' },
        { protocols: { event_version: 1 } },
      ),
    }),
    { minLength: 1, maxLength: 6 },
  ),
});

/** The stored JSON without the two fields that differ between two requests: byte-comparable. */
function comparable(payload: Record<string, unknown>): string {
  return JSON.stringify({ ...payload, messageId: '<id>', receivedAt: '<received>' });
}

describe('Protocols leaves what it allows unchanged byte for byte (property, HTTP)', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('stores allowed-unchanged messages as a source without a plan does', async () => {
    let unchangedSeen = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ events, identifyTraits, settings, messages }) => {
        const workspace = await createWorkspace(t);
        const planned = await createSource(t, workspace);
        const unplanned = await createSource(t, workspace);
        const rules = {
          events: events.map((event) => eventRule(event.name, event.properties, event.required)),
          ...(identifyTraits && {
            identify: {
              type: 'object',
              properties: { traits: { type: 'object', properties: identifyTraits } },
            },
          }),
        };
        const { planId } = await createPlan(t, workspace.slug, rules);
        await connectPlan(t, planned, planId);
        await setSchemaConfig(t, planned, settings);

        const bodies = messages.map((message, index) => ({
          type: message.type,
          userId: `user-${index}`,
          timestamp: '2026-01-01T00:00:00.000Z',
          context: message.context,
          ...(message.type === 'track' && { event: message.event }),
          ...(message.type === 'identify' ? { traits: message.values } : { properties: message.values }),
        }));
        const plannedIds = bodies.map(() => randomUUID());
        const unplannedIds = bodies.map(() => randomUUID());
        const toPlanned = await postJson(
          t,
          '/v1/batch',
          { batch: bodies.map((body, index) => ({ ...body, messageId: plannedIds[index] })) },
          planned.writeKey,
        );
        const toUnplanned = await postJson(
          t,
          '/v1/batch',
          { batch: bodies.map((body, index) => ({ ...body, messageId: unplannedIds[index] })) },
          unplanned.writeKey,
        );
        expect([toPlanned.status, toUnplanned.status]).toEqual([200, 200]);

        const [plannedLog, unplannedLog] = await Promise.all([
          readLog(t, { sourceId: planned.sourceId }),
          readLog(t, { sourceId: unplanned.sourceId }),
        ]);
        const plannedById = new Map(plannedLog.map((stored) => [stored.messageId, stored.payload]));
        const unplannedById = new Map(unplannedLog.map((stored) => [stored.messageId, stored.payload]));
        const plan = compilePlan({ planId, planName: 'P', rules });
        bodies.forEach((_body, index) => {
          const withoutPlan = unplannedById.get(unplannedIds[index])!;
          expect(withoutPlan).toBeDefined();
          const verdict = judgeMessage(plan, { ...PERMISSIVE_SETTINGS, ...settings }, planned.sourceId, {
            ...withoutPlan,
            messageId: plannedIds[index],
          } as TrackingMessage);
          const stored = plannedById.get(plannedIds[index]);
          if (verdict.kind === 'block') {
            expect(stored).toBeUndefined();
          } else if (!verdict.changed) {
            unchangedSeen += 1;
            expect(comparable(stored!)).toBe(comparable(withoutPlan));
          } else {
            expect((stored!.context as any).protocols.sourceId).toBe(planned.sourceId);
          }
        });
      }),
      { numRuns: 25 },
    );
    // The property held on real cases, not only on blocked or changed ones.
    expect(unchangedSeen).toBeGreaterThan(10);
  }, 240_000);
});
