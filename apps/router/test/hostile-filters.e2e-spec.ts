// A destination filter whose field paths climb into built-in prototypes (`__proto__`, `constructor`,
// `prototype`), stored before the Config API refused such paths: the event is appended straight to
// the event store, as an old store would hold it. The router must neither run it against the
// process's intrinsics nor stop delivering: the filter fails closed for its own destination (the
// message is held back, counted as filtered) and every other destination delivers as usual.
import { streamNames } from '@tributary/config-domain';
import { EVENT_STORE, type EventStore } from '@tributary/event-store';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createWebhookDestination,
  deliveryMetrics,
  destinationName,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from './router-e2e.kit';

/** Field paths that reach `Object.prototype` from a plain message object through tsub's `dlv` lookup. */
const PROTOTYPE_PATHS = [
  '__proto__.hasOwnProperty',
  '__proto__.toString',
  'constructor.prototype.valueOf',
  'constructor.prototype.isPrototypeOf',
  'address.__proto__.propertyIsEnumerable',
  '__proto__.constructor',
];

const INTRINSICS: [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
  ['Number.prototype', Number.prototype],
  ['Object', Object],
];

/** Every own property (names and symbols) of each intrinsic, with its descriptor. */
function snapshotIntrinsics(): Map<string, Map<PropertyKey, PropertyDescriptor>> {
  return new Map(
    INTRINSICS.map(([name, target]) => [
      name,
      new Map(Reflect.ownKeys(target).map((key) => [key, Object.getOwnPropertyDescriptor(target, key)!])),
    ]),
  );
}

function changedIntrinsics(before: Map<string, Map<PropertyKey, PropertyDescriptor>>): string[] {
  const after = snapshotIntrinsics();
  const changes: string[] = [];
  for (const [name, properties] of before) {
    const now = after.get(name)!;
    for (const [key, descriptor] of properties) {
      const current = now.get(key);
      if (!current) changes.push(`${name}.${String(key)} deleted`);
      else if (current.value !== descriptor.value || current.get !== descriptor.get) {
        changes.push(`${name}.${String(key)} replaced`);
      }
    }
    for (const key of now.keys()) if (!properties.has(key)) changes.push(`${name}.${String(key)} added`);
  }
  return changes;
}

describe('a filter with prototype paths stored before the Config API refused them', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let hostile: WebhookReceiver;
  let bystander: WebhookReceiver;
  let intrinsicsBefore: ReturnType<typeof snapshotIntrinsics>;
  const filterId = 'df_stored_before_the_fix';

  beforeAll(async () => {
    intrinsicsBefore = snapshotIntrinsics();
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    hostile = await WebhookReceiver.start({ secret: 'secret-hostile' });
    bystander = await WebhookReceiver.start({ secret: 'secret-bystander' });
    await createWebhookDestination(t, source, 'webhooks', hostile, 'secret-hostile');
    await createWebhookDestination(t, source, 'webhooks-bystander', bystander, 'secret-bystander');

    // The Config API refuses these paths now; an old store may still hold them.
    const refused = await configApi(t, 'POST', `${destinationName(source, 'webhooks')}/filters`, {
      filter: {
        title: 'climbs into prototypes',
        if: 'all',
        enabled: true,
        actions: [{ type: 'blacklist_fields', fields: { properties: { fields: PROTOTYPE_PATHS } } }],
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 3,
      error: expect.stringMatching(/"__proto__".*cannot be used as field names/),
    });

    const store = t.app.get<EventStore>(EVENT_STORE);
    const stream = streamNames.destination(source.sourceId, 'webhooks');
    const history = await store.readStream(stream);
    const now = new Date().toISOString();
    await store.append(
      stream,
      [
        {
          type: 'DestinationFilterCreated',
          data: {
            workspaceSlug: source.workspaceSlug,
            sourceSlug: source.sourceSlug,
            sourceId: source.sourceId,
            destinationSlug: 'webhooks',
            filter: {
              filterId,
              title: 'climbs into prototypes',
              description: '',
              if: 'all',
              enabled: true,
              actions: [
                { type: 'blacklist_fields', fields: { properties: { fields: PROTOTYPE_PATHS } } },
                {
                  type: 'blacklist_fields',
                  fields: { context: { fields: ['__proto__.hasOwnProperty'] } },
                },
                {
                  type: 'whitelist_fields',
                  fields: { traits: { fields: ['constructor.prototype.x', 'name'] } },
                },
              ],
              createTime: now,
              updateTime: now,
            },
          },
          metadata: { actor: 'system', requestId: 'stored-before-the-fix', time: now },
        },
      ],
      history.length - 1,
    );
    // The Config API shows the stored filter: the read model folded it.
    await pollUntil('the stored filter is folded', 10_000, async () => {
      const listed = await configApi(t, 'GET', `${destinationName(source, 'webhooks')}/filters`);
      const names: string[] = listed.body.filters.map((filter: { name: string }) => filter.name);
      return names.some((name) => name.endsWith(`/filters/${filterId}`)) ? true : undefined;
    });
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await hostile?.close();
    await bystander?.close();
  });

  it('leaves every intrinsic intact, holds back its own destination and delivers the others', async () => {
    const messages = [
      trackMessage({ properties: { revenue: 1, address: { city: 'Oslo' } } }),
      trackMessage({ properties: { revenue: 2 } }),
      trackMessage({ type: 'identify', event: undefined, traits: { name: 'Ada', email: 'a@example.com' } }),
    ];
    await sendBatch(t, source, messages);

    await waitForAccepted(
      bystander,
      messages.map((message) => message.messageId),
      20_000,
    );
    const metrics = await waitForSettled(t, source, 'webhooks', messages.length, 20_000);
    expect(changedIntrinsics(intrinsicsBefore)).toEqual([]);
    expect({}.hasOwnProperty.call({ a: 1 }, 'a')).toBe(true);
    expect(Object.prototype.toString.call([])).toBe('[object Array]');
    expect({}.constructor).toBe(Object);

    // Fail closed: a filter the router must not run holds its destination's messages back.
    expect(metrics.counts).toMatchObject({ delivered: 0, filtered: messages.length });
    expect(hostile.requests).toHaveLength(0);
    expect(bystander.acceptedIds().sort()).toEqual(messages.map((message) => message.messageId).sort());

    // Once the operator removes the filter, its destination delivers again.
    const removed = await configApi(
      t,
      'DELETE',
      `${destinationName(source, 'webhooks')}/filters/${filterId}`,
    );
    expect(removed.status).toBe(200);
    const after = trackMessage({ properties: { revenue: 3 } });
    await sendBatch(t, source, [after]);
    await waitForAccepted(hostile, [after.messageId], 20_000);
    await waitForAccepted(bystander, [after.messageId], 20_000);
    expect((await deliveryMetrics(t, source, 'webhooks')).counts.delivered).toBe(1);
    expect(changedIntrinsics(intrinsicsBefore)).toEqual([]);
  }, 90_000);
});
