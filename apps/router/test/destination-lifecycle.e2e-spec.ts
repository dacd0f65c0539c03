// Destinations come and go while the router runs: a new one receives messages within a second, a
// deleted one receives nothing more, and one created again under the same name starts afresh.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import {
  createWebhookDestination,
  deleteDestination,
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  waitForAccepted,
  WebhookReceiver,
} from './router-e2e.kit';

describe('destinations created and deleted while the router runs', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let control: WebhookReceiver;
  let coming: WebhookReceiver;

  beforeAll(async () => {
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    control = await WebhookReceiver.start({ secret: 'control' });
    coming = await WebhookReceiver.start({ secret: 'coming' });
    // An always-present destination: when it has a message, the router has routed that message.
    await createWebhookDestination(t, source, 'webhooks', control, 'control');
    const warmUp = trackMessage();
    await sendBatch(t, source, [warmUp]);
    await waitForAccepted(control, [warmUp.messageId], 5_000);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await control?.close();
    await coming?.close();
  });

  it('delivers to a destination within a second of its creation', async () => {
    await createWebhookDestination(t, source, 'webhooks-new', coming, 'coming');
    const message = trackMessage({ event: 'First For The New One' });
    const sentAt = await sendBatch(t, source, [message]);
    await waitForAccepted(coming, [message.messageId], 5_000);
    const latencyMs = coming.acceptedOnce(message.messageId)!.arrivedAt - sentAt;
    expect(latencyMs).toBeLessThan(1_000);
    expect(coming.acceptedOnce(message.messageId)!.signatureValid).toBe(true);
  });

  it('stops delivering to a deleted destination', async () => {
    await deleteDestination(t, source, 'webhooks-new');
    const requestsBefore = coming.requests.length;
    const afterDelete = Array.from({ length: 5 }, (_, index) =>
      trackMessage({ event: `After Delete ${index}` }),
    );
    await sendBatch(t, source, afterDelete);
    // The control destination got them: they were routed, and the deleted one was not among the targets.
    await waitForAccepted(
      control,
      afterDelete.map((message) => message.messageId),
      5_000,
    );
    await sleep(200);
    expect(coming.requests.length).toBe(requestsBefore);
  });

  it('gives a destination created again under the same name only what is sent after', async () => {
    const beforeRecreate = trackMessage({ event: 'Before Recreate' });
    await sendBatch(t, source, [beforeRecreate]);
    await waitForAccepted(control, [beforeRecreate.messageId], 5_000);

    await createWebhookDestination(t, source, 'webhooks-new', coming, 'coming');
    const afterRecreate = trackMessage({ event: 'After Recreate' });
    await sendBatch(t, source, [afterRecreate]);
    await waitForAccepted(coming, [afterRecreate.messageId], 5_000);
    await waitForAccepted(control, [afterRecreate.messageId], 5_000);
    await sleep(200);
    const ids = coming.requests.map((request) => request.messageId);
    expect(ids).not.toContain(beforeRecreate.messageId);
    expect(ids.filter((id) => id === afterRecreate.messageId)).toHaveLength(1);
  });

  it('serves a destination deleted and created again at once', async () => {
    await deleteDestination(t, source, 'webhooks-new');
    await createWebhookDestination(t, source, 'webhooks-new', coming, 'coming');
    const message = trackMessage({ event: 'After A Quick Recreate' });
    await sendBatch(t, source, [message]);
    await waitForAccepted(control, [message.messageId], 5_000);
    await waitForAccepted(coming, [message.messageId], 5_000);
  });

  it('serves a destination re-created while a delivery to its predecessor is still in flight', async () => {
    const slow = await WebhookReceiver.start({ secret: 'slow', delayMs: 1_500 });
    try {
      await createWebhookDestination(t, source, 'webhooks-slow', slow, 'slow');
      const inFlight = trackMessage({ event: 'Held By The Receiver' });
      await sendBatch(t, source, [inFlight]);
      await pollUntil('the slow receiver holds a request', 5_000, async () =>
        slow.requests.length > 0 ? true : undefined,
      );

      await deleteDestination(t, source, 'webhooks-slow');
      await createWebhookDestination(t, source, 'webhooks-slow', slow, 'slow');
      slow.delayMs = 0;
      const afterRecreate = trackMessage({ event: 'For The Re-created One' });
      await sendBatch(t, source, [afterRecreate]);
      await waitForAccepted(control, [afterRecreate.messageId], 5_000);
      await waitForAccepted(slow, [afterRecreate.messageId], 5_000);
      // Once the predecessor's last delivery has ended, its clean-up must not take the new consumer along.
      await sleep(1_700);
      const later = trackMessage({ event: 'Later For The Re-created One' });
      await sendBatch(t, source, [later]);
      await waitForAccepted(control, [later.messageId], 5_000);
      await waitForAccepted(slow, [later.messageId], 5_000);
    } finally {
      await slow.close();
    }
  });
});
