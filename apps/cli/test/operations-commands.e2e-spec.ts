// Destinations, filters, replays and dead letters through the CLI against a real server on loopback,
// delivering to a real webhook receiver: exit codes, `--json` parsed, tables, and secrets never printed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  pollUntil,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import {
  POLLING_ENVIRONMENT,
  sendBatch,
  trackMessage,
  WebhookReceiver,
} from '../../router/test/router-e2e.kit';
import { runCliInProcess } from './cli-e2e.kit';

const SECRET = 'the-shared-secret-7f3a9c';
const OTHER_SECRET = 'another-secret-0b61d2';

describe('tributary CLI: destinations, filters, replays and dead letters', () => {
  let t: TributaryTestInstance;
  let admin: Record<string, string>;
  let source: TestSource;
  let receiver: WebhookReceiver;
  let directory: string;
  const cli = (args: string[], env: Record<string, string> = admin) => runCliInProcess(args, { env });
  const at = () => [source.workspaceSlug, source.sourceSlug];

  beforeAll(async () => {
    // Two deliveries at a time per destination: a replay to a slow receiver runs long enough to watch.
    t = await startTributary({
      environment: { ...POLLING_ENVIRONMENT, RETRY_WINDOW: '2s', ROUTER_MAX_IN_FLIGHT: '2' },
    });
    admin = { TRIBUTARY_URL: t.baseUrl, TRIBUTARY_TOKEN: t.adminToken };
    source = await createWorkspaceAndSource(t);
    receiver = await WebhookReceiver.start({ secret: SECRET });
    directory = mkdtempSync(join(tmpdir(), 'tributary-cli-operations-'));
  });

  afterAll(async () => {
    rmSync(directory, { recursive: true, force: true });
    await receiver?.close();
    await t?.stop({ removeData: true });
  });

  it('creates a destination from flags and a settings file, masks its secret everywhere, and enables, disables and deletes it', async () => {
    const settingsFile = join(directory, 'webhook.json');
    writeFileSync(settingsFile, JSON.stringify({ shared_secret: SECRET, signature_timestamp: false }));
    const created = await cli([
      '--json',
      'destinations',
      'create',
      ...at(),
      'webhooks',
      '--setting',
      `url=${receiver.url}`,
      '--settings-file',
      settingsFile,
    ]);
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const destination = created.json();
    expect(destination).toMatchObject({
      name: `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations/webhooks`,
      catalog_name: 'catalog/destinations/webhooks',
      enabled: false,
    });
    const setting = (key: string) => destination.config.find((entry: any) => entry.name.endsWith(`/${key}`));
    expect(setting('url').value).toBe(receiver.url);
    expect(setting('shared_secret').value).toBe('********');
    expect(created.stdout).not.toContain(SECRET);

    const shown = await cli(['destinations', 'get', ...at(), 'webhooks']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^enabled: +no$/m);
    expect(shown.stdout).toMatch(/^shared_secret +password +\*{8}$/m);
    expect(shown.stdout).not.toContain(SECRET);

    const listed = await cli(['destinations', 'list', ...at()]);
    expect(listed.code).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^SLUG +CATALOG +ENABLED +DISPLAY NAME$/);
    expect(rows).toEqual([expect.stringMatching(/^webhooks +webhooks +no +Webhooks$/)]);

    const enabled = await cli(['destinations', 'enable', ...at(), 'webhooks', '--json']);
    expect(enabled.code).toBe(0);
    expect(enabled.json()).toMatchObject({ enabled: true });
    expect(enabled.stdout).not.toContain(SECRET);
    const listedJson = await cli(['--json', 'destinations', 'list', ...at()]);
    expect(listedJson.json()).toEqual([expect.objectContaining({ enabled: true })]);

    // A secret on the command line works, with a warning; it is still never printed.
    const flagged = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-flagged',
      '--catalog',
      'webhooks',
      '--setting',
      `url=${receiver.url}`,
      '--setting',
      `shared_secret=${OTHER_SECRET}`,
      '--enable',
    ]);
    expect(flagged.code).toBe(0);
    expect(flagged.stderr).toMatch(
      /^warning: --setting shared_secret=\.\.\. shows a secret to other users \(ps\)/,
    );
    expect(flagged.stdout + flagged.stderr).not.toContain(OTHER_SECRET);
    expect(flagged.stdout).toMatch(/^enabled: +yes$/m);

    const disabled = await cli(['destinations', 'disable', ...at(), 'webhooks-flagged']);
    expect(disabled).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Disabled .*\/destinations\/webhooks-flagged\n$/),
    });
    const deleted = await cli(['destinations', 'delete', ...at(), 'webhooks-flagged', '--json']);
    expect(deleted.code).toBe(0);
    expect(deleted.json()).toEqual({
      deleted: `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations/webhooks-flagged`,
    });
    const gone = await cli(['destinations', 'get', ...at(), 'webhooks-flagged']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/^error: .*\(HTTP 404, code 5\)\n$/);
  });

  it('refuses bad destination input with the documented exit codes, never echoing a secret', async () => {
    // Checked before any request: 1, and the settings the catalog entry has.
    const unknownSetting = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--setting',
      'colour=blue',
    ]);
    expect(unknownSetting).toMatchObject({
      code: 1,
      stderr:
        'error: "colour" is not a setting of webhooks; its settings: url, headers, shared_secret, signature_timestamp\n',
    });
    const notKeyValue = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--setting',
      'url',
    ]);
    expect(notKeyValue).toMatchObject({ code: 1, stderr: 'error: --setting takes key=value, not "url"\n' });
    const notBoolean = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--setting',
      'signature_timestamp=yes',
    ]);
    expect(notBoolean).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/"yes" is not true or false/),
    });
    const badFile = join(directory, 'bad.json');
    writeFileSync(badFile, '[1, 2]');
    const arrayFile = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--settings-file',
      badFile,
    ]);
    expect(arrayFile).toMatchObject({ code: 1, stderr: expect.stringMatching(/must hold a JSON object/) });
    const missingFile = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--settings-file',
      join(directory, 'absent.json'),
    ]);
    expect(missingFile).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/cannot read the settings file .*ENOENT/),
    });
    const missingArgument = await cli(['destinations', 'create', ...at()]);
    expect(missingArgument.code).toBe(1);
    expect(missingArgument.stderr).toMatch(/missing required argument 'slug'/);

    // Refused by the server: 2, with its message; the secret sent is masked even in the error.
    const unknownCatalog = await cli(['destinations', 'create', ...at(), 'cobol']);
    expect(unknownCatalog).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 404, code 5/) });
    const badUrl = await cli([
      'destinations',
      'create',
      ...at(),
      'webhooks-x',
      '--catalog',
      'webhooks',
      '--setting',
      'url=ftp://example.com',
      '--setting',
      `shared_secret=${OTHER_SECRET}`,
    ]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/destination\.config\.url: .*\(HTTP 400, code 3\)/);
    expect(badUrl.stdout + badUrl.stderr).not.toContain(OTHER_SECRET);
    const readOnly = await cli(['destinations', 'enable', ...at(), 'nothing-here']);
    expect(readOnly).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 404/) });

    // No answer at all: 3.
    const unreachable = await cli(['destinations', 'list', ...at()], {
      ...admin,
      TRIBUTARY_URL: 'http://127.0.0.1:9',
    });
    expect(unreachable).toMatchObject({
      code: 3,
      stderr: expect.stringMatching(/^error: cannot reach http:\/\/127\.0\.0\.1:9/),
    });
  });

  it('creates, lists, previews and deletes filters', async () => {
    const created = await cli([
      '--json',
      'filters',
      'create',
      ...at(),
      'webhooks',
      '--if',
      "type = 'identify'",
      '--drop',
      '--title',
      'No identifies',
    ]);
    expect(created.code).toBe(0);
    const filter = created.json();
    expect(filter).toMatchObject({
      name: expect.stringMatching(/\/destinations\/webhooks\/filters\/df_[0-9A-Za-z]{27}$/),
      title: 'No identifies',
      if: "type = 'identify'",
      enabled: true,
      actions: [{ type: 'drop_event' }],
    });
    const filterId = filter.name.split('/').pop();
    const fields = await cli([
      '--json',
      'filters',
      'create',
      ...at(),
      'webhooks',
      '--if',
      'all',
      '--block-fields',
      'context.ip,traits.email',
      '--disabled',
    ]);
    expect(fields.code).toBe(0);
    expect(fields.json()).toMatchObject({
      title: 'all',
      enabled: false,
      actions: [
        { type: 'blacklist_fields', fields: { context: { fields: ['ip'] }, traits: { fields: ['email'] } } },
      ],
    });

    const listed = await cli(['filters', 'list', ...at(), 'webhooks']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^${filterId} +yes +type = 'identify' +drop_event +No identifies$`, 'm'),
    );
    const listedJson = await cli(['filters', 'list', ...at(), 'webhooks', '--json']);
    expect(listedJson.json()).toHaveLength(2);

    const kept = await cli([
      '--json',
      'filters',
      'preview',
      '--if',
      "event = 'Order Completed'",
      '--block-fields',
      'properties.card',
      '--message',
      JSON.stringify({
        type: 'track',
        event: 'Order Completed',
        userId: 'u1',
        properties: { card: '4111', total: 3 },
      }),
    ]);
    expect(kept.code).toBe(0);
    expect(kept.json().result).toBe('pass');
    expect(JSON.parse(kept.json().output).properties).toEqual({ total: 3 });
    const messageFile = join(directory, 'message.json');
    writeFileSync(messageFile, JSON.stringify({ type: 'identify', userId: 'u1' }));
    const dropped = await cli([
      'filters',
      'preview',
      '--if',
      "type = 'identify'",
      '--drop',
      '--message-file',
      messageFile,
    ]);
    expect(dropped).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^\w+: the destination would not get it\n$/),
    });

    // Bad input: the command line (1), the server's verdict (2).
    const noAction = await cli(['filters', 'create', ...at(), 'webhooks', '--if', 'all']);
    expect(noAction).toMatchObject({ code: 1, stderr: expect.stringMatching(/a filter needs an action/) });
    const badFields = await cli([
      'filters',
      'create',
      ...at(),
      'webhooks',
      '--if',
      'all',
      '--allow-fields',
      'email',
    ]);
    expect(badFields).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/--allow-fields takes properties\.<field>/),
    });
    const badSample = await cli(['filters', 'create', ...at(), 'webhooks', '--if', 'all', '--sample', '150']);
    expect(badSample).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/--sample takes a percentage/),
    });
    const badActions = await cli([
      'filters',
      'create',
      ...at(),
      'webhooks',
      '--if',
      'all',
      '--actions',
      '{not json',
    ]);
    expect(badActions).toMatchObject({ code: 1, stderr: expect.stringMatching(/--actions is not JSON/) });
    const badFql = await cli(['filters', 'create', ...at(), 'webhooks', '--if', "type = = 'x'", '--drop']);
    expect(badFql).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 400, code 3/) });
    const noMessage = await cli(['filters', 'preview', '--if', 'all', '--drop']);
    expect(noMessage).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/--message or --message-file/),
    });
    const badMessage = await cli(['filters', 'preview', '--if', 'all', '--drop', '--message', '{"type":']);
    expect(badMessage).toMatchObject({ code: 2, stderr: expect.stringMatching(/input is not valid JSON/) });
    const missingFilter = await cli(['filters', 'delete', ...at(), 'webhooks', 'df_nothing']);
    expect(missingFilter).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 404/) });

    const deleted = await cli(['filters', 'delete', ...at(), 'webhooks', filterId]);
    expect(deleted).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^Deleted .*/filters/${filterId}\\n$`)),
    });
    const afterDelete = await cli(['--json', 'filters', 'list', ...at(), 'webhooks']);
    expect(afterDelete.json().map((entry: any) => entry.name)).not.toContain(filter.name);
    // The disabled block-fields filter goes too, so the next tests deliver whole messages.
    await cli(['filters', 'delete', ...at(), 'webhooks', fields.json().name]);
  });

  it('replays the stored history to a destination, following it to the end', async () => {
    const messages = Array.from({ length: 5 }, (_, index) => trackMessage({ event: `Replayed ${index}` }));
    await sendBatch(t, source, messages);
    const replayReceiver = await WebhookReceiver.start({ secret: 'replayed' });
    try {
      const settingsFile = join(directory, 'replayed.json');
      writeFileSync(settingsFile, JSON.stringify({ url: replayReceiver.url, shared_secret: 'replayed' }));
      expect(
        (
          await cli([
            'destinations',
            'create',
            ...at(),
            'webhooks-replayed',
            '--catalog',
            'webhooks',
            '--settings-file',
            settingsFile,
          ])
        ).code,
      ).toBe(0);

      const started = await cli([
        '--json',
        'replays',
        'start',
        ...at(),
        'webhooks-replayed',
        '--from',
        '10m',
        '--wait',
        '--poll-interval',
        '200',
      ]);
      expect(started.code).toBe(0);
      const replay = started.json();
      expect(replay).toMatchObject({
        name: expect.stringMatching(/\/destinations\/webhooks-replayed\/replays\/rp_/),
        state: 'COMPLETED',
        counts: { delivered: expect.any(Number), dead_lettered: 0 },
      });
      expect(replay.counts.delivered).toBeGreaterThanOrEqual(messages.length);
      for (const message of messages) expect(replayReceiver.acceptedOnce(message.messageId)).toBeDefined();
      // Progress went to stderr, plain lines off a terminal: the first reading and the end.
      expect(started.stderr).toMatch(/^replay .*: RUNNING after 0 s/m);
      expect(started.stderr).toMatch(/: COMPLETED after \d+ s: \d+ delivered/);
      const replayId = replay.name.split('/').pop();

      const status = await cli(['replays', 'status', ...at(), 'webhooks-replayed', replayId]);
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(/^state: +COMPLETED$/m);
      expect(status.stdout).toMatch(new RegExp(`^delivered: +${replay.counts.delivered}$`, 'm'));
      const list = await cli(['--json', 'replays', 'status', ...at(), 'webhooks-replayed']);
      expect(list.json()).toEqual([expect.objectContaining({ name: replay.name, state: 'COMPLETED' })]);
      const table = await cli(['replays', 'status', ...at(), 'webhooks-replayed']);
      expect(table.stdout).toMatch(new RegExp(`^${replayId} +COMPLETED `, 'm'));

      const withoutWait = await cli([
        '--json',
        'replays',
        'start',
        ...at(),
        'webhooks-replayed',
        '--from',
        '2026-01-01T00:00:00Z',
        '--to',
        '1m',
      ]);
      expect(withoutWait.code).toBe(0);
      expect(withoutWait.json()).toMatchObject({ start_time: '2026-01-01T00:00:00.000Z', state: 'RUNNING' });
      expect(withoutWait.stderr).toBe('');

      const badTime = await cli(['replays', 'start', ...at(), 'webhooks-replayed', '--from', 'yesterday']);
      expect(badTime).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/--from takes an RFC 3339 time .* not "yesterday"/),
      });
      const localTime = await cli([
        'replays',
        'start',
        ...at(),
        'webhooks-replayed',
        '--from',
        '2026-01-01T00:00:00',
      ]);
      expect(localTime.code).toBe(1);
      const missingFrom = await cli(['replays', 'start', ...at(), 'webhooks-replayed']);
      expect(missingFrom).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/required option '--from <time>'/),
      });
      const backwards = await cli([
        'replays',
        'start',
        ...at(),
        'webhooks-replayed',
        '--from',
        '1m',
        '--to',
        '2h',
      ]);
      expect(backwards).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/end_time must be after .*HTTP 400, code 3/),
      });
      const unknown = await cli(['replays', 'status', ...at(), 'webhooks-replayed', 'rp_unknown']);
      expect(unknown).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/replay rp_unknown not found \(HTTP 404/),
      });
    } finally {
      await replayReceiver.close();
    }
  }, 30_000);

  it("shows a running replay's progress, and cancels it: the router stops and records what it sent", async () => {
    const messages = Array.from({ length: 40 }, (_, index) => trackMessage({ event: `Slow ${index}` }));
    await sendBatch(t, source, messages);
    const slow = await WebhookReceiver.start({ secret: 'slow', delayMs: 150 });
    try {
      const settingsFile = join(directory, 'slow.json');
      writeFileSync(settingsFile, JSON.stringify({ url: slow.url, shared_secret: 'slow' }));
      const destinationArgs = [...at(), 'webhooks-slow'];
      expect(
        (
          await cli([
            'destinations',
            'create',
            ...destinationArgs,
            '--catalog',
            'webhooks',
            '--settings-file',
            settingsFile,
          ])
        ).code,
      ).toBe(0);
      const started = await cli(['--json', 'replays', 'start', ...destinationArgs, '--from', '10m']);
      expect(started.code).toBe(0);
      expect(started.json()).toMatchObject({ state: 'RUNNING', progress: null, cancel_request_time: null });
      const replayId = started.json().name.split('/').pop();

      // While it runs, one replay read carries its progress: settled of what its consumer has to send.
      const { value: running } = await pollUntil(
        'the replay has settled some messages',
        15_000,
        async () => {
          const run = await cli(['--json', 'replays', 'status', ...destinationArgs, replayId]);
          const replay = run.json();
          return replay.progress?.settled >= 2 ? replay : undefined;
        },
        100,
      );
      expect(running.state).toBe('RUNNING');
      expect(running.progress.remaining).toBeGreaterThan(0);
      expect(running.progress.settled + running.progress.remaining).toBeGreaterThanOrEqual(messages.length);

      // Cancelled and followed to its end, with a bar on a terminal; stdout keeps only the JSON.
      const cancelled = await runCliInProcess(
        ['--json', 'replays', 'cancel', ...destinationArgs, replayId, '--wait', '--poll-interval', '100'],
        { env: admin, stderrIsTTY: true },
      );
      expect(cancelled.code).toBe(0);
      const replay = cancelled.json();
      expect(replay).toMatchObject({
        state: 'CANCELLED',
        cancel_request_time: expect.any(String),
        finish_time: expect.any(String),
      });
      expect(replay.counts.delivered).toBeGreaterThanOrEqual(2);
      expect(replay.counts.delivered).toBeLessThan(messages.length);
      expect(cancelled.stderr).toMatch(/replay \[.*\] \d+% \| \d+\/\d+ settled \| CANCELLED \|/);
      // Only the deliveries in flight when it stopped may still arrive.
      const requestsAtEnd = slow.requests.length;
      await sleep(1_000);
      expect(slow.requests.length).toBeLessThanOrEqual(requestsAtEnd + 2);
      expect(slow.requests.length).toBeLessThan(messages.length);

      const shown = await cli(['replays', 'status', ...destinationArgs, replayId]);
      expect(shown.stdout).toMatch(/^state: +CANCELLED$/m);
      const again = await cli(['replays', 'cancel', ...destinationArgs, replayId]);
      expect(again).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(
          /is CANCELLED: only a running replay can be cancelled \(HTTP 400, code 3\)/,
        ),
      });
      const unknown = await cli(['replays', 'cancel', ...destinationArgs, 'rp_unknown']);
      expect(unknown).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/replay rp_unknown not found \(HTTP 404/),
      });
      const missingId = await cli(['replays', 'cancel', ...destinationArgs]);
      expect(missingId).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/missing required argument 'replay'/),
      });
    } finally {
      await slow.close();
    }
  }, 45_000);

  it('lists dead letters and redrives them once the destination accepts again', async () => {
    receiver.answer = () => 503;
    const message = trackMessage({ event: 'Dead Lettered' });
    await sendBatch(t, source, [message]);
    const { value: letters } = await pollUntil(
      'the message is dead-lettered',
      20_000,
      async () => {
        const run = await cli(['--json', 'dead-letters', 'list', ...at(), 'webhooks']);
        expect(run.code).toBe(0);
        const list = run.json();
        return list.some((letter: any) => letter.message_id === message.messageId) ? list : undefined;
      },
      250,
    );
    const letter = letters.find((entry: any) => entry.message_id === message.messageId);
    expect(letter).toMatchObject({
      reason: expect.stringMatching(/^retries exhausted after \d+ attempts: .*503/),
      message: { messageId: message.messageId, event: 'Dead Lettered' },
    });
    const table = await cli(['dead-letters', 'list', ...at(), 'webhooks']);
    expect(table.stdout.split('\n')[0]).toMatch(/^NUMBER +MESSAGE ID +DEAD-LETTERED +ATTEMPTS +REASON$/);
    expect(table.stdout).toMatch(
      new RegExp(`^\\d+ +${message.messageId} +\\S+ +\\d+ +retries exhausted`, 'm'),
    );

    receiver.answer = () => 200;
    const redrive = await cli(['dead-letters', 'redrive', ...at(), 'webhooks', '--json']);
    expect(redrive.code).toBe(0);
    expect(redrive.json()).toEqual({ redrive_id: expect.stringMatching(/^rd_/), state: 'RUNNING' });
    await pollUntil(
      'the dead letter is delivered and leaves the list',
      15_000,
      async () => {
        const run = await cli(['--json', 'dead-letters', 'list', ...at(), 'webhooks']);
        return run.json().some((entry: any) => entry.message_id === message.messageId) ? undefined : true;
      },
      250,
    );
    expect(receiver.acceptedOnce(message.messageId)).toBeDefined();

    const noDestination = await cli(['dead-letters', 'redrive', ...at(), 'nothing-here']);
    expect(noDestination).toMatchObject({ code: 2, stderr: expect.stringMatching(/HTTP 404/) });
    const readOnly = await cli(['dead-letters', 'list', ...at()]);
    expect(readOnly.code).toBe(1);
  }, 45_000);
});
