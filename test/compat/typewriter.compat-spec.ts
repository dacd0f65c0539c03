// Runs the real typewriter@7.4.1 CLI, unchanged, against Tributary's Config API.
// typewriter calls https://platform.segmentapis.com/v1beta; the preload sends those calls to the
// local instance. See CLIENT-CALLS.md beside this file for what typewriter sends and reads.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTributary, TributaryTestInstance } from '../support/tributary-test-instance';
import { ConfigApiClient, createWorkspaceWithTokens, WorkspaceAccess } from '../support/config-api.client';

const REPO_ROOT = resolve(__dirname, '..', '..');
const PRELOAD = join(REPO_ROOT, 'test', 'support', 'segment-api-redirect.preload.js');
const TYPEWRITER_CLI = join(REPO_ROOT, 'node_modules', 'typewriter', 'dist', 'src', 'cli', 'index.js');
// typewriter retries failed GETs twice with 1 s and 2 s back-off and times out after 10 s.
const RUN_TIMEOUT_MS = 45_000;

type TypewriterRun = { exitCode: number | null; output: string };

/**
 * A minimal environment, not a copy of process.env: Ink (typewriter's renderer) detects CI through
 * `CI`, `BUILD_NUMBER`, `GITHUB_ACTIONS` and other vendor variables, and in CI mode it prints only
 * the last frame, which drops the warnings these tests look for.
 */
function typewriterEnvironment(instance: TributaryTestInstance, dir: string): NodeJS.ProcessEnv {
  const inherited = ['PATH', 'SYSTEMROOT', 'TMPDIR', 'TEMP', 'TMP', 'LANG'];
  const environment: NodeJS.ProcessEnv = {};
  for (const name of inherited) {
    if (process.env[name] !== undefined) environment[name] = process.env[name];
  }
  return {
    ...environment,
    HOME: join(dir, 'home'),
    USERPROFILE: join(dir, 'home'),
    TRIBUTARY_CONFIG_API_PORT: String(instance.port),
    NODE_ENV: 'production',
    FORCE_COLOR: '0',
  };
}

/**
 * Runs `typewriter <command>` in `dir`. HOME points into the temp dir so a developer's
 * ~/.typewriter token is never read. Ink redraws its frames with ANSI codes and wraps lines at
 * 80 columns, so the returned output has the codes stripped and the line breaks removed.
 */
function runTypewriter(
  instance: TributaryTestInstance,
  dir: string,
  command: string,
): Promise<TypewriterRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['-r', PRELOAD, TYPEWRITER_CLI, command], {
      cwd: dir,
      env: typewriterEnvironment(instance, dir),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let raw = '';
    child.stdout.on('data', (chunk) => (raw += chunk));
    child.stderr.on('data', (chunk) => (raw += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`typewriter ${command} did not finish within ${RUN_TIMEOUT_MS} ms:\n${raw}`));
    }, RUN_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode) => {
      clearTimeout(timer);
      const output = raw.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r?\n/g, '');
      resolvePromise({ exitCode, output });
    });
  });
}

async function makeProject(options: {
  root: string;
  name: string;
  token: string;
  workspaceSlug: string;
  trackingPlanId: string;
}): Promise<string> {
  const dir = join(options.root, options.name);
  await mkdir(join(dir, 'home'), { recursive: true });
  await writeFile(join(dir, '.segment-token'), `${options.token}\n`);
  // typewriter 7.4.1 reads its token only from the stdout of `scripts.token` (run as
  // `cd <config dir>; <script>`) or from ~/.typewriter; there is no tokenPath and no env variable.
  // Its Joi schema rejects unknown keys, so this file holds exactly the keys it knows.
  await writeFile(
    join(dir, 'typewriter.yml'),
    [
      'scripts:',
      '  token: cat .segment-token',
      'client:',
      '  sdk: analytics-node',
      '  language: typescript',
      'trackingPlans:',
      `  - id: ${options.trackingPlanId}`,
      `    workspaceSlug: ${options.workspaceSlug}`,
      '    path: ./analytics',
      '',
    ].join('\n'),
  );
  return dir;
}

function eventRules(properties: Record<string, unknown>, required: string[]) {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    labels: {},
    properties: {
      context: {},
      traits: {},
      properties: { type: 'object', properties, required },
    },
    required: ['properties'],
  };
}

const ORDER_COMPLETED = {
  name: 'Order Completed',
  description: 'A customer paid for an order.',
  version: 1,
  rules: eventRules({ order_id: { type: 'string', description: 'Order id' }, total: { type: 'number' } }, [
    'order_id',
  ]),
};
const SIGNED_UP = {
  name: 'Signed Up',
  description: 'A visitor created an account.',
  version: 1,
  rules: eventRules({ plan: { enum: ['free', 'pro', null] } }, []),
};
const CHECKOUT_STARTED = {
  name: 'Checkout Started',
  description: 'The cart was submitted.',
  version: 1,
  rules: eventRules({ item_count: { type: 'integer' } }, ['item_count']),
};

