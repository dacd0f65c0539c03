// `tributary tail` against a real server: it prints a source's messages as they are stored (one JSON
// line each with --json), filters them by type and name, and after the server ends the stream (a
// test-only nudge, or the server process restarting on the same port and data) resumes with Last-Event-ID, so a
// message stored meanwhile arrives exactly once.
import { OpenLiveEventStreams } from '../../config-api/src/live-events/open-live-event-streams';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { spawnTributary, type TributaryProcess } from '../../../test/support/tributary-process';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../../../test/support/tracking-e2e.kit';
import { sendBatch, trackMessage } from '../../router/test/router-e2e.kit';
import { runCliInProcess, spawnCli, startCliInProcess, type RunningCli } from './cli-e2e.kit';

/** Lines of stdout, each parsed as JSON. */
function jsonLines(output: string): any[] {
  return output
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

async function untilFollowing(tail: RunningCli, times = 1): Promise<void> {
  await pollUntil('tail is connected', 10_000, async () =>
    (tail.stderr().match(/^(following|resumed) /gm) ?? []).length >= times ? true : undefined,
  );
}

async function untilLines(tail: RunningCli, count: number): Promise<void> {
  await pollUntil(`tail printed ${count} lines`, 10_000, async () =>
    tail.stdout().split('\n').filter(Boolean).length >= count ? true : undefined,
  );
}

/** Fails the test instead of hanging when a tail never ends. */
function stopAfter(tail: RunningCli, ms: number): () => void {
  const timer = setTimeout(() => tail.interrupt(), ms);
  return () => clearTimeout(timer);
}

describe('tributary tail', () => {
  let t: TributaryTestInstance;
  let env: Record<string, string>;
  let source: TestSource;

  beforeAll(async () => {
    t = await startTributary();
    env = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: t.adminToken };
    source = await createWorkspaceAndSource(t);
  });

  afterAll(() => t?.stop({ removeData: true }));

  it('prints the messages stored after it started, filtered, and resumes after the server ends the stream', async () => {
    const tail = startCliInProcess(
      [
        '--json',
        'tail',
        source.workspaceSlug,
        source.sourceSlug,
        '--type',
        'track',
        '--event',
        'Order Completed',
        '--limit',
        '2',
      ],
      { env },
    );
    const cancel = stopAfter(tail, 20_000);
    await untilFollowing(tail);
    const first = trackMessage({ event: 'Order Completed' });
    await sendBatch(t, source, [
      { type: 'identify', userId: 'u1', traits: { plan: 'pro' } },
      trackMessage({ event: 'Cart Viewed' }),
      first,
    ]);
    await untilLines(tail, 1);

    // The server ends every open stream; the message stored before the tail reconnects comes next.
    t.app.get(OpenLiveEventStreams, { strict: false }).endAll();
    const meanwhile = trackMessage({ event: 'Order Completed' });
    await sendBatch(t, source, [meanwhile]);

    const run = await tail.done;
    cancel();
    expect(run.code).toBe(0);
    expect(jsonLines(run.stdout).map((message) => message.messageId)).toEqual([
      first.messageId,
      meanwhile.messageId,
    ]);
    expect(jsonLines(run.stdout)[0]).toMatchObject({
      type: 'track',
      event: 'Order Completed',
      userId: 'user-1',
    });
    expect(run.stderr).toMatch(/^the server closed the stream; reconnecting in 2\.0 s$/m);
    expect(run.stderr).toMatch(/^resumed workspaces\/.*\/sources\/.* after event \d+$/m);
  }, 30_000);

  it('resumes after the server process restarts on the same port and data, with each message once', async () => {
    let server: TributaryProcess = await spawnTributary();
    try {
      const restartSource = await createWorkspaceAndSource(server);
      const tail = startCliInProcess(
        ['tail', restartSource.workspaceSlug, restartSource.sourceSlug, '--json', '--limit', '3'],
        { env: { TRIBUTARY_URL: server.baseUrl, TRIBUTARY_TOKEN: server.adminToken } },
      );
      const cancel = stopAfter(tail, 90_000);
      await untilFollowing(tail);
      const before = trackMessage({ event: 'Before Restart' });
      await sendBatch(server, restartSource, [before]);
      await untilLines(tail, 1);

      // A graceful stop ends the stream; the tail keeps trying while nothing listens.
      await server.kill('SIGTERM');
      await pollUntil('tail notices the server is gone', 10_000, async () =>
        /reconnecting in/.test(tail.stderr()) ? true : undefined,
      );
      server = await spawnTributary({
        dataDir: server.dataDir,
        port: server.port,
        adminToken: server.adminToken,
      });
      // Stored before the tail is back (it waits between attempts), and after.
      const after = [trackMessage({ event: 'After Restart 1' }), trackMessage({ event: 'After Restart 2' })];
      await sendBatch(server, restartSource, [after[0]]);
      await untilFollowing(tail, 2);
      await sendBatch(server, restartSource, [after[1]]);

      const run = await tail.done;
      cancel();
      expect(run.code).toBe(0);
      expect(jsonLines(run.stdout).map((message) => message.messageId)).toEqual([
        before.messageId,
        after[0].messageId,
        after[1].messageId,
      ]);
      expect(run.stderr).toMatch(/^resumed .* after event \d+$/m);
    } finally {
      await server.kill('SIGTERM');
      rmSync(server.dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('prints readable lines without --json, and stops on Ctrl-C with exit code 0', async () => {
    const tail = startCliInProcess(['tail', source.workspaceSlug, source.sourceSlug], { env });
    const cancel = stopAfter(tail, 20_000);
    await untilFollowing(tail);
    const message = trackMessage({ event: 'Signed \u001b[2J Up', userId: 'ada' });
    await sendBatch(t, source, [message, { type: 'page', name: 'Pricing', anonymousId: 'anon-1' }]);
    await untilLines(tail, 2);
    tail.interrupt();
    const run = await tail.done;
    cancel();
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^\\S+Z  track     Signed \\\\x1b\\[2J Up  user ada  ${message.messageId}$`),
    );
    expect(lines[1]).toMatch(/^\S+Z  page      Pricing  anonymous anon-1  \S+$/);
  }, 30_000);

  it('runs as a child process through bin/tributary.js and ends on SIGINT with exit code 0', async () => {
    const child = spawnCli(['tail', source.workspaceSlug, source.sourceSlug, '--json'], env);
    try {
      await pollUntil('the child tail is connected', 30_000, async () =>
        /^following /m.test(child.output().stderr) ? true : undefined,
      );
      const message = trackMessage({ event: 'Seen By The Child' });
      await sendBatch(t, source, [message]);
      await pollUntil('the child printed the message', 10_000, async () =>
        child.output().stdout.includes(message.messageId) ? true : undefined,
      );
      const exited = once(child, 'exit');
      child.kill('SIGINT');
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);
      expect(jsonLines(child.output().stdout).map((line) => line.messageId)).toEqual([message.messageId]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('fails at once with the documented exit codes when it cannot start', async () => {
    const unknownSource = await runCliInProcess(['tail', source.workspaceSlug, 'nothing-here'], { env });
    expect(unknownSource).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^error: .*HTTP 404, code 5/),
    });
    const badToken = await runCliInProcess(['tail', source.workspaceSlug, source.sourceSlug], {
      env: { ...env, TRIBUTARY_TOKEN: 'not-a-token' },
    });
    expect(badToken).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 401, code 16/) });
    const unreachable = await runCliInProcess(['tail', source.workspaceSlug, source.sourceSlug], {
      env: { ...env, TRIBUTARY_URL: 'http://127.0.0.1:9' },
    });
    expect(unreachable).toMatchObject({ code: 3, stderr: expect.stringMatching(/^error: cannot reach /) });
    const noToken = await runCliInProcess(['tail', source.workspaceSlug, source.sourceSlug], {
      env: { TRIBUTARY_URL: t.baseUrl },
    });
    expect(noToken).toMatchObject({ code: 1, stderr: expect.stringMatching(/no access token/) });
    const badLimit = await runCliInProcess(
      ['tail', source.workspaceSlug, source.sourceSlug, '--limit', '0'],
      {
        env,
      },
    );
    expect(badLimit.code).toBe(1);
    expect(badLimit.stderr).toMatch(
      /option .--limit <n>. argument .0. is invalid. expected an integer from 1/,
    );
    const missingSource = await runCliInProcess(['tail', source.workspaceSlug], { env });
    expect(missingSource).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/missing required argument 'source'/),
    });
  });
});
