// Insert functions in front of a webhook destination (docs/functions.md §2): what they return is
// what the destination gets, a dropped message is filtered, a disabled instance passes messages through.
import { configApi } from '../support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import { workspaceName } from '@tributary/contracts';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../support/tracking-e2e.kit';
import {
  createWebhookDestination,
  destinationName,
  sendBatch,
  trackMessage,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { createFunction, createInsertFunction, FUNCTION_ENVIRONMENT, outcomesOf } from './functions-e2e.kit';

const RENAME_AND_DROP = `
async function onTrack(event, settings) {
  if (event.event === settings.dropEvent) return;
  event.properties.revenue = event.properties.total;
  delete event.properties.total;
  event.messageId = 'changed-by-the-function';
  return event;
}
async function onIdentify(event) {
  if (event.traits && event.traits.email) event.traits.email = '***';
  return event;
}
`;

describe('insert functions', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let changed: WebhookReceiver;
  let passed: WebhookReceiver;
  let functionId: string;

  beforeAll(async () => {
    t = await startTributary({ environment: FUNCTION_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    changed = await WebhookReceiver.start({ secret: 'changed' });
    passed = await WebhookReceiver.start({ secret: 'passed' });
    functionId = await createFunction(t, source.workspaceSlug, 'INSERT_DESTINATION', RENAME_AND_DROP, [
      { name: 'dropEvent', required: true },
    ]);
    await createWebhookDestination(t, source, 'webhooks', changed, 'changed');
    await createWebhookDestination(t, source, 'webhooks-2', passed, 'passed');
    await createInsertFunction(t, source, 'webhooks', functionId, { config: { dropEvent: 'Page Scrolled' } });
    await createInsertFunction(t, source, 'webhooks-2', functionId, {
      enabled: false,
      config: { dropEvent: 'Page Scrolled' },
    });
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await changed?.close();
    await passed?.close();
  });

  it('sends what the function returned, with the original messageId, and filters what it dropped', async () => {
    const order = trackMessage({ event: 'Order Completed', properties: { total: 30 } });
    const scrolled = trackMessage({ event: 'Page Scrolled', properties: { depth: 80 } });
    const identify = {
      type: 'identify',
      messageId: `e2e-identify-${Date.now()}`,
      userId: 'user-1',
      traits: { email: 'ada@example.com' },
    };
    await sendBatch(t, source, [order, scrolled, identify]);

    await waitForAccepted(changed, [order.messageId, identify.messageId], 15_000);
    const metrics = await waitForSettled(t, source, 'webhooks', 3);
    expect(metrics.counts).toMatchObject({ delivered: 2, filtered: 1, discarded: 0 });

    const orderRequest = changed.acceptedOnce(order.messageId)!;
    expect(orderRequest.signatureValid).toBe(true);
    expect(orderRequest.body.properties).toEqual({ revenue: 30 });
    expect(orderRequest.body).toMatchObject({ type: 'track', event: 'Order Completed', userId: 'user-1' });
    expect(changed.acceptedOnce(identify.messageId)!.body.traits).toEqual({ email: '***' });
    expect(changed.acceptedIds()).not.toContain(scrolled.messageId);
    expect(changed.acceptedIds()).not.toContain('changed-by-the-function');

    const outcomes = await outcomesOf(t, source, 'webhooks', [scrolled.messageId]);
    expect(outcomes.get(scrolled.messageId)).toEqual({
      outcome: 'filtered',
      detail: 'insert_function: dropped',
    });
  }, 60_000);

  it('passes messages through a disabled insert function unchanged, as they are stored', async () => {
    const order = trackMessage({ event: 'Order Completed', properties: { total: 12 } });
    const scrolled = trackMessage({ event: 'Page Scrolled' });
    await sendBatch(t, source, [order, scrolled]);
    await waitForAccepted(passed, [order.messageId, scrolled.messageId], 15_000);
    expect(passed.acceptedOnce(order.messageId)!.body.properties).toEqual({ total: 12 });
    expect(passed.acceptedOnce(order.messageId)!.signatureValid).toBe(true);
  }, 30_000);

  it('runs the function again once it is enabled', async () => {
    const response = await configApi(
      t,
      'PATCH',
      `${destinationName(source, 'webhooks-2')}/insert-functions/${functionId}`,
      { insert_function: { enabled: true }, update_mask: { paths: ['insert_function.enabled'] } },
    );
    expect(response.status).toBe(200);
    const order = trackMessage({ event: 'Order Completed', properties: { total: 7 } });
    await sendBatch(t, source, [order]);
    await waitForAccepted(passed, [order.messageId], 15_000);
    expect(passed.acceptedOnce(order.messageId)!.body.properties).toEqual({ revenue: 7 });
  }, 30_000);
});

// A destination with an insert function holds a lane call's worth of messages more than it sends at
// once (`DeliveryBudget`), so the function's round trip does not leave the destination's places idle;
// the destination still gets at most ROUTER_MAX_IN_FLIGHT requests at once.
describe('insert functions: what a destination holds and what it is sent at once', () => {
  const MAX_IN_FLIGHT = 4;
  let t: TributaryTestInstance;
  let source: TestSource;
  let slow: WebhookReceiver;
  let functionId: string;

  beforeAll(async () => {
    t = await startTributary({
      environment: { ...FUNCTION_ENVIRONMENT, ROUTER_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) },
    });
    source = await createWorkspaceAndSource(t);
    slow = await WebhookReceiver.start({ secret: 'slow', delayMs: 150 });
    functionId = await createFunction(
      t,
      source.workspaceSlug,
      'INSERT_DESTINATION',
      'async function onTrack(event) { event.properties.seen = true; return event; }',
    );
    await createWebhookDestination(t, source, 'webhooks', slow, 'slow');
    // Added after the destination: its running consumer is started again with the larger budget.
    await createInsertFunction(t, source, 'webhooks', functionId);
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await slow?.close();
  });

  it('runs the function ahead of a slow destination, which never gets more than its limit at once', async () => {
    const messages = Array.from({ length: 40 }, (_, index) => trackMessage({ properties: { index } }));
    await sendBatch(t, source, messages);
    const ids = messages.map((message) => message.messageId as string);

    // Every invocation is done while the destination has taken only some: 40 messages at 4 at a time
    // and 150 ms each take 1.5 s there.
    const invocations = await pollUntil('every message through the insert function', 15_000, async () => {
      const metrics = await configApi(
        t,
        'GET',
        `${workspaceName(source.workspaceSlug)}/functions/${functionId}/metrics`,
      );
      return metrics.body.invocations >= ids.length ? metrics.body.invocations : undefined;
    });
    expect(invocations.value).toBe(ids.length);
    expect(slow.accepted().length).toBeLessThan(ids.length / 2);

    await waitForAccepted(slow, ids, 15_000);
    for (const id of ids) expect(slow.acceptedOnce(id)!.body.properties.seen).toBe(true);
    expect(slow.mostAtOnce).toBe(MAX_IN_FLIGHT);
  }, 60_000);
});
