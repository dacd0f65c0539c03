// The web console in a real browser (Debian's Chromium driven by playwright-core) against the
// all-in-one server: sign in with a token, create a source and copy its write key, watch events sent
// with @segment/analytics-node arrive in the live debugger, create a webhook destination from the
// catalog form, see its delivery chart count the events, redrive a dead letter, and create an Actions
// destination from its catalog card and edit its subscriptions.
// Screenshots go to a temporary folder, or to docs/screenshots with UPDATE_SCREENSHOTS=1.
import { Analytics } from '@segment/analytics-node';
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { RegulationRunner } from '../../apps/router/src/regulations/regulation-runner.service';
import { WebhookReceiver } from '../../apps/router/test/router-e2e.kit';
import { ConfigApiClient, type HttpMethod } from '../support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const root = join(__dirname, '..', '..');
const screenshots =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(root, 'docs', 'screenshots')
    : mkdtempSync(join(tmpdir(), 'tributary-console-screens-'));
const ADMIN_EMAIL = 'admin@example.com';
const ADMIN_PASSWORD = 'correct horse battery staple';
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;

describeWithChromium('the web console in a browser', () => {
  let instance: TributaryTestInstance;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: WebhookReceiver;
  let writeKey = '';
  const ws = 'shop';
  const consoleUrl = (path: string) => `${instance.baseUrl}/console${path}`;

  const admin = (method: HttpMethod, path: string, body?: unknown) =>
    new ConfigApiClient(instance).ok(method, path, body);

  async function shoot(name: string): Promise<void> {
    await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
  }

  async function shootElement(locator: ReturnType<Page['locator']>, name: string): Promise<void> {
    await locator.screenshot({ path: join(screenshots, `${name}.png`) });
  }

  /** Sends one track call with analytics-node and resolves once the tracking API answered 200. */
  async function sendTrack(analytics: Analytics, event: string, properties: Record<string, unknown> = {}) {
    await new Promise<void>((resolve, reject) =>
      analytics.track({ userId: 'user-42', event, properties }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }

  function newAnalytics(): Analytics {
    return new Analytics({ writeKey, host: instance.baseUrl, flushAt: 1, flushInterval: 50, maxRetries: 1 });
  }

  beforeAll(async () => {
    // `npm test` on a clean clone has no console build yet: build it (Vite takes a second or two).
    // The console is its own package; the root's postinstall installs it, this covers a skipped one.
    if (!existsSync(join(root, 'console', 'node_modules', 'vite'))) {
      const install = spawnSync(process.execPath, [join(root, 'scripts', 'install-console.js')], {
        cwd: root,
        encoding: 'utf8',
        timeout: 170_000,
      });
      if (install.status !== 0)
        throw new Error(`installing the console failed: ${install.stderr || install.stdout}`);
    }
    const build = spawnSync(
      process.execPath,
      [
        join(root, 'console', 'node_modules', 'vite', 'bin', 'vite.js'),
        'build',
        '--config',
        'console/vite.config.mjs',
        '--logLevel',
        'warn',
      ],
      { cwd: root, encoding: 'utf8', timeout: 120_000 },
    );
    if (build.status !== 0) throw new Error(`vite build failed: ${build.stderr || build.stdout}`);
    mkdirSync(screenshots, { recursive: true });
    instance = await startTributary({
      environment: {
        CONFIG_API_RATE_LIMIT: '100000',
        RETRY_WINDOW: '2s',
        TRIBUTARY_ADMIN_EMAIL: ADMIN_EMAIL,
        TRIBUTARY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      },
    });
    await admin('POST', 'workspaces', { workspace: { name: `workspaces/${ws}`, display_name: 'Shop' } });
    receiver = await WebhookReceiver.start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: instance.baseUrl });
    page = await context.newPage();
  }, 180_000);

  jest.setTimeout(90_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await instance?.stop({ removeData: true });
  });

  it('serves the console with an SPA fallback and no resource from another origin', async () => {
    const index = await fetch(consoleUrl('/workspaces/shop/sources/web/debugger'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toContain('text/html');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await index.text();
    expect(html).toContain('<div id="root">');
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(consoleUrl('/assets/missing.js'))).status).toBe(404);
    expect((await fetch(consoleUrl('/..%2f..%2fpackage.json'))).status).not.toBe(200);
  });

  it('signs in with an access token, kept in session storage only', async () => {
    await page.goto(consoleUrl('/'));
    await page.getByLabel('Access token').waitFor();
    await shoot('sign-in');
    await page.getByLabel('Access token').fill('not-a-valid-token');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();

    // From the keyboard: type the token and press Enter.
    await page.getByLabel('Access token').fill(instance.adminToken);
    await page.getByLabel('Access token').press('Enter');
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await page.getByRole('link', { name: 'Shop' }).waitFor();
    expect(await page.evaluate<string[]>('Object.values(sessionStorage)')).toContain(instance.adminToken);
    expect(await page.evaluate<number>('Object.keys(localStorage).length')).toBe(0);
    await shoot('workspaces');
  });

  it("signs in with the admin's email and password, which mint a token for every workspace", async () => {
    const otherContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const other = await otherContext.newPage();
      await other.goto(consoleUrl('/'));
      await other.getByLabel('Email').fill(ADMIN_EMAIL);
      await other.getByLabel('Password').fill('wrong password');
      await other.getByRole('button', { name: 'Sign in with password' }).click();
      await other.getByRole('alert').filter({ hasText: 'wrong email or password' }).waitFor();
      await other.getByLabel('Password').fill(ADMIN_PASSWORD);
      await other.getByRole('button', { name: 'Sign in with password' }).click();
      await other.getByRole('link', { name: 'Shop' }).waitFor();
      // The tab keeps the minted token and its name (to revoke it at sign-out), nothing else.
      const stored = await other.evaluate<string[]>('Object.values(sessionStorage)');
      expect(stored).toHaveLength(2);
      const token = stored.find((value) => /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/.test(value));
      expect(token).toBeDefined();
      expect(token).not.toBe(instance.adminToken);
      const { access_tokens: tokens } = await admin('GET', 'access-tokens');
      expect(stored).toContain(tokens.at(-1).name);
      expect(tokens.at(-1)).toMatchObject({ scopes: 'workspace', workspace_names: [`workspaces/${ws}`] });
      expect(tokens.at(-1).description).toMatch(/^console sign-in/);
    } finally {
      await otherContext.close();
    }
  });

  it('creates a source and copies its write key', async () => {
    await page.getByRole('link', { name: 'Shop' }).click();
    await page.getByRole('heading', { name: 'Sources of shop' }).waitFor();
    await page.getByLabel('Source name').fill('web');
    await page.getByRole('button', { name: 'Create source' }).click();
    await page.getByRole('heading', { name: 'Source web' }).waitFor();
    writeKey = (await page.getByTestId('write-key').textContent()) ?? '';
    expect(writeKey).toMatch(/^[A-Za-z0-9]{32}$/);
    await page.getByRole('button', { name: 'Copy the write key' }).click();
    await page.getByText('Copied').first().waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(writeKey);
    await shoot('source');
  });

  it('shows each event sent with analytics-node in the live debugger within 2 s', async () => {
    await page.getByRole('link', { name: 'Open the live debugger' }).click();
    await page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    const analytics = newAnalytics();
    try {
      for (let index = 1; index <= 5; index++) {
        const event = `Debugger Event ${index}`;
        await sendTrack(analytics, event, { index });
        const stored = Date.now();
        await page.getByRole('button', { name: event, exact: true }).waitFor({ timeout: 10_000 });
        expect({ event, withinTwoSeconds: Date.now() - stored <= 2000 }).toEqual({
          event,
          withinTwoSeconds: true,
        });
      }
      await new Promise<void>((resolve, reject) =>
        analytics.identify({ userId: 'user-42', traits: { plan: 'pro' } }, (error) =>
          error ? reject(error) : resolve(),
        ),
      );
      await page.getByRole('row').filter({ hasText: 'identify' }).waitFor();
    } finally {
      await analytics.closeAndFlush();
    }
    // Newest first.
    const names = await page.getByTestId('live-event').locator('td:nth-child(2)').allTextContents();
    expect(names.slice(1, 6)).toEqual([5, 4, 3, 2, 1].map((index) => `Debugger Event ${index}`));

    await page.getByLabel('Type').selectOption('track');
    await page.getByLabel('Search').fill('Event 3');
    await expect(page.getByTestId('live-event').count()).resolves.toBe(1);
    await page.getByRole('button', { name: 'Debugger Event 3' }).click();
    await page.getByRole('complementary', { name: 'Selected event' }).getByText('"index": 3').waitFor();
    await shoot('debugger');
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Type').selectOption('');

    await page.getByRole('button', { name: 'Pause' }).click();
    const analyticsWhilePaused = newAnalytics();
    await sendTrack(analyticsWhilePaused, 'Sent While Paused');
    await analyticsWhilePaused.closeAndFlush();
    await page.getByRole('button', { name: /Resume \(1 new\)/ }).waitFor();
    expect(await page.getByRole('button', { name: 'Sent While Paused' }).count()).toBe(0);
    await page.getByRole('button', { name: /Resume/ }).click();
    await page.getByRole('button', { name: 'Sent While Paused' }).waitFor();
  });

  it('creates a webhook destination from the catalog form, and its delivery chart counts the events', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web`));
    await page.getByRole('link', { name: 'Add a destination' }).click();
    await page.getByLabel(/Search the catalog/).fill('webhook');
    await page.getByRole('button', { name: /^Webhooks/ }).click();
    await page.getByLabel('Webhook URL (required)').fill(receiver.url);
    // A secret is a password field: typed, never shown.
    expect(await page.getByLabel('Shared Secret').getAttribute('type')).toBe('password');
    await page.getByLabel('Shared Secret').fill('s3cret-value');
    await shoot('new-destination');
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.waitForURL(/\/destinations\/webhooks$/).catch(async (error) => {
      await shoot('failed-destination-create');
      throw error;
    });
    await page.getByRole('heading', { name: 'Delivery, last hour' }).waitFor();
    expect(await page.content()).not.toContain('s3cret-value');

    const analytics = newAnalytics();
    for (let index = 1; index <= 3; index++) await sendTrack(analytics, `Delivered Event ${index}`);
    await analytics.closeAndFlush();
    await page
      .getByTestId('chart-delivered-total')
      .filter({ hasText: '3 in the last hour' })
      .waitFor({ timeout: 20_000 });
    expect(receiver.acceptedIds()).toHaveLength(3);
    await shoot('destination');

    // The debugger shows where a message went once the router settled it.
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web/debugger`));
    await page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    const another = newAnalytics();
    await sendTrack(another, 'Followed Event');
    await another.closeAndFlush();
    await page
      .getByRole('row')
      .filter({ hasText: 'Followed Event' })
      .getByText('webhooks: delivered')
      .waitFor({ timeout: 15_000 });
    await shoot('debugger-delivered');
  });

  it('shows a dead letter with its attempts, and redrives it', async () => {
    receiver.answer = () => 500;
    const analytics = newAnalytics();
    await sendTrack(analytics, 'Doomed Event');
    await analytics.closeAndFlush();
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web/destinations/webhooks`));
    await page.getByTestId('dead-letter').first().waitFor({ timeout: 30_000 });
    const letter = page.getByTestId('dead-letter').first();
    await letter.getByRole('button').click();
    await letter.getByRole('table', { name: 'Attempts' }).waitFor();
    expect(await letter.textContent()).toContain('HTTP 500');
    await page
      .getByTestId('chart-dead-lettered-total')
      .filter({ hasText: '1 in the last hour' })
      .waitFor({ timeout: 15_000 });
    await shoot('dead-letters');

    receiver.answer = () => 200;
    const delivered = receiver.acceptedIds().length;
    await page.getByRole('button', { name: 'Redrive dead letters' }).click();
    await page.getByRole('status').filter({ hasText: 'Redrive' }).waitFor();
    const deadline = Date.now() + 30_000;
    while (receiver.acceptedIds().length === delivered && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(receiver.accepted().at(-1)?.body.event).toBe('Doomed Event');
    await page.reload();
    await page.getByTestId('no-dead-letters').waitFor({ timeout: 15_000 });
  });

  it('starts a replay and shows its progress until it completes', async () => {
    const before = receiver.acceptedIds().length;
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web/destinations/webhooks`));
    await page.getByRole('heading', { name: 'Replays' }).waitFor();
    await page.getByRole('button', { name: 'Start a replay' }).click();
    const row = page.getByRole('row').filter({ hasText: /^rp_/ });
    await row.first().waitFor();
    await row.filter({ hasText: 'COMPLETED' }).first().waitFor({ timeout: 30_000 });
    expect(await row.first().textContent()).toMatch(/(?<!\d)\d+ delivered/);
    expect(receiver.acceptedIds().length).toBeGreaterThan(before);
    await shoot('replays');
  });

  it('previews a filter on a sample event, then creates it', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web/destinations/webhooks`));
    await page.getByRole('heading', { name: 'New filter' }).waitFor();
    await page.getByLabel('Title').fill('No personal data');
    await page.getByRole('button', { name: 'Preview on the sample' }).click();
    const preview = page.getByTestId('filter-preview');
    await preview.getByText('Sent').waitFor();
    const shown = (await preview.locator('code').textContent()) ?? '';
    expect(JSON.parse(shown).properties).toEqual({ total: 42.5 });
    expect(shown).not.toContain('someone@example.com');

    await page.getByLabel('If (FQL)').fill("event = = 'broken'");
    await page.getByRole('button', { name: 'Preview on the sample' }).click();
    await page.getByRole('alert').filter({ hasText: 'filter.if' }).waitFor();
    await page.getByLabel('If (FQL)').fill("type = 'track'");
    await page.getByRole('button', { name: 'Create filter' }).click();
    await page.getByText('No personal data').first().waitFor();
    await page.getByRole('listitem').filter({ hasText: "if type = 'track'" }).waitFor();
    await shoot('filters');
  });

  it('shows every error in words, and the other pages render', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/nope`));
    await page.getByRole('alert').filter({ hasText: 'Could not load the source. Not found' }).waitFor();

    await admin('POST', `workspaces/${ws}/tracking-plans`, {
      tracking_plan: {
        display_name: 'Checkout plan',
        rules: {
          events: [
            {
              name: 'Order Completed',
              version: 1,
              rules: { type: 'object', properties: { properties: { type: 'object', required: ['total'] } } },
            },
          ],
        },
      },
    });
    await page.goto(consoleUrl(`/workspaces/${ws}/tracking-plans`));
    await page.getByRole('link', { name: 'Checkout plan' }).click();
    await page.getByText('Order Completed').waitFor();
    await shoot('tracking-plan');

    await page.goto(consoleUrl(`/workspaces/${ws}/audit-trail`));
    await page
      .getByRole('table')
      .getByText(/Created|created/)
      .first()
      .waitFor();
    await shoot('audit-trail');

    await page.goto(consoleUrl('/access-tokens'));
    await page.getByRole('heading', { name: 'New access token' }).waitFor();
    await page.getByLabel('Description').fill('console e2e');
    await page.getByLabel('shop').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('Copy it now').waitFor();
    await shoot('access-tokens');

    await page.goto(consoleUrl(`/workspaces/${ws}/oauth-applications`));
    await page.getByRole('heading', { name: 'New OAuth application' }).waitFor();
    await page.getByLabel('Name').fill('bad key');
    await page.getByLabel('Public key (PEM)').fill('not a pem');
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('alert').first().waitFor();
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await page.getByLabel('Name').fill('Backend jobs');
    await page
      .getByLabel('Public key (PEM)')
      .fill(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    await page.getByRole('button', { name: 'Create application' }).click();
    await page.getByRole('row').filter({ hasText: 'Backend jobs' }).waitFor();
    await shoot('oauth-applications');
  });

  it('disables and enables a destination from the source page', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web`));
    const row = page.getByRole('row').filter({ hasText: 'Webhooks' });
    await row.getByText('enabled', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Disable Webhooks' }).click();
    await row.getByText('disabled', { exact: true }).waitFor();
    const { destinations } = await admin('GET', `workspaces/${ws}/sources/web/destinations`);
    expect(destinations[0].enabled).toBe(false);
    await row.getByRole('button', { name: 'Enable Webhooks' }).click();
    await row.getByText('enabled', { exact: true }).waitFor();
  });

  it('filters the catalog cards, creates Actions Amplitude from its card and edits its subscriptions', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web`));
    await page.getByRole('link', { name: 'Add a destination' }).click();
    const cards = page.getByTestId('catalog-card');
    await cards.first().waitFor();
    const search = page.getByLabel(/Search the catalog/);
    await search.fill('amplitude');
    await page
      .getByRole('status')
      .filter({ hasText: /destinations? match/ })
      .waitFor();
    const shown = await cards.allTextContents();
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(10);
    for (const text of shown) expect(text.toLowerCase()).toContain('amplitude');
    // The card says it is an Actions destination and which message types its presets take.
    const amplitudeCard = page.getByRole('button', { name: /^Actions Amplitude Actions/ });
    for (const type of ['track', 'identify', 'page', 'screen'])
      await amplitudeCard.getByText(type, { exact: true }).waitFor();
    expect(await amplitudeCard.getByText('alias', { exact: true }).count()).toBe(0);
    await search.fill('actions');
    await page
      .getByRole('status')
      .filter({ hasText: /destinations match/ })
      .waitFor();
    await page.screenshot({ path: join(screenshots, 'catalog.png') });
    await search.fill('no such destination at all');
    await page.getByRole('status').filter({ hasText: 'No destination matches' }).waitFor();
    expect(await cards.count()).toBe(0);
    await search.fill('actions amplitude');
    await amplitudeCard.waitFor();

    // Keyboard only: from the filter, Tab reaches the cards and Enter opens the form.
    await search.focus();
    let focused = '';
    for (let tab = 0; tab < 10 && !focused.startsWith('Actions Amplitude'); tab++) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate<string>("document.activeElement?.textContent ?? ''");
    }
    expect(focused).toMatch(/^Actions Amplitude/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Actions Amplitude' }).waitFor();
    expect(await page.getByLabel('API Key (required)').getAttribute('type')).toBe('password');
    await page.getByLabel('API Key (required)').fill('amplitude-api-key-1234');
    await page.getByLabel('Secret Key (required)').fill('amplitude-secret-5678');
    // The default subscriptions are the presets, shown before anything is created.
    const subscriptions = page.getByTestId('subscription');
    expect(await subscriptions.count()).toBe(5);
    await subscriptions.filter({ hasText: 'Track Calls' }).getByText('logEventV2').first().waitFor();
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.waitForURL(/\/destinations\/actions-amplitude$/).catch(async (error) => {
      await shoot('failed-actions-destination-create');
      throw error;
    });
    await page.getByRole('heading', { name: 'Subscriptions' }).waitFor();
    expect(await subscriptions.count()).toBe(5);
    const content = await page.content();
    expect(content).not.toContain('amplitude-api-key-1234');
    expect(content).not.toContain('amplitude-secret-5678');

    // An FQL the Config API refuses: nothing is saved, and the refusal is said in words.
    await page.getByRole('button', { name: 'Edit subscription “Page Calls”' }).click();
    const fql = page.getByLabel('Messages it takes (FQL)');
    expect(await fql.inputValue()).toBe('type = "page"');
    await fql.fill('type = ');
    await page.getByRole('button', { name: 'Save subscriptions' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The server refused the request' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/subscribe/);
    const stored = async () => {
      const destination = await admin('GET', `workspaces/${ws}/sources/web/destinations/actions-amplitude`);
      return destination.config.find((entry: { name: string }) =>
        entry.name.endsWith('/config/subscriptions'),
      )?.value as { name?: string; subscribe: string }[];
    };
    expect((await stored()).find((entry) => entry.name === 'Page Calls')?.subscribe).toBe('type = "page"');

    // A mapping that is not JSON is caught before anything is sent.
    const mapping = page.getByLabel('Mapping (JSON)');
    const goodMapping = await mapping.inputValue();
    await mapping.fill('{"user_id": ');
    await page.getByRole('button', { name: 'Save subscriptions' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The mapping of subscription “Page Calls” is not valid JSON' })
      .waitFor();
    await mapping.fill(goodMapping);

    await fql.fill('type = "page" and context.page.path != "/health"');
    await page.getByLabel('Partner action').selectOption('logEventV2');
    await page.getByRole('button', { name: 'Save subscriptions' }).click();
    await page.getByRole('status').filter({ hasText: 'Subscriptions saved.' }).waitFor();
    const saved = await stored();
    expect(saved).toHaveLength(5);
    expect(saved.find((entry) => entry.name === 'Page Calls')?.subscribe).toBe(
      'type = "page" and context.page.path != "/health"',
    );
    // The other settings kept their (secret) values.
    const { config } = await admin('GET', `workspaces/${ws}/sources/web/destinations/actions-amplitude`);
    expect(config.some((entry: { name: string }) => entry.name.endsWith('/config/apiKey'))).toBe(true);

    // The edited subscription stays open after the save.
    await fql.waitFor();
    await shootElement(page.getByRole('region', { name: 'Subscriptions' }), 'subscriptions');

    // Test connection calls the destination's own test; the answer (no vendor is reachable here) is words.
    await page.getByRole('button', { name: 'Test connection' }).click();
    const answer = page.getByTestId('connection-test');
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.textContent()).toMatch(/^Connection (works|failed)/);
  });

  it('is readable at phone width', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web/debugger`));
    await page.getByTestId('connection').filter({ hasText: 'Live' }).waitFor();
    const analytics = newAnalytics();
    await sendTrack(analytics, 'Phone Event');
    await analytics.closeAndFlush();
    await page.getByRole('button', { name: 'Phone Event' }).waitFor();
    // Nothing wider than the screen but the event table, which scrolls inside its own box.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shoot('debugger-phone');
    await page.goto(consoleUrl(`/workspaces/${ws}/sources/web`));
    await page.getByTestId('write-key').waitFor();
    await shoot('source-phone');
    for (const path of [
      `/workspaces/${ws}/sources/web/destinations/new`,
      `/workspaces/${ws}/sources/web/destinations/actions-amplitude`,
    ]) {
      await page.goto(consoleUrl(path));
      await page
        .getByTestId(path.endsWith('new') ? 'catalog-card' : 'subscription')
        .first()
        .waitFor();
      const wider = await page.evaluate<number>(
        'Math.max(0, document.documentElement.scrollWidth - window.innerWidth)',
      );
      expect({ path, wider }).toEqual({ path, wider: 0 });
    }
    await shootElement(page.getByRole('region', { name: 'Subscriptions' }), 'subscriptions-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("lists the workspace's regulations with each destination's status, creates one and cancels one", async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}/regulations`));
    await page.getByRole('heading', { name: 'New regulation' }).waitFor();
    // Refused by the server: the archive-only type needs a source; the words come back, nothing is stored.
    await page.getByLabel('Type').selectOption('DELETE_ARCHIVE_ONLY');
    await page.getByLabel('User ids, one per line').fill('user-42');
    await page.getByRole('button', { name: 'Create regulation' }).click();
    expect(await page.getByRole('alert').first().textContent()).toMatch(/applies to one source/);
    await page.getByText('No regulation.').waitFor();

    // A deletion forwarded to a webhook on loopback (a source of its own, so that no vendor is called):
    // the router finishes it, and the page follows it there.
    await admin('POST', `workspaces/${ws}/sources`, {
      source: {
        name: `workspaces/${ws}/sources/app`,
        display_name: 'App',
        catalog_name: 'catalog/sources/javascript',
      },
    });
    const hook = `workspaces/${ws}/sources/app/destinations/webhooks`;
    await admin('POST', `workspaces/${ws}/sources/app/destinations`, {
      destination: {
        name: hook,
        enabled: true,
        config: [{ name: `${hook}/config/url`, value: receiver.url }],
      },
    });
    await page.reload();
    await page.getByLabel('Type').selectOption('SUPPRESS_WITH_DELETE');
    await page.getByLabel('Scope').selectOption({ label: 'App' });
    await page.getByLabel('User ids, one per line').fill('user-42\nuser-43');
    await page.getByRole('button', { name: 'Create regulation' }).click();
    const finished = page.getByRole('row').filter({ hasText: 'user-42, user-43' });
    await finished.getByText(/app → Webhooks: finished/).waitFor({ timeout: 30_000 });
    expect(receiver.accepted().some((request) => request.body.type === 'delete')).toBe(true);
    expect(await finished.textContent()).toContain('SUPPRESS_WITH_DELETE');
    expect(await finished.getByRole('button').count()).toBe(0);

    // Without the router's runner a deletion stays initialized, and can be cancelled.
    await instance.app.get(RegulationRunner).beforeApplicationShutdown();
    await page.getByLabel('Type').selectOption('DELETE_ONLY');
    await page.getByLabel('Scope').selectOption({ label: 'The whole workspace' });
    await page.getByLabel('User ids, one per line').fill('user-7');
    await page.getByRole('button', { name: 'Create regulation' }).click();
    const waiting = page.getByRole('row').filter({ hasText: 'user-7' });
    await waiting.getByText('initialized', { exact: true }).waitFor();
    await shoot('regulations');
    page.once('dialog', (dialog) => void dialog.accept());
    await waiting.getByText('Not started').waitFor();
    await waiting.getByRole('button', { name: /^Cancel regulation [0-9A-Za-z]{27}$/ }).click();
    await waiting.waitFor({ state: 'detached' });
    const listed = await admin('GET', `workspaces/${ws}/regulations`);
    expect(listed.regulations.map((regulation: any) => regulation.attributes.values)).toEqual([
      ['user-42', 'user-43'],
    ]);
  });
});
