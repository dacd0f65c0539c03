// Browser events end to end on the production topology: the standalone config-api, tracking-api and
// router processes (one SQLite event store, one nats-server). A page on its own loopback origin pastes
// Segment's snippet pointing at the standalone tracking-api, which serves the loader, the settings and
// the short routes; the router delivers what the page sent to a webhook, as it does server-side events.
import { NatsServerProcess } from '@tributary/event-log/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { rawExchange, rawRequest } from '../support/raw-http';
import { spawnTributaryApp, type TributaryProcess } from '../support/tributary-process';
import {
  createWorkspaceAndSource,
  pollUntil,
  type ApiEndpoint,
  type TestSource,
} from '../support/tracking-e2e.kit';
import {
  createWebhookDestination,
  POLLING_ENVIRONMENT,
  WebhookReceiver,
} from '../../apps/router/test/router-e2e.kit';
import {
  anonymousIdCookie,
  chromiumAvailable,
  describeTraffic,
  launchChromium,
  recordTraffic,
  snippetPage,
  startPageServer,
} from '../support/browser.kit';

const natsServerBinary = NatsServerProcess.findBinary();
const runnable = chromiumAvailable && natsServerBinary !== undefined;
if (!runnable) console.warn('browser-sources.e2e-spec skipped: it needs Chromium and nats-server');
const describeRunnable = runnable ? describe : describe.skip;

describeRunnable('browser events through the standalone tracking-api and router to a webhook', () => {
  const processes: TributaryProcess[] = [];
  let nats: NatsServerProcess;
  let receiver: WebhookReceiver;
  let dataDir: string;
  let browser: Browser;
  let pageServer: Awaited<ReturnType<typeof startPageServer>>;
  let trackingApi: TributaryProcess;
  let source: TestSource;
  const pages = new Map<string, string>();

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    dataDir = mkdtempSync(join(tmpdir(), 'tributary-browser-topology-'));
    receiver = await WebhookReceiver.start({ secret: 'browser-hook' });
    const environment = {
      ...POLLING_ENVIRONMENT,
      NATS_URL: nats.url,
      TRIBUTARY_SECRET_KEY: randomBytes(32).toString('hex'),
    };
    const configApiProcess = await spawnTributaryApp('config-api', {
      dataDir,
      environment,
      startTimeoutMs: 60_000,
    });
    processes.push(configApiProcess);
    const { adminToken } = configApiProcess;
    const configApi: ApiEndpoint = { baseUrl: configApiProcess.baseUrl, adminToken };
    source = await createWorkspaceAndSource(configApi, { catalog: 'javascript' });
    await createWebhookDestination(configApi, source, 'webhooks', receiver, 'browser-hook');
    const started = await Promise.all([
      spawnTributaryApp('tracking-api', { dataDir, adminToken, environment, startTimeoutMs: 60_000 }),
      spawnTributaryApp('router', { dataDir, adminToken, environment, startTimeoutMs: 60_000 }),
    ]);
    processes.push(...started);
    trackingApi = started[0];
    pageServer = await startPageServer(pages);
    browser = await launchChromium();
    // The tracking API learns the write key from the shared store within a poll interval.
    await pollUntil('the tracking API knows the source', 20_000, async () => {
      const response = await fetch(`${trackingApi.baseUrl}/v1/projects/${source.writeKey}/settings`);
      return response.status === 200 ? true : undefined;
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await Promise.all(processes.map((child) => child.kill('SIGTERM')));
    await receiver?.close();
    await nats?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('delivers page, identify, track, group and alias from the snippet to the webhook, signed, with the page context', async () => {
    pages.set(
      '/shop',
      snippetPage(
        trackingApi.baseUrl,
        source.writeKey,
        `analytics.page('Shop');
         analytics.identify('shopper-1', { email: 'shopper@example.com' });
         analytics.track('Order Completed', { total: 42 });
         analytics.group('acme', { name: 'Acme' });
         analytics.alias('shopper-1b');`,
      ),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    const traffic = recordTraffic(page, trackingApi.baseUrl);
    try {
      await page.goto(`${pageServer.origin}/shop`);
      const { value: delivered } = await pollUntil(
        'five browser events at the webhook',
        60_000,
        async () => {
          const accepted = receiver.accepted();
          return new Set(accepted.map((request) => request.body.type)).size >= 5 ? accepted : undefined;
        },
        200,
      );
      const anonymousId = await anonymousIdCookie(context);
      expect(new Set(delivered.map((request) => request.body.type))).toEqual(
        new Set(['page', 'identify', 'track', 'group', 'alias']),
      );
      for (const request of delivered) {
        expect(request.signatureValid).toBe(true);
        expect(receiver.acceptedOnce(request.messageId)).toBeDefined();
        expect(request.body).toMatchObject({
          anonymousId,
          messageId: expect.stringMatching(/^ajs-next-\d+-/),
          context: {
            page: { url: `${pageServer.origin}/shop`, path: '/shop' },
            library: { name: 'analytics.js' },
            userAgent: expect.stringContaining('Chrome'),
            ip: '127.0.0.1',
          },
        });
      }
      const track = delivered.find((request) => request.body.type === 'track')!;
      expect(track.body).toMatchObject({
        event: 'Order Completed',
        properties: { total: 42 },
        userId: 'shopper-1',
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- what the page did:\n${describeTraffic(traffic)}`);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('answers preflights, wrong methods and its own edge refusals with CORS on the standalone tracking-api', async () => {
    const preflight = await rawRequest(trackingApi.port, {
      method: 'OPTIONS',
      path: '/v1/t',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://shop.example');
    const wrongMethod = await rawRequest(trackingApi.port, {
      method: 'GET',
      path: '/v1/t',
      headers: { origin: 'https://shop.example' },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers['access-control-allow-origin']).toBe('https://shop.example');
    const edge = await rawExchange(trackingApi.port, [
      'POST /v1/b HTTP/1.1\r\nHost: x\r\nOrigin: https://shop.example\r\nTransfer-Encoding: bogus\r\n\r\n',
    ]);
    expect(edge.responses[0]?.status).toBe(400);
    expect(edge.responses[0]?.headers['access-control-allow-origin']).toBe('*');
    const loader = await fetch(`${trackingApi.baseUrl}/analytics.js/v1/${source.writeKey}/analytics.min.js`);
    expect(loader.status).toBe(200);
  });
});
