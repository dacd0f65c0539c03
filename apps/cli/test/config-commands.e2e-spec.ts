// Workspaces, tokens, sources and bootstrap through the CLI against a real server on loopback.
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { postJson } from '../../../test/support/tracking-e2e.kit';
import { runCliChild, runCliInProcess } from './cli-e2e.kit';

describe('tributary CLI: configuration commands', () => {
  let t: TributaryTestInstance;
  let admin: Record<string, string>;

  beforeAll(async () => {
    t = await startTributary();
    admin = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: t.adminToken };
  });
  afterAll(() => t.stop({ removeData: true }));

  it('creates, lists and shows workspaces, as tables and as JSON', async () => {
    const created = await runCliInProcess(
      ['workspaces', 'create', 'acme', '--display-name', 'Acme Inc', '--region', 'eu'],
      { env: admin },
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^name: +workspaces\/acme$/m);
    expect(created.stdout).toMatch(/^region: +eu$/m);

    const listed = await runCliInProcess(['workspaces', 'list'], { env: admin });
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SLUG +ID +REGION +OAUTH +DISPLAY NAME$/);
    expect(rows.some((row) => /^acme +\S+ +eu +no +Acme Inc$/.test(row))).toBe(true);

    const shown = await runCliInProcess(['--json', 'workspaces', 'get', 'acme'], { env: admin });
    expect(shown.code).toBe(0);
    expect(shown.json()).toMatchObject({ name: 'workspaces/acme', display_name: 'Acme Inc', region: 'eu' });

    // Options beat the environment: a wrong TRIBUTARY_URL is overridden by --url.
    const withOptions = await runCliInProcess(
      ['--url', t.baseUrl, '--token', t.adminToken, '--json', 'workspaces', 'list'],
      {
        env: { TRIBUTARY_URL: 'http://127.0.0.1:9', TRIBUTARY_TOKEN: 'wrong' },
      },
    );
    expect(withOptions.json().map((workspace: any) => workspace.name)).toContain('workspaces/acme');
  });

  it('reports API errors with status and code, and a missing token or server clearly', async () => {
    const duplicate = await runCliInProcess(['workspaces', 'create', 'dupe'], { env: admin });
    expect(duplicate.code).toBe(0);
    const again = await runCliInProcess(['workspaces', 'create', 'dupe'], { env: admin });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^error: .*\(HTTP 409, code 6\)\n$/);

    const missing = await runCliInProcess(['workspaces', 'get', 'nope'], { env: admin });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/HTTP 404, code 5/);

    const noToken = await runCliInProcess(['workspaces', 'list'], { env: { TRIBUTARY_URL: t.baseUrl } });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/no access token: set TRIBUTARY_TOKEN or pass --token-file/);

    const badToken = await runCliInProcess(['workspaces', 'list'], {
      env: { ...admin, TRIBUTARY_TOKEN: 'not-a-token' },
    });
    expect(badToken.code).toBe(2);
    expect(badToken.stderr).toMatch(/HTTP 401, code 16/);

    const unreachable = await runCliInProcess(['workspaces', 'list'], {
      env: { ...admin, TRIBUTARY_URL: 'http://127.0.0.1:9' },
    });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);

    const usage = await runCliInProcess(['tokens', 'create'], { env: admin });
    expect(usage.code).toBe(1);
    expect(usage.stderr).toMatch(/required option '-w, --workspace <slug>'/);
  });

  it('creates a workspace token that works, lists it without its secret, and deletes it', async () => {
    await runCliInProcess(['workspaces', 'create', 'tokens-ws'], { env: admin });
    const created = await runCliInProcess(
      ['--json', 'tokens', 'create', '-w', 'tokens-ws', '--description', 'ci'],
      { env: admin },
    );
    expect(created.code).toBe(0);
    const token = created.json();
    expect(token).toMatchObject({
      scopes: 'workspace',
      workspace_names: ['workspaces/tokens-ws'],
      description: 'ci',
      token: expect.any(String),
    });
    const number = token.name.split('/')[1];

    const asWorkspace = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: token.token };
    const reachable = await runCliInProcess(['--json', 'workspaces', 'list'], { env: asWorkspace });
    expect(reachable.json().map((workspace: any) => workspace.name)).toEqual(['workspaces/tokens-ws']);
    // A workspace token cannot mint tokens.
    const denied = await runCliInProcess(['tokens', 'list'], { env: asWorkspace });
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/HTTP 403, code 7/);

    const listed = await runCliInProcess(['tokens', 'list'], { env: admin });
    expect(listed.stdout).toMatch(new RegExp(`^${number} +workspace +tokens-ws +\\S+ +ci$`, 'm'));
    expect(listed.stdout).not.toContain(token.token);

    const deleted = await runCliInProcess(['tokens', 'delete', number], { env: admin });
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted access-tokens/${number}\n` });
    const afterDelete = await runCliInProcess(['workspaces', 'list'], { env: asWorkspace });
    expect(afterDelete.code).toBe(2);
    expect(afterDelete.stderr).toMatch(/HTTP 401/);
    const deletedTwice = await runCliInProcess(['tokens', 'delete', number], { env: admin });
    expect(deletedTwice.code).toBe(2);
    expect(deletedTwice.stderr).toMatch(/HTTP 404/);
    const notANumber = await runCliInProcess(['tokens', 'delete', 'abc'], { env: admin });
    expect(notANumber).toMatchObject({ code: 1, stderr: 'error: not a token number: abc\n' });
  });

  it('creates, lists, shows and deletes sources; the write key accepts messages until the source is deleted', async () => {
    await runCliInProcess(['workspaces', 'create', 'src-ws'], { env: admin });
    const created = await runCliInProcess(
      ['--json', 'sources', 'create', 'src-ws', 'web', '--catalog', 'javascript'],
      { env: admin },
    );
    expect(created.code).toBe(0);
    const source = created.json();
    expect(source).toMatchObject({
      name: 'workspaces/src-ws/sources/web',
      catalog_name: 'catalog/sources/javascript',
    });
    const writeKey = source.write_keys[0];

    const listed = await runCliInProcess(['sources', 'list', 'src-ws'], { env: admin });
    expect(listed.stdout).toMatch(new RegExp(`^web +${source.id} +javascript +${writeKey} +web$`, 'm'));
    const shown = await runCliInProcess(['sources', 'get', 'src-ws', 'web'], { env: admin });
    expect(shown.stdout).toMatch(new RegExp(`^write key: +${writeKey}$`, 'm'));

    expect((await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, writeKey)).status).toBe(200);
    const deleted = await runCliInProcess(['sources', 'delete', 'src-ws', 'web'], { env: admin });
    expect(deleted).toMatchObject({ code: 0, stdout: 'Deleted workspaces/src-ws/sources/web\n' });
    expect((await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, writeKey)).status).toBe(401);
    const gone = await runCliInProcess(['sources', 'get', 'src-ws', 'web'], { env: admin });
    expect(gone.code).toBe(2);

    const unknownCatalog = await runCliInProcess(['sources', 'create', 'src-ws', 'x', '--catalog', 'cobol'], {
      env: admin,
    });
    expect(unknownCatalog.code).toBe(2);
    expect(unknownCatalog.stderr).toMatch(/HTTP 4\d\d/);
  });

  it('bootstrap prints first steps without --workspace, and sets up a workspace idempotently with it', async () => {
    const steps = await runCliInProcess(['bootstrap'], { env: { TRIBUTARY_URL: t.baseUrl } });
    expect(steps.code).toBe(0);
    expect(steps.stdout).toContain(`export TRIBUTARY_URL=${t.baseUrl}`);
    expect(steps.stdout).toContain('tributary bootstrap --workspace acme');

    const first = await runCliInProcess(
      ['--json', 'bootstrap', '--workspace', 'boot', '--source', 'backend'],
      { env: admin },
    );
    expect(first.code).toBe(0);
    const result = first.json();
    expect(result).toMatchObject({
      workspace: { name: 'workspaces/boot' },
      workspace_created: true,
      source: { name: 'workspaces/boot/sources/backend', catalog_name: 'catalog/sources/node' },
      source_created: true,
      access_token: { scopes: 'workspace', workspace_names: ['workspaces/boot'], token: expect.any(String) },
    });
    expect(result.write_key).toBe(result.source.write_keys[0]);
    expect((await postJson(t, '/v1/track', { userId: 'u', event: 'E' }, result.write_key)).status).toBe(200);
    // The workspace token it printed manages that workspace.
    const withToken = await runCliInProcess(['--json', 'sources', 'list', 'boot'], {
      env: { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: result.access_token.token },
    });
    expect(withToken.json().map((source: any) => source.name)).toEqual(['workspaces/boot/sources/backend']);

    // A rerun reuses the workspace and the source (same write key), and readable output says so.
    const again = await runCliInProcess(
      ['bootstrap', '--workspace', 'boot', '--source', 'backend', '--no-access-token'],
      { env: admin },
    );
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^workspace: +workspaces\/boot \(existed, id /m);
    expect(again.stdout).toMatch(/^source: +workspaces\/boot\/sources\/backend \(existed, id /m);
    expect(again.stdout).toMatch(new RegExp(`^write key: +${result.write_key}$`, 'm'));
    expect(again.stdout).not.toMatch(/workspace token/);

    const notAdmin = await runCliInProcess(['bootstrap', '--workspace', 'other'], {
      env: { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: result.access_token.token },
    });
    expect(notAdmin.code).toBe(2);
    expect(notAdmin.stderr).toMatch(/HTTP 403/);
  });

  it('runs as a child process through bin/tributary.js', async () => {
    const run = await runCliChild(['--json', 'workspaces', 'get', 'acme'], {
      TRIBUTARY_URL: t.baseUrl,
      TRIBUTARY_TOKEN: t.adminToken,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ name: 'workspaces/acme' });
    const failing = await runCliChild(['workspaces', 'get', 'nope'], {
      TRIBUTARY_URL: t.baseUrl,
      TRIBUTARY_TOKEN: t.adminToken,
    });
    expect(failing.code).toBe(2);
    expect(failing.stderr).toMatch(/^error: .*HTTP 404/);
  }, 30_000);
});
