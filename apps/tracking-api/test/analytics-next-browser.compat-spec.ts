// Segment's browser library, unchanged, in real Chromium against Tributary (docs/browser-mobile.md §1, §5):
// a page on one loopback origin pastes the standard snippet pointing at Tributary on another origin,
// so the loader, its lazy chunks, the settings fetch, the preflights and every event post cross
// origins as on a real site. The same page built on the npm package's `AnalyticsBrowser.load` with
// `cdnURL` works too.
import type { Browser, BrowserContext } from 'playwright-core';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  readSourceMessages,
  type StoredMessage,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import {
  anonymousIdCookie,
  chromiumAvailable,
  describeTraffic,
  launchChromium,
  npmPackagePage,
  recordTraffic,
  snippetPage,
  startPageServer,
} from '../../../test/support/browser.kit';

if (!chromiumAvailable)
  console.warn('analytics-next-browser.compat-spec skipped: no Chromium at /usr/bin/chromium');
const describeWithChromium = chromiumAvailable ? describe : describe.skip;

/** analytics-next's id: `ajs-next-<Date.now()>-<uuid v4>` (docs/tracking-api.md §1e). */
const AJS_MESSAGE_ID = /^ajs-next-\d+-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describeWithChromium('analytics.js (@segment/analytics-next) in Chromium', () => {
  let t: TributaryTestInstance;
  let browser: Browser;
  let pageServer: Awaited<ReturnType<typeof startPageServer>>;
  const pages = new Map<string, string>();

  beforeAll(async () => {
    t = await startTributary();
    pageServer = await startPageServer(pages);
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await t?.stop({ removeData: true });
  }, 30_000);

  /** Waits until the source holds every event `wanted` names (`type` or `type:event`). */
  async function storedEvents(source: TestSource, wanted: string[]): Promise<Map<string, StoredMessage>> {
    const { value } = await pollUntil(
      `events ${wanted.join(', ')} stored`,
      45_000,
      async () => {
        const byKey = new Map<string, StoredMessage>();
        for (const message of (await readSourceMessages(t, source)).values()) {
          const { type, event } = message.payload;
          byKey.set(type === 'track' ? `track:${event}` : type, message);
        }
        return wanted.every((key) => byKey.has(key)) ? byKey : undefined;
      },
      250,
    );
    return value;
  }

  it('delivers page, identify, track, group and alias from the snippet with the page context, cookie id and messageId, and keeps the id across a reload', async () => {
    const source = await createWorkspaceAndSource(t, { catalog: 'javascript' });
    pages.set(
      '/snippet',
      snippetPage(
        t.baseUrl,
        source.writeKey,
        `analytics.page();
         analytics.identify('user-1', { email: 'user-1@example.com' });
         analytics.track('Button Clicked', { color: 'red' });
         analytics.group('g-1', { name: 'Acme' });
         analytics.alias('user-1b', 'user-1');`,
      ),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    const traffic = recordTraffic(page, t.baseUrl);
    try {
      // `ajs_event` in the URL makes analytics.js fetch its queryString chunk from Tributary and
      // send one more track.
      const url = `${pageServer.origin}/snippet?utm_source=newsletter&utm_campaign=spring&ajs_event=Opened%20From%20Link`;
      await page.goto(url);
      const stored = await storedEvents(source, [
        'page',
        'identify',
        'track:Button Clicked',
        'group',
        'alias',
        'track:Opened From Link',
      ]);

      const anonymousId = await anonymousIdCookie(context);
      expect(anonymousId).toMatch(/^[0-9a-f-]{36}$/);
      const userAgent = await page.evaluate<string>('navigator.userAgent');
      for (const [key, message] of stored) {
        const { payload } = message;
        expect({ key, messageId: payload.messageId }).toEqual({
          key,
          messageId: expect.stringMatching(AJS_MESSAGE_ID),
        });
        expect(payload.anonymousId).toBe(anonymousId);
        expect(payload.context).toMatchObject({
          page: { url, path: '/snippet', title: 'Tributary snippet test' },
          userAgent,
          library: { name: 'analytics.js', version: expect.stringMatching(/^next-1\.84\.3$/) },
          campaign: { source: 'newsletter', name: 'spring' },
          ip: '127.0.0.1',
        });
        // The body's writeKey (from the settings' apiKey) is not kept in the stored message.
        expect(payload.writeKey).toBeUndefined();
      }
      expect(stored.get('identify')!.payload).toMatchObject({
        userId: 'user-1',
        traits: { email: 'user-1@example.com' },
      });
      expect(stored.get('track:Button Clicked')!.payload.properties).toEqual({ color: 'red' });
      expect(stored.get('group')!.payload).toMatchObject({ groupId: 'g-1', traits: { name: 'Acme' } });
      expect(stored.get('page')!.payload.properties).toMatchObject({ url, path: '/snippet' });

      // What crossed origins: the chunk, the settings, preflights answered 204, posts to the short routes.
      const seen = traffic.requests.map(
        (request) => `${request.method()} ${new URL(request.url()).pathname}`,
      );
      expect(seen).toEqual(
        expect.arrayContaining([
          `GET /analytics.js/v1/${source.writeKey}/analytics.min.js`,
          `GET /v1/projects/${source.writeKey}/settings`,
          expect.stringMatching(/^GET \/analytics-next\/bundles\/queryString\.bundle\.[0-9a-f]{20}\.js$/),
          'POST /v1/p',
          'POST /v1/i',
          'POST /v1/t',
          'POST /v1/g',
          'POST /v1/a',
        ]),
      );
      for (const request of traffic.requests.filter((request) => request.method() === 'POST')) {
        expect(request.headers()['authorization']).toBe(
          `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
        );
        expect(request.headers()['content-type']).toBe('text/plain');
      }
      const eventPosts = traffic.responses.filter((response) => /\/v1\/[tipga]$/.test(response.url()));
      expect(eventPosts.map((response) => response.status())).toEqual(eventPosts.map(() => 200));
      expect(traffic.console.filter((line) => /CORS|Failed to load|error/i.test(line))).toEqual([]);

      // A reload keeps the anonymous id (the cookie), and its events still arrive.
      pages.set('/snippet', snippetPage(t.baseUrl, source.writeKey, `analytics.track('After Reload');`));
      await page.reload();
      const afterReload = await storedEvents(source, ['track:After Reload']);
      expect(afterReload.get('track:After Reload')!.payload.anonymousId).toBe(anonymousId);
      expect(afterReload.get('track:After Reload')!.payload.userId).toBe('user-1');
      expect(await anonymousIdCookie(context)).toBe(anonymousId);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- what the page did:\n${describeTraffic(traffic)}`);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('works from the npm package too: AnalyticsBrowser.load with cdnURL', async () => {
    const source = await createWorkspaceAndSource(t, { catalog: 'javascript' });
    pages.set(
      '/npm',
      npmPackagePage(
        t.baseUrl,
        source.writeKey,
        `analytics.identify('npm-user', { plan: 'pro' });
         analytics.track('Npm Event', { n: 1 });
         analytics.page('Docs');`,
      ),
    );
    const context: BrowserContext = await browser.newContext();
    const page = await context.newPage();
    const traffic = recordTraffic(page, t.baseUrl);
    try {
      await page.goto(`${pageServer.origin}/npm`);
      const stored = await storedEvents(source, ['identify', 'track:Npm Event', 'page']);
      const anonymousId = await anonymousIdCookie(context);
      for (const { payload } of stored.values()) {
        expect(payload.messageId).toMatch(AJS_MESSAGE_ID);
        expect(payload.anonymousId).toBe(anonymousId);
        expect(payload.userId).toBe('npm-user');
        expect(payload.context).toMatchObject({
          page: { url: `${pageServer.origin}/npm` },
          library: { name: 'analytics.js' },
          ip: '127.0.0.1',
        });
      }
      expect(stored.get('page')!.payload.name).toBe('Docs');
      expect(await page.evaluate<boolean>('window.analyticsReady === true')).toBe(true);
      const paths = traffic.requests.map((request) => new URL(request.url()).pathname);
      expect(paths).toContain(`/v1/projects/${source.writeKey}/settings`);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- what the page did:\n${describeTraffic(traffic)}`);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("sends batches to /v1/b in the library's batching mode", async () => {
    const source = await createWorkspaceAndSource(t, { catalog: 'javascript' });
    pages.set(
      '/batching',
      snippetPage(
        t.baseUrl,
        source.writeKey,
        `analytics.track('Batched 1'); analytics.track('Batched 2'); analytics.track('Batched 3');`,
        {
          integrations: {
            'Segment.io': { deliveryStrategy: { strategy: 'batching', config: { size: 3, timeout: 500 } } },
          },
        },
      ),
    );
    const context = await browser.newContext();
    const page = await context.newPage();
    const traffic = recordTraffic(page, t.baseUrl);
    try {
      await page.goto(`${pageServer.origin}/batching`);
      const stored = await storedEvents(source, ['track:Batched 1', 'track:Batched 2', 'track:Batched 3']);
      for (const { payload } of stored.values()) {
        expect(payload.messageId).toMatch(AJS_MESSAGE_ID);
        expect(payload.context).toMatchObject({ library: { name: 'analytics.js' }, ip: '127.0.0.1' });
      }
      const posts = traffic.requests.filter((request) => request.method() === 'POST');
      expect(posts.map((request) => new URL(request.url()).pathname)).toContain('/v1/b');
      const batchPost = posts.find((request) => request.url().endsWith('/v1/b'))!;
      expect(JSON.parse(batchPost.postData() ?? '{}')).toMatchObject({
        writeKey: source.writeKey,
        batch: expect.arrayContaining([expect.objectContaining({ event: 'Batched 1' })]),
      });
      expect((await batchPost.response())?.status()).toBe(200);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n--- what the page did:\n${describeTraffic(traffic)}`);
    } finally {
      await context.close();
    }
  }, 120_000);
});
