// Which destinations get which message, end to end: the `integrations` object, destination filters
// made through the Config API, ingest dedupe, and the delivery metrics that count each outcome.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import {
  createDestination,
  createFilter,
  createWebhookDestination,
  destinationName,
  openTestSchema,
  POLLING_ENVIRONMENT,
  sendBatch,
  TEST_DATABASE_URL,
  trackMessage,
  waitForAccepted,
  waitForSettled,
  WebhookReceiver,
} from './router-e2e.kit';

describe('routing rules end to end', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let webhookA: WebhookReceiver;
  let webhookB: WebhookReceiver;
  let database: Awaited<ReturnType<typeof openTestSchema>>;

  beforeAll(async () => {
    database = await openTestSchema();
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    source = await createWorkspaceAndSource(t);
    webhookA = await WebhookReceiver.start({ secret: 'secret-a' });
    webhookB = await WebhookReceiver.start({ secret: 'secret-b' });
    await createWebhookDestination(t, source, 'webhooks', webhookA, 'secret-a');
    await createWebhookDestination(t, source, 'webhooks-b', webhookB, 'secret-b');
    await createDestination(t, source, {
      slug: 'postgres',
      enabled: true,
      config: { connection_string: TEST_DATABASE_URL, schema: database.schema },
    });
    // Filters on webhook A only: a filter is scoped to one source-destination pair.
    const drop = await createFilter(t, source, 'webhooks', {
      title: 'Drop Ignore Me',
      if: "event = 'Ignore Me'",
      enabled: true,
      actions: [{ type: 'drop_event' }],
    });
    expect(drop.name).toMatch(new RegExp(`^${destinationName(source, 'webhooks')}/filters/df_`));
    await createFilter(t, source, 'webhooks', {
      title: 'Remove the secret note',
      if: 'all',
      enabled: true,
      actions: [{ type: 'blacklist_fields', fields: { properties: { fields: ['secret_note'] } } }],
    });
    // Filters do not apply to warehouses (docs/config-api.md D7): one on PostgreSQL drops nothing.
    await createFilter(t, source, 'postgres', {
      title: 'ignored',
      if: 'all',
      enabled: true,
      actions: [{ type: 'drop_event' }],
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await webhookA?.close();
    await webhookB?.close();
    await database?.drop();
  });

  it('honours integrations, filters and dedupe, and the metrics count every outcome', async () => {
    const plain = trackMessage({ properties: { revenue: 3, secret_note: 'do not send to A' } });
    const ignored = trackMessage({ event: 'Ignore Me' });
    const webhooksOnly = trackMessage({
      event: 'Webhooks Only',
      integrations: { All: false, Webhooks: true },
    });
    const notWebhooks = trackMessage({ event: 'Not Webhooks', integrations: { Webhooks: false } });
    const postgresOnly = trackMessage({
      event: 'Postgres Only',
      integrations: { All: false, PostgreSQL: true },
    });
    await sendBatch(t, source, [plain, ignored, webhooksOnly, notWebhooks, postgresOnly]);

    // Wait for the webhooks to get what they should, then send a duplicate of a delivered message.
    await waitForAccepted(webhookA, [plain.messageId, webhooksOnly.messageId], 10_000);
    await waitForAccepted(webhookB, [plain.messageId, ignored.messageId, webhooksOnly.messageId], 10_000);
    await sendBatch(t, source, [{ ...plain, properties: { revenue: 999 } }]);
    const marker = trackMessage({ event: 'After The Duplicate' });
    await sendBatch(t, source, [marker]);

    // Steady state: every destination has settled all six stored messages (the duplicate is not stored).
    const metricsA = await waitForSettled(t, source, 'webhooks', 6);
    const metricsB = await waitForSettled(t, source, 'webhooks-b', 6);
    const metricsPostgres = await waitForSettled(t, source, 'postgres', 6);
    expect(metricsA.counts).toEqual({
      delivered: 3,
      filtered: 1,
      skipped: 2,
      discarded: 0,
      retried: 0,
      dead_lettered: 0,
    });
    expect(metricsB.counts).toEqual({
      delivered: 4,
      filtered: 0,
      skipped: 2,
      discarded: 0,
      retried: 0,
      dead_lettered: 0,
    });
    expect(metricsPostgres.counts).toEqual({
      delivered: 5,
      filtered: 0,
      skipped: 1,
      discarded: 0,
      retried: 0,
      dead_lettered: 0,
    });
    expect(metricsA.latency_ms.last_minute.samples).toBe(3);
    expect(metricsA.latency_ms.last_minute.p50).toEqual(expect.any(Number));

    expect(webhookA.requests.map((request) => request.messageId).sort()).toEqual(
      [plain.messageId, webhooksOnly.messageId, marker.messageId].sort(),
    );
    expect(webhookB.requests.map((request) => request.messageId).sort()).toEqual(
      [plain.messageId, ignored.messageId, webhooksOnly.messageId, marker.messageId].sort(),
    );
    for (const request of [...webhookA.requests, ...webhookB.requests])
      expect(request.signatureValid).toBe(true);

    // The block-list filter removed the property for A only; the duplicate's new payload went nowhere.
    expect(webhookA.acceptedOnce(plain.messageId)!.body.properties).toEqual({ revenue: 3 });
    expect(webhookB.acceptedOnce(plain.messageId)!.body.properties).toEqual({
      revenue: 3,
      secret_note: 'do not send to A',
    });

    // Segment's layout: `event` is the event's table name, `event_text` the name as sent.
    const tracks = await database.client.query(
      `SELECT id, event_text AS event FROM "${database.schema}".tracks ORDER BY 2`,
    );
    expect(tracks.rows).toEqual(
      [plain, ignored, notWebhooks, postgresOnly, marker]
        .map((message) => ({ id: message.messageId, event: message.event }))
        .sort((a, b) => a.event.localeCompare(b.event)),
    );
    const revenue = await database.client.query(
      `SELECT revenue FROM "${database.schema}".order_completed WHERE id = $1`,
      [plain.messageId],
    );
    expect(revenue.rows).toEqual([{ revenue: 3 }]);
  });

  it('answers 404 code 5 for the metrics of a destination that does not exist', async () => {
    const response = await configApi(t, 'GET', `${destinationName(source, 'nope')}/metrics`);
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 5 });
  });
});