describe('typewriter 7.4.1 against the Config API', () => {
  jest.setTimeout(120_000);

  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;
  let trackingPlanId: string;
  let root: string;

  const planPath = (dir: string) => join(dir, 'analytics', 'plan.json');
  const generatedIndex = (dir: string) => readFile(join(dir, 'analytics', 'index.ts'), 'utf8');
  const serverPlan = async () => {
    const response = await new ConfigApiClient(instance, access.writerToken).request(
      'GET',
      `workspaces/${access.slug}/tracking-plans/${trackingPlanId}`,
    );
    expect(response.status).toBe(200);
    return response.body;
  };

  beforeAll(async () => {
    instance = await startTributary();
    access = await createWorkspaceWithTokens(new ConfigApiClient(instance), 'typewriter-compat');
    const created = await new ConfigApiClient(instance, access.writerToken).request(
      'POST',
      `workspaces/${access.slug}/tracking-plans`,
      {
        json: {
          tracking_plan: {
            display_name: 'Typewriter Compat Plan',
            rules: { events: [ORDER_COMPLETED, SIGNED_UP], identify_traits: [], group_traits: [] },
          },
        },
      },
    );
    expect(created.status).toBe(200);
    // typewriter refuses a plan whose name is not exactly workspaces/<slug>/tracking-plans/<id>.
    expect(created.body.name).toMatch(/^workspaces\/typewriter-compat\/tracking-plans\/rs_[A-Za-z0-9]{27}$/);
    trackingPlanId = created.body.name.split('/')[3];
    root = await mkdtemp(join(tmpdir(), 'tributary-typewriter-'));
  });

  afterAll(async () => {
    await instance?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('update downloads the plan into plan.json and generates a client for its events', async () => {
    const dir = await makeProject({
      root,
      name: 'update',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });

    const run = await runTypewriter(instance, dir, 'update');

    expect(run.output).toContain('Loaded Tracking Plan');
    expect(run.output).toContain('Generated client');
    expect(run.output).not.toContain('Using local copy');
    expect(run.output).not.toContain('No valid API token');
    expect(run.exitCode).toBe(0);

    const saved = JSON.parse(await readFile(planPath(dir), 'utf8'));
    const plan = await serverPlan();
    expect(saved.name).toBe(plan.name);
    expect(saved.display_name).toBe('Typewriter Compat Plan');
    expect(saved.rules).toEqual(plan.rules);
    expect(saved.rules.events.map((event: { name: string }) => event.name).sort()).toEqual([
      'Order Completed',
      'Signed Up',
    ]);
    expect(saved.rules.events.find((e: { name: string }) => e.name === 'Order Completed').rules).toEqual(
      ORDER_COMPLETED.rules,
    );
    // typewriter re-serialises the timestamps through Date, so compare instants, not strings.
    expect(new Date(saved.create_time).getTime()).toBe(new Date(plan.create_time).getTime());
    expect(new Date(saved.update_time).getTime()).toBe(new Date(plan.update_time).getTime());

    const index = await generatedIndex(dir);
    expect(index).toContain("event: 'Order Completed'");
    expect(index).toContain('export function orderCompleted(');
    expect(index).toContain("event: 'Signed Up'");
    expect(index).toContain('export function signedUp(');
    expect(index).toContain('order_id: string');
    expect(existsSync(join(dir, 'analytics', 'segment.ts'))).toBe(true);
  });

  it('update picks up a change made through the API; build keeps using the local plan.json', async () => {
    const dir = await makeProject({
      root,
      name: 'update-then-build',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    expect((await runTypewriter(instance, dir, 'update')).exitCode).toBe(0);
    expect(await generatedIndex(dir)).not.toContain('checkoutStarted');

    const before = await serverPlan();
    const updated = await new ConfigApiClient(instance, access.writerToken).request(
      'PUT',
      `workspaces/${access.slug}/tracking-plans/${trackingPlanId}`,
      {
        json: {
          tracking_plan: { rules: { events: [...before.rules.events, CHECKOUT_STARTED] } },
          update_mask: { paths: ['tracking_plan.rules'] },
        },
      },
    );
    expect(updated.status).toBe(200);
    expect(updated.body.rules.events.map((e: { name: string }) => e.name)).toContain('Checkout Started');

    // `build` does not call the API when a plan.json exists: the new event is not generated.
    const build = await runTypewriter(instance, dir, 'build');
    expect(build.exitCode).toBe(0);
    expect(build.output).toContain('Generated client');
    expect(await generatedIndex(dir)).not.toContain('checkoutStarted');

    const update = await runTypewriter(instance, dir, 'update');
    expect(update.exitCode).toBe(0);
    const saved = JSON.parse(await readFile(planPath(dir), 'utf8'));
    expect(saved.rules).toEqual((await serverPlan()).rules);
    const index = await generatedIndex(dir);
    expect(index).toContain('export function checkoutStarted(');
    expect(index).toContain("event: 'Checkout Started'");
    expect(index).toContain('export function orderCompleted(');
  });

  it('build without a local plan.json falls back to fetching it from the API', async () => {
    const dir = await makeProject({
      root,
      name: 'build-without-plan',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });

    const run = await runTypewriter(instance, dir, 'build');

    expect(run.output).toContain('No local copy of this Tracking Plan, fetching from API.');
    expect(run.exitCode).toBe(0);
    const saved = JSON.parse(await readFile(planPath(dir), 'utf8'));
    expect(saved.rules).toEqual((await serverPlan()).rules);
    expect(await generatedIndex(dir)).toContain('export function signedUp(');
  });

  it('reports an invalid token and fails when there is no local plan.json to fall back on', async () => {
    const dir = await makeProject({
      root,
      name: 'bad-token',
      token: 'not-a-tributary-token.not-a-tributary-token',
      workspaceSlug: access.slug,
      trackingPlanId,
    });

    const run = await runTypewriter(instance, dir, 'update');

    // The server's 401 on GET /workspaces makes typewriter treat the token as invalid; any other
    // status there would surface as "An unexpected error occurred." instead.
    expect(run.output).toContain('No valid API token, using local copy instead.');
    expect(run.output).toContain('Unable to fetch Tracking Plan from local cache or API');
    expect(run.output).not.toContain('An unexpected error occurred');
    // typewriter 7.4.1 exits 0 even here (its fatal error carries no inner Error), so the files
    // are the proof that nothing was generated.
    expect(existsSync(planPath(dir))).toBe(false);
    expect(existsSync(join(dir, 'analytics', 'index.ts'))).toBe(false);
  });

  it('with an invalid token, update keeps and builds from the local plan.json', async () => {
    const dir = await makeProject({
      root,
      name: 'bad-token-with-local-plan',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    expect((await runTypewriter(instance, dir, 'update')).exitCode).toBe(0);
    const localPlan = await readFile(planPath(dir), 'utf8');
    await writeFile(join(dir, '.segment-token'), 'revoked.token\n');

    const run = await runTypewriter(instance, dir, 'update');

    expect(run.output).toContain('No valid API token, using local copy instead.');
    expect(run.output).toContain('Generated client');
    expect(run.exitCode).toBe(0);
    expect(await readFile(planPath(dir), 'utf8')).toBe(localPlan);
    expect(await generatedIndex(dir)).toContain('export function orderCompleted(');
  });

  it('`typewriter token` marks an invalid token and names the workspace of a valid one', async () => {
    const bad = await makeProject({
      root,
      name: 'token-bad',
      token: 'not-a-tributary-token.not-a-tributary-token',
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    const badRun = await runTypewriter(instance, bad, 'token');
    expect(badRun.output).toContain('(invalid token)');

    const good = await makeProject({
      root,
      name: 'token-good',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    const goodRun = await runTypewriter(instance, good, 'token');
    expect(goodRun.output).not.toContain('(invalid token)');
    // The workspace column is 10 characters wide, so only the start of the name is certain.
    expect(goodRun.output).toContain('workspaces');
  });

  it('a token for another workspace cannot read the plan; update falls back to the local copy', async () => {
    const other = await createWorkspaceWithTokens(new ConfigApiClient(instance), 'typewriter-other');
    const dir = await makeProject({
      root,
      name: 'foreign-token',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    expect((await runTypewriter(instance, dir, 'update')).exitCode).toBe(0);
    const localPlan = await readFile(planPath(dir), 'utf8');
    await writeFile(join(dir, '.segment-token'), `${other.writerToken}\n`);

    const run = await runTypewriter(instance, dir, 'update');

    // The token is valid (GET /workspaces lists typewriter-other) but the plan lives elsewhere:
    // a 403 prints "Permission denied by Segment API", a 404 "API request failed"; both then say:
    expect(run.output).toContain('Using local copy instead.');
    expect(run.output).not.toContain('No valid API token');
    expect(await readFile(planPath(dir), 'utf8')).toBe(localPlan);
  });

  it('writes plan.json exactly where typewriter.yml points, creating the folder', async () => {
    const dir = await makeProject({
      root,
      name: 'nested-path',
      token: access.writerToken,
      workspaceSlug: access.slug,
      trackingPlanId,
    });
    const config = await readFile(join(dir, 'typewriter.yml'), 'utf8');
    await writeFile(
      join(dir, 'typewriter.yml'),
      config.replace('path: ./analytics', 'path: ./src/generated/analytics'),
    );

    const run = await runTypewriter(instance, dir, 'update');

    expect(run.exitCode).toBe(0);
    expect(existsSync(join(dir, 'src', 'generated', 'analytics', 'plan.json'))).toBe(true);
    expect(existsSync(join(dir, 'src', 'generated', 'analytics', 'index.ts'))).toBe(true);
    expect(existsSync(planPath(dir))).toBe(false);
  });
});
