// The CLI never needs a credential on its command line (argv shows in `ps` and shell history): the
// token and the write key come from the environment or a file, and the flags still work with a
// warning. And what it prints of the server's data cannot drive the operator's terminal.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { safeForTerminal, safeJsonForTerminal } from '../src/shared/terminal-text';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import { runCliChild, runCliInProcess, startFaultyProxy } from './cli-e2e.kit';

/** What a hostile display name would send: OSC 52 (write the clipboard), clear screen, CR, RLO, C1 CSI. */
const HOSTILE = 'Acme\u001b]52;c;ZXZpbA==\u0007\u001b[2J\rforged\u202eevil\u009b31m';
const RAW_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe('tributary CLI credentials', () => {
  let t: TributaryTestInstance;
  let directory: string;

  beforeAll(async () => {
    t = await startTributary();
    directory = mkdtempSync(join(tmpdir(), 'tributary-cli-credentials-'));
  });

  afterAll(async () => {
    rmSync(directory, { recursive: true, force: true });
    await t?.stop({ removeData: true });
  });

  function secretFile(name: string, content: string, mode = 0o600): string {
    const path = join(directory, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return path;
  }

  it('takes the token from --token-file or TRIBUTARY_TOKEN_FILE, with nothing on the command line', async () => {
    const file = secretFile('token', `${t.adminToken}\n`);
    const byFlag = await runCliInProcess(['--token-file', file, '--json', 'workspaces', 'list'], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect({ code: byFlag.code, stderr: byFlag.stderr }).toEqual({ code: 0, stderr: '' });
    expect(Array.isArray(byFlag.json())).toBe(true);

    const byVariable = await runCliInProcess(['--json', 'workspaces', 'list'], {
      env: { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN_FILE: file },
    });
    expect({ code: byVariable.code, stderr: byVariable.stderr }).toEqual({ code: 0, stderr: '' });
  });

  it('still takes --token, warning that other users can see it', async () => {
    const run = await runCliInProcess(['--token', t.adminToken, '--json', 'workspaces', 'list'], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^warning: --token shows the token to other users \(ps\).*TRIBUTARY_TOKEN or --token-file/,
    );
    expect(run.stderr).not.toContain(t.adminToken);
  });

  it('refuses an unreadable, empty or doubled token source clearly, with the usage exit code', async () => {
    const env = { TRIBUTARY_URL: t.baseUrl };
    const missing = await runCliInProcess(['--token-file', join(directory, 'absent'), 'workspaces', 'list'], {
      env,
    });
    expect(missing).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot read the token file .*absent.*ENOENT/),
    });
    const empty = await runCliInProcess(['--token-file', secretFile('empty', '\n'), 'workspaces', 'list'], {
      env,
    });
    expect(empty).toMatchObject({ code: 1, stderr: expect.stringMatching(/token file .* is empty/) });
    const both = await runCliInProcess(
      ['--token', 'x', '--token-file', secretFile('both', 'y'), 'workspaces', 'list'],
      { env },
    );
    expect(both).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/pass --token or --token-file, not both/),
    });
  });

  it('warns when the token file can be read by other users', async () => {
    const file = secretFile('shared-token', t.adminToken, 0o644);
    const run = await runCliInProcess(['--token-file', file, '--json', 'workspaces', 'list'], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`warning: ${file} can be read by other users; chmod 600`);
  });

  it('imports with the write key from --write-key-file or TRIBUTARY_WRITE_KEY', async () => {
    const source = await createWorkspaceAndSource(t);
    const history = secretFile(
      'history.ndjson',
      '{"type":"track","userId":"u1","event":"A","messageId":"cred-1"}\n',
    );
    const keyFile = secretFile('write-key', `${source.writeKey}\n`);
    const fromFile = await runCliInProcess(
      ['--json', 'import', history, '--write-key-file', keyFile, '--restart'],
      {
        env: { TRIBUTARY_URL: t.baseUrl },
      },
    );
    expect({ code: fromFile.code, stderr: fromFile.stderr }).toEqual({ code: 0, stderr: '' });
    expect(fromFile.json()).toMatchObject({ accepted: 1 });
    const fromVariable = await runCliInProcess(['--json', 'import', history, '--restart'], {
      env: { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_WRITE_KEY: source.writeKey },
    });
    expect({ code: fromVariable.code, stderr: fromVariable.stderr }).toEqual({ code: 0, stderr: '' });
    const fromFlag = await runCliInProcess(
      ['--json', 'import', history, '--write-key', source.writeKey, '--restart'],
      {
        env: { TRIBUTARY_URL: t.baseUrl },
      },
    );
    expect(fromFlag.code).toBe(0);
    expect(fromFlag.stderr).toMatch(/^warning: --write-key shows the write key to other users/);
  });
});

