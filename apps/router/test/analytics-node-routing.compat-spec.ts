// The whole path with the real @segment/analytics-node 3.1: Config API → tracking API → event log →
// router → two webhooks (one named apart from its catalog entry) and PostgreSQL, all over loopback.
import { Analytics } from '@segment/analytics-node';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, type TestSource } from '../../../test/support/tracking-e2e.kit';
import {
  createDestination,
  createWebhookDestination,
  openTestSchema,
  POLLING_ENVIRONMENT,
  TEST_DATABASE_URL,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from './router-e2e.kit';

describe('@segment/analytics-node 3.1 through the router to webhooks and PostgreSQL', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let webhookA: WebhookReceiver;
  let webhookB: WebhookReceiver;
  let database: Awaited<ReturnType<typeof openTestSchema>>;

  beforeAll(async () => {
    database = await openTestSchema();
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t, { catalog: 'node' });
    webhookA = await WebhookReceiver.start({ secret: 'secret-of-a' });
    webhookB = await WebhookReceiver.start({ secret: 'secret-of-b' });
    await createWebhookDestination(t, source, 'webhooks', webhookA, 'secret-of-a');
    const second = await createWebhookDestination(t, source, 'webhooks-b', webhookB, 'secret-of-b');
    expect(second).toMatchObject({ enabled: true });
    await createDestination(t, source, {
      slug: 'postgres',
      enabled: true,
      config: { connection_string: TEST_DATABASE_URL, schema: database.schema },
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await webhookA?.close();
    await webhookB?.close();
    await database?.drop();
  });

  it('delivers all six types once to each webhook, signed, and as rows to PostgreSQL', async () => {
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      path: '/v1/batch',
      flushAt: 6,
      flushInterval: 100,
      maxRetries: 0,
    });
    const statuses: number[] = [];
    analytics.on('http_response', (response) => statuses.push(response.status));
    const run = `${process.pid}-${Date.now()}`;
    analytics.identify({
      userId: `user-${run}`,
      traits: { email: 'ada@example.com', plan: 'pro' },
      messageId: `identify-${run}`,
    });
    analytics.track({
      userId: `user-${run}`,
      event: 'Order Completed',
      properties: { revenue: 42.5, currency: 'EUR' },
      messageId: `track-${run}`,
    });
    analytics.page({
      userId: `user-${run}`,
      name: 'Getting Started',
      properties: { path: '/docs' },
      messageId: `page-${run}`,
    });
    analytics.screen({ userId: `user-${run}`, name: 'Home', messageId: `screen-${run}` });
    analytics.group({
      userId: `user-${run}`,
      groupId: 'group-1',
      traits: { name: 'Acme' },
      messageId: `group-${run}`,
    });
    analytics.alias({ userId: `user-${run}`, previousId: 'anon-1', messageId: `alias-${run}` });
    await analytics.closeAndFlush({ timeout: 10_000 });
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200)).toBe(true);

    const ids = ['identify', 'track', 'page', 'screen', 'group', 'alias'].map((type) => `${type}-${run}`);
    await waitForAccepted(webhookA, ids, 10_000);
    await waitForAccepted(webhookB, ids, 10_000);
    // Steady state: every destination has a final outcome for all six, so a duplicate would show now.
    for (const slug of ['webhooks', 'webhooks-b', 'postgres']) {
      const metrics = await waitForSettled(t, source, slug, 6);
      expect(metrics.counts).toMatchObject({
        delivered: 6,
        discarded: 0,
        filtered: 0,
        skipped: 0,
        dead_lettered: 0,
      });
    }

    for (const receiver of [webhookA, webhookB]) {
      expect(receiver.requests.map((request) => request.messageId).sort()).toEqual([...ids].sort());
      for (const request of receiver.requests) {
        expect({ id: request.messageId, signatureValid: request.signatureValid }).toEqual({
          id: request.messageId,
          signatureValid: true,
        });
        expect(request.signature).toMatch(/^[0-9a-f]{40}$/);
      }
      expect(receiver.acceptedOnce(`track-${run}`)!.body).toMatchObject({
        type: 'track',
        event: 'Order Completed',
        properties: { revenue: 42.5, currency: 'EUR' },
        context: { library: { name: '@segment/analytics-node' } },
      });
    }
    // Each webhook signs with its own secret: B's signature is not A's for the same body bytes.
    const aTrack = webhookA.acceptedOnce(`track-${run}`)!;
    const bTrack = webhookB.acceptedOnce(`track-${run}`)!;
    expect(aTrack.rawBody.equals(bTrack.rawBody)).toBe(true);
    expect(aTrack.signature).not.toBe(bTrack.signature);

    const rows = async (table: string, column = 'id') =>
      (
        await database.client.query(
          `SELECT "${column}" AS value FROM "${database.schema}"."${table}" ORDER BY 1`,
        )
      ).rows.map((row) => row.value);
    expect(await rows('identifies')).toEqual([`identify-${run}`]);
    expect(await rows('users')).toEqual([`user-${run}`]);
    expect(await rows('tracks')).toEqual([`track-${run}`]);
    expect(await rows('order_completed')).toEqual([`track-${run}`]);
    expect(await rows('order_completed', 'revenue')).toEqual([42.5]);
    expect(await rows('pages')).toEqual([`page-${run}`]);
    expect(await rows('screens')).toEqual([`screen-${run}`]);
    expect(await rows('groups')).toEqual([`group-${run}`]);
    expect(await rows('aliases')).toEqual([`alias-${run}`]);
    expect(await rows('users', 'email')).toEqual(['ada@example.com']);
  });
});
