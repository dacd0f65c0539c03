// The production topology in miniature: the standalone config-api, tracking-api and two router
// replicas as separate processes, sharing config through one SQLite event store (same DATA_DIR; each
// process sees the others' appends by polling the file) and tracking messages through one real
// nats-server. Two replicas pull from the same durable consumer per destination, so JetStream gives
// each message to one of them: the webhook must see every message exactly once, and both must work.
import {
  createWorkspaceAndSource,
  pollUntil,
  postJson,
  sleep,
  type ApiEndpoint,
  type TestSource,
} from '../support/tracking-e2e.kit';
import {
  createWebhookDestination,
  deliveryMetrics,
  trackMessage,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import { StandaloneTopology } from './standalone-topology.kit';

const MESSAGES = 160;
const BATCH_SIZE = 20;
/** A slow receiver and a small in-flight budget keep a backlog, so both replicas get pulls served. */
const RECEIVER_DELAY_MS = 15;
/** After the last delivery, how long to keep watching for a second copy of anything. */
const DUPLICATE_WATCH_MS = 1_500;

describe('standalone apps with two router replicas on one JetStream', () => {
  let topology: StandaloneTopology;
  let receiver: WebhookReceiver;
  let configApi: ApiEndpoint;
  let trackingApi: ApiEndpoint;
  let source: TestSource;

  beforeAll(async () => {
    topology = await StandaloneTopology.start('topology', { ROUTER_MAX_IN_FLIGHT: '4' });
    receiver = await WebhookReceiver.start({ secret: 'replicas', delayMs: RECEIVER_DELAY_MS });
  });

  afterAll(async () => {
    await topology?.dispose('SIGTERM');
    await receiver?.close();
  });

  it('delivers every message to the webhook exactly once, the work shared by both replicas', async () => {
    configApi = (await topology.startConfigApi()).endpoint;
    source = await createWorkspaceAndSource(configApi);
    await createWebhookDestination(configApi, source, 'webhooks', receiver, 'replicas');

    const [routerA, routerB, trackingApiProcess] = await Promise.all([
      topology.spawn('router'),
      topology.spawn('router'),
      topology.spawn('tracking-api'),
    ]);
    trackingApi = topology.endpointOf(trackingApiProcess);

    // The tracking API learns the write key from the shared store within a poll interval; until then a
    // batch is refused and sent again (the same messageIds, so a retry can never double a message).
    const sent: string[] = [];
    for (let start = 0; start < MESSAGES; start += BATCH_SIZE) {
      const batch = Array.from({ length: BATCH_SIZE }, (_, index) =>
        trackMessage({ event: `Replica ${start + index}` }),
      );
      await pollUntil(`batch at ${start} accepted`, 10_000, async () => {
        const response = await postJson(trackingApi, '/v1/batch', { batch }, source.writeKey);
        return response.status === 200 ? true : undefined;
      });
      sent.push(...batch.map((message) => message.messageId as string));
    }

    await pollUntil('every message reaches the webhook', 30_000, async () =>
      new Set(receiver.acceptedIds()).size >= MESSAGES ? true : undefined,
    );
    await sleep(DUPLICATE_WATCH_MS);

    const accepted = receiver.accepted();
    expect(new Set(accepted.map((request) => request.messageId))).toEqual(new Set(sent));
    const copies = new Map<string, number>();
    for (const request of accepted) copies.set(request.messageId, (copies.get(request.messageId) ?? 0) + 1);
    expect([...copies].filter(([, count]) => count > 1)).toEqual([]);
    expect(accepted).toHaveLength(MESSAGES);
    expect(accepted.every((request) => request.signatureValid)).toBe(true);

    // Each replica counts its own deliveries: both took a share and together they delivered each once.
    const deliveredBy = await Promise.all(
      [routerA, routerB].map(async (router) => {
        const metrics = await deliveryMetrics(topology.endpointOf(router), source, 'webhooks');
        return metrics.counts.delivered;
      }),
    );
    expect(deliveredBy.every((delivered) => delivered > 0)).toBe(true);
    expect(deliveredBy[0] + deliveredBy[1]).toBe(MESSAGES);
  }, 120_000);

  it('serves only its own Config API routes on the router, behind the Config API guard', async () => {
    const router = topology.processes.find((child) => child.output().includes('tributary router listening'));
    expect(router).toBeDefined();
    const { baseUrl, adminToken } = router!;
    const health = await fetch(`${baseUrl}/health/ready`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: 'ok',
      info: { event_store: { status: 'up' }, event_log: { status: 'up' } },
    });
    // The rest of /v1beta belongs to the config-api process: unknown here, in the Config API error shape.
    const workspaces = await fetch(`${baseUrl}/v1beta/workspaces`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(workspaces.status).toBe(404);
    expect(await workspaces.json()).toMatchObject({ code: 5 });
    // Its own routes still need a valid token.
    const anonymous = await fetch(
      `${baseUrl}/v1beta/workspaces/any/sources/any/destinations/webhooks/metrics`,
    );
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 16 });
  });

  it('answers /health/ready on the config-api (event store, and the message log its live events and violations route read) and on the tracking API', async () => {
    const configApiProcess = topology.processes.find((child) =>
      child.output().includes('config-api listening'),
    )!;
    const configHealth = await fetch(`${configApiProcess.baseUrl}/health/ready`);
    expect(configHealth.status).toBe(200);
    const configReport = (await configHealth.json()) as { info: unknown };
    expect(configReport.info).toEqual({ event_store: { status: 'up' }, event_log: { status: 'up' } });

    const trackingProcess = topology.processes.find((child) =>
      child.output().includes('tracking-api listening'),
    )!;
    const trackingHealth = await fetch(`${trackingProcess.baseUrl}/health/ready`);
    expect(trackingHealth.status).toBe(200);
    expect(((await trackingHealth.json()) as { info: unknown }).info).toMatchObject({
      event_log: { status: 'up' },
    });
  });

  it('streams live events on the standalone config-api from the log the tracking API writes, and serves the console', async () => {
    const controller = new AbortController();
    const response = await fetch(
      `${configApi.baseUrl}/v1beta/workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/live-events`,
      { headers: { authorization: `Bearer ${configApi.adminToken}` }, signal: controller.signal },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const message = trackMessage({ event: 'Seen Live' });
    expect((await postJson(trackingApi, '/v1/batch', { batch: [message] }, source.writeKey)).status).toBe(
      200,
    );
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(message.messageId)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    expect(text).toMatch(new RegExp(`id: \\d+\ndata: \\{[^\\n]*"messageId":"${message.messageId}"`));

    // The console's files (or, before `npm run build:console`, a 503 that says so) under the same policy.
    const consolePage = await fetch(`${configApi.baseUrl}/console/`);
    expect([200, 503]).toContain(consolePage.status);
    expect(consolePage.headers.get('content-security-policy')).toContain("default-src 'self'");
  }, 30_000);
});
