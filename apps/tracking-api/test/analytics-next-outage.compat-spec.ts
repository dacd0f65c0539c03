// analytics.js in Chromium while the event log is down (docs/architecture.md invariant 1,
// docs/browser-mobile.md §1a(vi)): Tributary answers 503 with CORS headers, so the library reads the
// status and retries the same messageId with X-Retry-Count; once nats-server is back the event is
// stored exactly once.
import { NatsServerProcess } from '@tributary/event-log/testing';
import type { Browser, Response } from 'playwright-core';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  readSourceMessages,
} from '../../../test/support/tracking-e2e.kit';
import {
  chromiumAvailable,
  describeTraffic,
  launchChromium,
  recordTraffic,
  snippetPage,
  startPageServer,
} from '../../../test/support/browser.kit';

const natsServerBinary = NatsServerProcess.findBinary();
const runnable = chromiumAvailable && natsServerBinary !== undefined;
if (!runnable) console.warn('analytics-next-outage.compat-spec skipped: it needs Chromium and nats-server');
const describeRunnable = runnable ? describe : describe.skip;

describeRunnable('analytics.js in Chromium during an event log outage', () => {
  let nats: NatsServerProcess;
  let t: TributaryTestInstance;
  let browser: Browser;
  let pageServer: Awaited<ReturnType<typeof startPageServer>>;
  const pages = new Map<string, string>();

  beforeAll(async () => {
    nats = await NatsServerProcess.start();
    t = await startTributary({ environment: { NATS_URL: nats.url } });
    pageServer = await startPageServer(pages);
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await t?.stop({ removeData: true });
    await nats?.dispose();
  }, 30_000);

  it('retries an event answered 503 with the same messageId, and stores it once when the log is back', async () => {
    const source = await createWorkspaceAndSource(t, { catalog: 'javascript' });
    pages.set('/outage', snippetPage(t.baseUrl, source.writeKey, `analytics.page();`));
    const context = await browser.newContext();
    const page = await context.newPage();
    const traffic = recordTraffic(page, t.baseUrl);
    const trackResponses: Response[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/v1/t')) trackResponses.push(response);
    });
    try {
      await page.goto(`${pageServer.origin}/outage`);
      await pollUntil('the first page view stored', 30_000, async () =>
        [...(await readSourceMessages(t, source)).values()].some(({ payload }) => payload.type === 'page')
          ? true
          : undefined,
      );

      await nats.stop();
      let restarted = false;
      try {
        await page.evaluate("analytics.track('During Outage')");
        await pollUntil('a 503 answer to the track post', 30_000, async () =>
          trackResponses.some((response) => response.status() === 503) ? true : undefined,
        );
      } finally {
        await nats.restart();
        restarted = true;
      }
      expect(restarted).toBe(true);

      const { value: stored } = await pollUntil(
        'the retried event stored',
        90_000,
        async () => {
          const messages = [...(await readSourceMessages(t, source)).values()];
          const matching = messages.filter(({ payload }) => payload.event === 'During Outage');
          return matching.length > 0 ? matching : undefined;
        },
        250,
      );
      // Once: readSourceMessages also fails if any messageId is stored twice.
      expect(stored).toHaveLength(1);

      const refused = trackResponses.find((response) => response.status() === 503)!;
      expect(refused.headers()['access-control-allow-origin']).toBe(pageServer.origin);
      expect(refused.headers()['access-control-expose-headers']).toMatch(/Retry-After/);
      expect(refused.headers()['retry-after']).toMatch(/^\d+$/);

      // Every attempt carried the same messageId; the retries said so in X-Retry-Count.
      const attempts = traffic.requests.filter(
        (request) => request.method() === 'POST' && request.url().endsWith('/v1/t'),
      );
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      const messageIds = new Set(attempts.map((request) => JSON.parse(request.postData() ?? '{}').messageId));
      expect([...messageIds]).toEqual([stored[0].messageId]);
      expect(attempts.slice(1).every((request) => Number(request.headers()['x-retry-count']) >= 1)).toBe(
        true,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- what the page did:\n${describeTraffic(traffic)}`);
    } finally {
      await context.close();
    }
  }, 200_000);
});
