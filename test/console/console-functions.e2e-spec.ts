// The console's function pages in a real browser (Debian's Chromium driven by playwright-core)
// against the all-in-one server and its real function runner: create a destination function, edit
// its code and settings declarations, save a version, deploy it, and run it on a sample event, its
// output, failure and logs shown. Screenshots go to a temporary folder, or to docs/screenshots with
// UPDATE_SCREENSHOTS=1.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumAvailable, launchChromium } from '../support/browser.kit';
import { ConfigApiClient } from '../support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';

const root = join(__dirname, '..', '..');
const screenshots =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(root, 'docs', 'screenshots')
    : mkdtempSync(join(tmpdir(), 'tributary-console-functions-'));
const describeWithChromium = chromiumAvailable ? describe : describe.skip;

describeWithChromium(`the console's function editor in a browser (${CHROMIUM_PATH})`, () => {
  let instance: TributaryTestInstance;
  let browser: Browser;
  let page: Page;
  const ws = 'fnshop';
  const consoleUrl = (path: string) => `${instance.baseUrl}/console${path}`;
  const api = () => new ConfigApiClient(instance);

  beforeAll(async () => {
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
    expect(existsSync(join(root, 'console', 'dist', 'index.html'))).toBe(true);
    mkdirSync(screenshots, { recursive: true });
    instance = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    await api().ok('POST', 'workspaces', {
      workspace: { name: `workspaces/${ws}`, display_name: 'Fn shop' },
    });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.goto(consoleUrl('/'));
    await page.getByLabel('Access token').fill(instance.adminToken);
    await page.getByLabel('Access token').press('Enter');
    await page.getByRole('link', { name: 'Fn shop' }).waitFor();
  }, 180_000);

  jest.setTimeout(90_000);

  afterAll(async () => {
    await browser?.close();
    await instance?.stop({ removeData: true });
  });

  it('lists no function, then creates a destination function and opens its editor', async () => {
    await page.goto(consoleUrl(`/workspaces/${ws}`));
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Functions' }).click();
    await page.getByRole('heading', { name: `Functions of ${ws}` }).waitFor();
    await page.getByText('No function yet.').waitFor();
    await page.getByLabel('Name').fill('Order relay');
    await page.getByLabel('Kind').selectOption('DESTINATION');
    await page.getByRole('button', { name: 'Create function' }).click();
    await page.getByRole('heading', { name: 'Order relay' }).waitFor();
    expect(page.url()).toMatch(new RegExp(`/console/workspaces/${ws}/functions/dfn_[0-9A-Za-z]{27}$`));
    expect(await page.getByTestId('latest-version').textContent()).toBe('1');
    expect(await page.getByTestId('deployed-version').textContent()).toMatch(/^1 up to date$/);
    expect(await page.getByLabel('Code').inputValue()).toMatch(/async function onTrack\(event, settings\)/);
  });

  it('runs the code being edited on a sample event: its output and logs, then its failure', async () => {
    await page
      .getByLabel('Code')
      .fill(
        [
          'async function onTrack(event, settings) {',
          "  console.log('relaying', event.event, 'to', settings.endpoint);",
          "  if (!settings.apiKey) throw new ValidationError('apiKey is missing');",
          '  return { name: event.event, total: event.properties.total, region: settings.region };',
          '}',
        ].join('\n'),
      );
    await page.getByRole('button', { name: 'Add a setting' }).click();
    await page.getByLabel('Setting 1 name').fill('apiKey');
    await page.getByLabel('Setting 1 label').fill('API key');
    await page.getByLabel('Setting 1 required').check();
    await page.getByLabel('Setting 1 sensitive').check();
    await page.getByRole('button', { name: 'Add a setting' }).click();
    await page.getByLabel('Setting 2 name').fill('endpoint');
    await page.getByRole('button', { name: 'Add a setting' }).click();
    await page.getByLabel('Setting 3 name').fill('region');
    await page.getByText('Unsaved changes').waitFor();

    // Without the key: the function's own ValidationError, and what it logged before.
    await page.getByRole('button', { name: 'Run on a sample event' }).click();
    await page.getByTestId('preview-error').waitFor();
    expect(await page.getByTestId('preview-error').textContent()).toBe('ValidationError: apiKey is missing');
    expect(await page.getByTestId('preview-logs').textContent()).toBe(
      'relaying Order Completed to \nValidationError: apiKey is missing',
    );

    await page.getByRole('textbox', { name: 'API key', exact: true }).fill('k-123');
    await page.getByRole('textbox', { name: 'endpoint', exact: true }).fill('https://example.com/in');
    await page.getByRole('textbox', { name: 'region', exact: true }).fill('eu');
    await page.getByRole('button', { name: 'Run on a sample event' }).click();
    await page.getByTestId('preview-output').waitFor();
    expect(JSON.parse((await page.getByTestId('preview-output').textContent()) ?? '')).toEqual({
      name: 'Order Completed',
      total: 42.5,
      region: 'eu',
    });
    expect(await page.getByTestId('preview-logs').textContent()).toBe(
      'relaying Order Completed to https://example.com/in',
    );
    await page.screenshot({ path: join(screenshots, 'function-editor.png'), fullPage: true });

    // A sample that is not JSON: the server's refusal, in words.
    await page.getByLabel('Sample event (JSON)').fill('{"type":');
    await page.getByRole('button', { name: 'Run on a sample event' }).click();
    await page.getByRole('alert').filter({ hasText: 'payload is not valid JSON' }).waitFor();

    // Nothing of this was saved: the server still has version 1 with the starter code.
    const id = page.url().split('/').at(-1)!;
    const stored = await api().ok('GET', `workspaces/${ws}/functions/${id}`);
    expect(stored).toMatchObject({ version: 1, settings: [] });
  });

  it('saves the edits as version 2, deploys it, and lists it', async () => {
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved version 2' }).waitFor();
    await page.getByTestId('latest-version').filter({ hasText: '2' }).waitFor();
    expect(await page.getByTestId('deployed-version').textContent()).toMatch(/^1 version 2 is not deployed$/);
    const id = page.url().split('/').at(-1)!;
    expect(await api().ok('GET', `workspaces/${ws}/functions/${id}`)).toMatchObject({
      version: 2,
      deployed_version: 1,
      code: expect.stringContaining("throw new ValidationError('apiKey is missing')"),
      settings: [
        expect.objectContaining({
          name: 'apiKey',
          label: 'API key',
          type: 'string',
          required: true,
          sensitive: true,
        }),
        expect.objectContaining({ name: 'endpoint', type: 'string', required: false }),
        expect.objectContaining({ name: 'region' }),
      ],
    });

    await page.getByRole('button', { name: 'Deploy version 2' }).click();
    await page.getByRole('status').filter({ hasText: 'Deployed version 2' }).waitFor();
    await page.getByTestId('deployed-version').filter({ hasText: 'up to date' }).waitFor();
    expect(await api().ok('GET', `workspaces/${ws}/functions/${id}`)).toMatchObject({ deployed_version: 2 });

    // A save the server refuses (code that does not compile) says why and keeps the edit.
    await page.getByLabel('Code').fill('async function onTrack( {');
    await page.getByRole('button', { name: 'Save' }).click();
    // The save's own alert: a preview's refusal earlier on the page may still be shown beside it.
    await page
      .getByRole('alert')
      .filter({ hasText: 'The server refused the request: code: SyntaxError' })
      .waitFor();
    expect(await page.getByLabel('Code').inputValue()).toBe('async function onTrack( {');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Functions' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Order relay' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Destination function');
    await page.screenshot({ path: join(screenshots, 'functions.png'), fullPage: true });
  });
});
