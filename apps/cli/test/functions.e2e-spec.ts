// `tributary functions ...` against a real server on loopback and its real function runner: code and
// settings from files, versions and deploys, a preview's output and exit code, and the refusals of
// bad input (exit 1 before any request, exit 2 when the server says no).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigApiClient, createWorkspaceWithTokens } from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { runCliInProcess } from './cli-e2e.kit';

const DESTINATION_CODE = `async function onTrack(event, settings) {
  console.log('relaying', event.event);
  return { name: event.event, key: settings.apiKey };
}
`;

describe('tributary CLI: functions', () => {
  let t: TributaryTestInstance;
  let env: Record<string, string>;
  let directory: string;
  const file = (name: string, text: string) => {
    const path = join(directory, name);
    writeFileSync(path, text);
    return path;
  };
  const cli = (...args: string[]) => runCliInProcess(args, { env });

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-cli-functions-'));
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    const access = await createWorkspaceWithTokens(new ConfigApiClient(t), 'cli-fn');
    env = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: access.writerToken };
  }, 60_000);
  afterAll(async () => {
    await t?.stop({ removeData: true });
    rmSync(directory, { recursive: true, force: true });
  });

  it('creates a function from files, lists, shows, updates, deploys and deletes it', async () => {
    const code = file('order-relay.js', DESTINATION_CODE);
    const settings = file(
      'settings.json',
      JSON.stringify([
        {
          name: 'apiKey',
          label: 'API key',
          type: 'string',
          description: '',
          required: true,
          sensitive: true,
        },
      ]),
    );
    const created = await cli(
      '--json',
      'functions',
      'create',
      'cli-fn',
      '--type',
      'destination',
      '--file',
      code,
      '--settings',
      settings,
    );
    expect(created.code).toBe(0);
    const fn = created.json();
    expect(fn).toMatchObject({
      id: expect.stringMatching(/^dfn_[0-9A-Za-z]{27}$/),
      type: 'DESTINATION',
      display_name: 'order-relay',
      code: DESTINATION_CODE,
      version: 1,
      deployed_version: 1,
      settings: [expect.objectContaining({ name: 'apiKey', sensitive: true })],
    });

    const listed = await cli('functions', 'list', 'cli-fn');
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +TYPE +VERSION +DEPLOYED +DISPLAY NAME +UPDATED$/);
    expect(rows).toEqual([
      expect.stringMatching(new RegExp(`^${fn.id} +DESTINATION +1 +1 +order-relay +\\S+$`)),
    ]);
    const sources = await cli('--json', 'functions', 'list', 'cli-fn', '--type', 'SOURCE');
    expect(sources.json()).toEqual([]);

    const shown = await cli('functions', 'get', 'cli-fn', `workspaces/cli-fn/functions/${fn.id}`);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^settings: +apiKey \(string, required, sensitive\)$/m);
    expect(shown.stdout).toContain("console.log('relaying', event.event);");

    const updated = await cli(
      'functions',
      'update',
      'cli-fn',
      fn.id,
      '--file',
      file('v2.js', DESTINATION_CODE.replace('relaying', 'relaying v2')),
      '--display-name',
      'Order relay',
    );
    expect(updated.code).toBe(0);
    expect(updated.stdout).toMatch(/^version: +2$/m);
    expect(updated.stdout).toMatch(/^deployed version: +1$/m);
    expect(updated.stdout).toMatch(/^display name: +Order relay$/m);

    const versions = await cli('functions', 'versions', 'cli-fn', fn.id);
    expect(versions.code).toBe(0);
    expect(versions.stdout).toMatch(/^VERSION +DEPLOYED +CREATED$/m);
    expect(versions.stdout).toMatch(/^1 +yes +\S+$/m);
    expect(versions.stdout).toMatch(/^2 +- +\S+$/m);

    const deployed = await cli('functions', 'deploy', 'cli-fn', fn.id);
    expect(deployed).toMatchObject({ code: 0, stdout: `Deployed version 2 of ${fn.id}\n` });
    expect((await cli('--json', 'functions', 'get', 'cli-fn', fn.id)).json()).toMatchObject({
      version: 2,
      deployed_version: 2,
    });

    const deleted = await cli('functions', 'delete', 'cli-fn', fn.id);
    expect(deleted).toMatchObject({ code: 0, stdout: `Deleted workspaces/cli-fn/functions/${fn.id}\n` });
    const gone = await cli('functions', 'get', 'cli-fn', fn.id);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/\(HTTP 404, code 5\)\n$/);
  });

  it('previews code on a sample without saving it: the output and logs, exit 2 when the function fails', async () => {
    const code = file('preview.js', DESTINATION_CODE);
    const payload = file(
      'track.json',
      JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u1' }),
    );
    const values = file('values.json', JSON.stringify({ apiKey: 'k-1' }));
    const ran = await cli(
      'functions',
      'preview',
      'cli-fn',
      '--type',
      'DESTINATION',
      '--file',
      code,
      '--payload',
      payload,
      '--values',
      values,
    );
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe(
      'ok: the function returned\n{\n  "name": "Order Completed",\n  "key": "k-1"\n}\n\nlogs:\n  relaying Order Completed\n',
    );
    const asJson = await cli(
      '--json',
      'functions',
      'preview',
      'cli-fn',
      '--type',
      'DESTINATION',
      '--file',
      code,
      '--payload',
      payload,
    );
    expect(asJson.json()).toMatchObject({ invoke: { success: true }, logs_truncated: false });

    const failing = file(
      'failing.js',
      `async function onTrack() { throw new ValidationError('no userId'); }`,
    );
    const failed = await cli(
      'functions',
      'preview',
      'cli-fn',
      '--type',
      'DESTINATION',
      '--file',
      failing,
      '--payload',
      payload,
    );
    expect(failed).toMatchObject({
      code: 2,
      stdout: 'failed: ValidationError: no userId\n\nlogs:\n  ValidationError: no userId\n',
    });

    const source = file(
      'source.js',
      `async function onRequest(request) { Segment.track({ event: 'Hook', userId: (await request.json()).id }); }`,
    );
    const emitted = await cli(
      '--json',
      'functions',
      'preview',
      'cli-fn',
      '--type',
      'source',
      '--file',
      source,
      '--payload',
      file('body.json', '{"id":"c-1"}'),
    );
    expect(emitted.code).toBe(0);
    expect(JSON.parse(emitted.json().invoke.output)).toEqual([
      expect.objectContaining({ type: 'track', event: 'Hook', userId: 'c-1' }),
    ]);

    const badPayload = await cli(
      'functions',
      'preview',
      'cli-fn',
      '--type',
      'DESTINATION',
      '--file',
      code,
      '--payload',
      file('bad.json', '{"type":'),
    );
    expect(badPayload.code).toBe(2);
    expect(badPayload.stderr).toMatch(/^error: payload is not valid JSON.*\(HTTP 400, code 3\)\n$/);
    expect((await cli('--json', 'functions', 'list', 'cli-fn')).json()).toEqual([]);
  }, 30_000);

  it('refuses a bad command line with exit 1 before asking the server, and what the server refuses with exit 2', async () => {
    const code = file('ok.js', DESTINATION_CODE);
    const usage = async (...args: string[]) => {
      const run = await cli(...args);
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      return run.stderr;
    };
    expect(await usage('functions', 'create', 'cli-fn', '--type', 'INSERT_SOURCE', '--file', code)).toMatch(
      /--type takes SOURCE, DESTINATION, INSERT_DESTINATION, not "INSERT_SOURCE"/,
    );
    expect(
      await usage(
        'functions',
        'create',
        'cli-fn',
        '--type',
        'DESTINATION',
        '--file',
        join(directory, 'missing.js'),
      ),
    ).toMatch(/cannot read --file .*missing\.js: ENOENT/);
    expect(
      await usage(
        'functions',
        'create',
        'cli-fn',
        '--type',
        'DESTINATION',
        '--file',
        code,
        '--settings',
        file('s.json', '{"apiKey":1}'),
      ),
    ).toMatch(/must hold a JSON array of setting declarations/);
    expect(
      await usage(
        'functions',
        'create',
        'cli-fn',
        '--type',
        'DESTINATION',
        '--file',
        code,
        '--settings',
        file('s2.json', '[{'),
      ),
    ).toMatch(/--settings .* is not JSON/);
    expect(await usage('functions', 'create', 'cli-fn', '--type', 'DESTINATION')).toMatch(
      /required option '--file <path>'/,
    );
    expect(await usage('functions', 'get', 'cli-fn', 'src_123')).toMatch(/not a function id/);
    expect(await usage('functions', 'update', 'cli-fn', 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ')).toMatch(
      /give what changes/,
    );
    expect(
      await usage(
        'functions',
        'preview',
        'cli-fn',
        '--type',
        'DESTINATION',
        '--file',
        code,
        '--payload',
        code,
        '--values',
        file('v.json', '[1]'),
      ),
    ).toMatch(/--values .* must hold a JSON object/);
    expect(
      await usage('functions', 'logs', 'cli-fn', 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ', '--limit', '0'),
    ).toMatch(/from 1 to 1000/);

    const syntax = await cli(
      'functions',
      'create',
      'cli-fn',
      '--type',
      'DESTINATION',
      '--file',
      file('syntax.js', 'async function onTrack( {'),
    );
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/\(HTTP 400, code 3\)\n$/);
    const unknown = await cli('functions', 'deploy', 'cli-fn', 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/\(HTTP 404, code 5\)\n$/);
    const elsewhere = await cli('functions', 'list', 'someone-else');
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/\(HTTP 404, code 5\)\n$/);
  });
});
