// POST /v1beta/workspaces/{ws}/functions/preview (docs/functions.md): code run once in the sandbox on a
// sample, over real HTTP against the all-in-one server and its real function runner: what each kind
// answers, the failures a function can have, the bad inputs refused 400 code 3, tenancy, the one
// preview at a time per workspace, and nothing stored.
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
  type WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { eventStoreOf, readAllEvents } from './support/config-api-e2e.kit';

const TRACK = JSON.stringify({
  type: 'track',
  event: 'Order Completed',
  userId: 'u1',
  messageId: 'm-1',
  properties: { total: 42.5, email: 'someone@example.com' },
});

const fn = (code: string, settings: unknown[] = []) => ({ code, buildpack: 'boreal', settings });

describe('POST /v1beta/workspaces/{ws}/functions/preview', () => {
  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;
  let other: WorkspaceAccess;
  const preview = (type: string, body: unknown, client = access.writer) =>
    client.post(`workspaces/${access.slug}/functions/preview?type=${type}`, body);

  beforeAll(async () => {
    instance = await startTributary({
      environment: { FUNCTION_TIMEOUT: '1s', CONFIG_API_RATE_LIMIT: '100000' },
    });
    const admin = new ConfigApiClient(instance);
    access = await createWorkspaceWithTokens(admin, 'fn-preview');
    other = await createWorkspaceWithTokens(admin, 'fn-preview-other');
  }, 60_000);

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it("runs a destination function's handler for the message's type, with the settings, and shows its logs", async () => {
    const answer = expectJsonSuccess(
      await preview('DESTINATION', {
        function: fn(
          `async function onTrack(event, settings) {
             console.log('track', event.event, { total: event.properties.total });
             console.warn('key is', settings.apiKey.length, 'long');
             return { sent: event.event, to: settings.endpoint, tags: settings.tags };
           }
           async function onIdentify() { throw new Error('not this one'); }`,
          [{ name: 'apiKey', label: 'API key', type: 'string', required: true, sensitive: true }],
        ),
        payload: TRACK,
        settings: { apiKey: 'k-123', endpoint: 'https://example.com/in', tags: ['a', 'b'] },
      }),
    );
    expect(answer).toEqual({
      invoke: { success: true, output: expect.any(String), error_reason: null },
      logs: [
        { message: 'track Order Completed {"total":42.5}', created_at: expect.any(String) },
        { message: 'key is 5 long', created_at: expect.any(String) },
      ],
      logs_truncated: false,
      session_id: expect.any(String),
    });
    expect(JSON.parse(answer.invoke.output)).toEqual({
      sent: 'Order Completed',
      to: 'https://example.com/in',
      tags: ['a', 'b'],
    });
    expect(Number.isNaN(Date.parse(answer.logs[0].created_at))).toBe(false);
  });

  it("answers an insert function's returned message, and null when it drops it", async () => {
    const code = `async function onTrack(event) {
      if (event.properties.total > 100) return;
      event.properties.email = '***';
      return event;
    }`;
    const changed = expectJsonSuccess(
      await preview('INSERT_DESTINATION', { function: fn(code), payload: TRACK, session_id: 'my-session' }),
    );
    expect(changed.invoke.success).toBe(true);
    expect(changed.session_id).toBe('my-session');
    expect(JSON.parse(changed.invoke.output)).toMatchObject({
      type: 'track',
      messageId: 'm-1',
      properties: { total: 42.5, email: '***' },
    });
    const dropped = expectJsonSuccess(
      await preview('INSERT_DESTINATION', {
        function: fn(code),
        payload: JSON.stringify({ ...JSON.parse(TRACK), properties: { total: 500 } }),
      }),
    );
    expect(dropped.invoke).toEqual({ success: true, output: 'null', error_reason: null });
  });

  it("answers a source function's emitted messages for a request body, ingesting none of them", async () => {
    const answer = expectJsonSuccess(
      await preview('SOURCE', {
        function: fn(`async function onRequest(request, settings) {
          const body = await request.json();
          Segment.identify({ userId: body.customer.id, traits: { email: body.customer.email } });
          Segment.track({ event: 'Order Placed', userId: body.customer.id, properties: { tag: settings.tag } });
        }`),
        payload: JSON.stringify({ id: 'o-1', customer: { id: 'c-9', email: 'c@example.com' } }),
        settings: { tag: 'shop' },
      }),
    );
    expect(answer.invoke.success).toBe(true);
    expect(JSON.parse(answer.invoke.output)).toEqual([
      expect.objectContaining({ type: 'identify', userId: 'c-9', traits: { email: 'c@example.com' } }),
      expect.objectContaining({ type: 'track', event: 'Order Placed', properties: { tag: 'shop' } }),
    ]);
  });

  it('tells each failure by the reason the router would record', async () => {
    const run = async (type: string, code: string, payload = TRACK) =>
      expectJsonSuccess(await preview(type, { function: fn(code), payload })).invoke;
    expect(
      await run(
        'DESTINATION',
        `async function onTrack() { throw new ValidationError('userId is required'); }`,
      ),
    ).toEqual({ success: false, output: 'null', error_reason: 'ValidationError: userId is required' });
    expect(
      await run('DESTINATION', `async function onTrack() { throw new RetryError('HTTP 503'); }`),
    ).toEqual({
      success: false,
      output: 'null',
      error_reason: 'RetryError: HTTP 503',
    });
    expect(
      await run('DESTINATION', `async function onTrack(event) { return event.nope.deeper; }`),
    ).toMatchObject({ success: false, error_reason: expect.stringMatching(/^TypeError: /) });
    expect(await run('DESTINATION', `async function onIdentify() {}`)).toEqual({
      success: false,
      output: 'null',
      error_reason: 'EventNotSupported: no onTrack handler',
    });
    expect(await run('INSERT_DESTINATION', `async function onIdentify(e) { return e; }`)).toMatchObject({
      success: false,
      error_reason: expect.stringMatching(/^insert_function: dropped/),
    });
    expect(
      await run(
        'SOURCE',
        `async function onRequest(request) { Segment.track({ event: (await request.json()).x.y }); }`,
        '{}',
      ),
    ).toMatchObject({ success: false, error_reason: expect.stringMatching(/^TypeError: /) });
    const started = Date.now();
    expect(await run('DESTINATION', `async function onTrack() { for (;;) {} }`)).toEqual({
      success: false,
      output: 'null',
      error_reason: 'function_timeout: exceeded 1000 ms',
    });
    expect(Date.now() - started).toBeLessThan(8_000);
    // The runner goes on after the timeout.
    expect(await run('DESTINATION', `async function onTrack() { return 'after'; }`)).toEqual({
      success: true,
      output: '"after"',
      error_reason: null,
    });
  }, 30_000);

  it('refuses code that does not compile or lacks its entry point, with 400 code 3 and the position', async () => {
    const syntax = await preview('DESTINATION', {
      function: fn('async function onTrack(event) {\n  return event.;\n}'),
      payload: TRACK,
    });
    expectConfigApiError(syntax, 400, 3);
    expect(syntax.body.error).toMatch(/line 2/);
    expectConfigApiError(
      await preview('SOURCE', { function: fn('async function onTrack() {}'), payload: '{}' }),
      400,
      3,
    );
    expectConfigApiError(
      await preview('DESTINATION', {
        function: fn("import x from 'y';\nasync function onTrack() {}"),
        payload: TRACK,
      }),
      400,
      3,
    );
  });

  it.each<[string, string, unknown]>([
    ['no type', '', { function: fn('async function onTrack() {}'), payload: TRACK }],
    ['an unknown type', 'INSERT_SOURCE', { function: fn('async function onTrack() {}'), payload: TRACK }],
    ['no body', 'DESTINATION', undefined],
    ['a body that is a list', 'DESTINATION', []],
    ['no code', 'DESTINATION', { function: {}, payload: TRACK }],
    ['blank code', 'DESTINATION', { function: fn('   '), payload: TRACK }],
    ['code that is not text', 'DESTINATION', { function: { code: 42 }, payload: TRACK }],
    [
      'settings declarations that are not a list',
      'DESTINATION',
      { function: { code: 'async function onTrack() {}', settings: {} }, payload: TRACK },
    ],
    ['no payload', 'DESTINATION', { function: fn('async function onTrack() {}') }],
    [
      'a payload that is not text',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: { type: 'track' } },
    ],
    [
      'a payload that is not JSON',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: '{"type":' },
    ],
    [
      'a source payload that is not JSON',
      'SOURCE',
      { function: fn('async function onRequest() {}'), payload: 'a=1&b=2' },
    ],
    [
      'a payload that is not an object',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: '[1]' },
    ],
    [
      'a message without a type',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: '{"event":"x"}' },
    ],
    [
      'a message of an unknown type',
      'INSERT_DESTINATION',
      { function: fn('async function onTrack() {}'), payload: '{"type":"constructor"}' },
    ],
    [
      'setting values that are not an object',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: TRACK, settings: ['a'] },
    ],
    [
      'a session id that is not text',
      'DESTINATION',
      { function: fn('async function onTrack() {}'), payload: TRACK, session_id: 7 },
    ],
  ])('refuses %s with 400 code 3', async (_case, type, body) => {
    const response =
      body === undefined
        ? await access.writer.request('POST', `workspaces/${access.slug}/functions/preview?type=${type}`)
        : await preview(type, body);
    expectConfigApiError(response, 400, 3);
  });

  it("needs a writing token of the URL's workspace", async () => {
    const body = { function: fn('async function onTrack() { return 1; }'), payload: TRACK };
    expectConfigApiError(await preview('DESTINATION', body, access.writer.as(null)), 401, 16);
    expectConfigApiError(await preview('DESTINATION', body, access.reader), 403, 7);
    expectConfigApiError(await preview('DESTINATION', body, other.writer), 404, 5);
    expectConfigApiError(
      await other.writer.post('workspaces/nowhere/functions/preview?type=DESTINATION', body),
      404,
      5,
    );
    expectJsonSuccess(
      await other.writer.post(`workspaces/${other.slug}/functions/preview?type=DESTINATION`, body),
    );
  });

  it('runs one preview at a time per workspace: another answers 429 meanwhile, another workspace is not held up', async () => {
    const slow = preview('DESTINATION', {
      function: fn('async function onTrack() { for (;;) {} }'),
      payload: TRACK,
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const meanwhile = await preview('DESTINATION', {
      function: fn('async function onTrack() { return 1; }'),
      payload: TRACK,
    });
    expectConfigApiError(meanwhile, 429, 8);
    expect(meanwhile.headers.get('retry-after')).toBe('1');
    const elsewhere = expectJsonSuccess(
      await other.writer.post(`workspaces/${other.slug}/functions/preview?type=DESTINATION`, {
        function: fn('async function onTrack() { return 2; }'),
        payload: TRACK,
      }),
    );
    expect(elsewhere.invoke).toMatchObject({ success: true, output: '2' });
    expect((await slow).body.invoke.error_reason).toMatch(/^function_timeout/);
    const after = expectJsonSuccess(
      await preview('DESTINATION', {
        function: fn('async function onTrack() { return 3; }'),
        payload: TRACK,
      }),
    );
    expect(after.invoke.output).toBe('3');
  }, 30_000);

  it('stores nothing: no config event records a preview', async () => {
    const events = await readAllEvents(eventStoreOf(instance));
    expect(events.filter((event) => /function/i.test(event.type))).toEqual([]);
  });
});