describe('tributary CLI output of server data', () => {
  let t: TributaryTestInstance;
  let env: Record<string, string>;

  beforeAll(async () => {
    t = await startTributary();
    env = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: t.adminToken };
    const created = await configApi(t, 'POST', 'workspaces', {
      workspace: { name: 'workspaces/hostile', display_name: HOSTILE },
    });
    expect(created.status).toBe(200);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('shows control characters of names escaped in tables and records, never raw', async () => {
    for (const args of [
      ['workspaces', 'list'],
      ['workspaces', 'get', 'hostile'],
    ]) {
      const run = await runCliInProcess(args, { env });
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(RAW_CONTROLS);
      expect(run.stdout).toContain('Acme\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\x0dforged\\u{202e}evil\\x9b31m');
    }
  });

  it('prints JSON that parses back to the same value but holds no raw C1 or bidi control', async () => {
    const run = await runCliInProcess(['--json', 'workspaces', 'get', 'hostile'], { env });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROLS);
    expect(run.json().display_name).toBe(HOSTILE);
  });

  it("escapes the server's error messages on stderr, also through a child process", async () => {
    const proxy = await startFaultyProxy(t.baseUrl, () => ({
      status: 500,
      body: { error: `boom${HOSTILE}`, code: 13 },
    }));
    try {
      const inProcess = await runCliInProcess(['workspaces', 'list'], {
        env: { ...env, TRIBUTARY_URL: proxy.url },
      });
      expect(inProcess.code).toBe(2);
      expect(inProcess.stderr).toMatch(/^error: boomAcme\\x1b/);
      expect(inProcess.stderr).not.toMatch(RAW_CONTROLS);
      const child = await runCliChild(['workspaces', 'list'], { ...env, TRIBUTARY_URL: proxy.url });
      expect(child.code).toBe(2);
      expect(child.stderr).not.toMatch(RAW_CONTROLS);
    } finally {
      await proxy.close();
    }
  });
});

describe('safeForTerminal', () => {
  it('keeps text, tabs and (when asked) newlines; escapes every other control', () => {
    expect(safeForTerminal('plain text, ünïcödé, 日本 ✓')).toBe('plain text, ünïcödé, 日本 ✓');
    expect(safeForTerminal('a\tb\nc')).toBe('a\tb\\x0ac');
    expect(safeForTerminal('a\tb\nc', { keepNewlines: true })).toBe('a\tb\nc');
    expect(safeForTerminal('\u0000\u001b\u007f\u0085\u009f\r')).toBe('\\x00\\x1b\\x7f\\x85\\x9f\\x0d');
    expect(safeForTerminal('\u200e\u202a\u2069')).toBe('\\u{200e}\\u{202a}\\u{2069}');
  });

  it('escapes JSON text into JSON that parses to the same value', () => {
    const value = { name: HOSTILE, list: ['\u009b', '\u202e'] };
    const safe = safeJsonForTerminal(JSON.stringify(value));
    expect(safe).not.toMatch(RAW_CONTROLS);
    expect(JSON.parse(safe)).toEqual(value);
  });
});
