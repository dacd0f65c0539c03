// OAuth against the real server: the workspace requires OAuth, so only a Bearer token from the real
// `/token` endpoint can get messages stored, and they are read back from the instance's event log. A
// recording proxy sits in front of the tracking API where a test needs to see the headers or to inject
// the one answer the real server will not give on demand (a 401 for a token that is still valid).
import { postJson, readSourceMessages } from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { Analytics, AnalyticsDeliveryError, type AnalyticsOptions } from '../src';
import { LeveledLogger } from '../src/leveled-logger';
import { OAuthAuthorization, SYSTEM_CLOCK } from '../src/oauth-authorization';
import { resolveOptions } from '../src/options';
import { errorRecorder, FAST, startRecordingProxy } from './client-e2e.kit';
import { createOAuthWorkspace, generateClientKey, type OAuthTestSetup } from './oauth-e2e.kit';

const UNAUTHORIZED = JSON.stringify({ success: false, code: 'unauthorized', message: 'no', error: 'no' });

function oauthOf(setup: OAuthTestSetup, overrides: Partial<NonNullable<AnalyticsOptions['oauth']>> = {}) {
  return { clientId: setup.clientId, clientKey: setup.key.privatePem, keyId: setup.keyId, ...overrides };
}

function bearerOf(headers: { authorization?: string }): string {
  const header = headers.authorization ?? '';
  expect(header).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  return header;
}

async function sendOne(analytics: Analytics, event: string): Promise<string> {
  const { messageId } = await analytics.track({ userId: 'u-oauth', event });
  await analytics.flush();
  return messageId;
}

describe('analytics-client OAuth against the real server', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('with oauth_required the write key alone is refused, and OAuth (auth server = the host) gets every message stored', async () => {
    const setup = await createOAuthWorkspace(t);

    const plain = errorRecorder();
    const withoutOAuth = new Analytics({
      writeKey: setup.source.writeKey,
      host: t.baseUrl,
      ...FAST,
      onError: plain.onError,
    });
    const refusedId = await sendOne(withoutOAuth, 'no token');
    await withoutOAuth.close();
    expect(plain.reports).toHaveLength(1);
    expect(plain.reports[0].error).toBeInstanceOf(AnalyticsDeliveryError);
    expect((plain.reports[0].error as AnalyticsDeliveryError).details).toMatchObject({
      failure: 'http_status',
      status: 401,
      serverCode: 'unauthorized',
    });

    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: setup.source.writeKey,
      host: t.baseUrl,
      ...FAST,
      onError,
      oauth: oauthOf(setup),
    });
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push((await analytics.identify({ userId: `u-${index}`, traits: { index } })).messageId);
    }
    await analytics.flush();
    ids.push(await sendOne(analytics, 'second batch, same token'));
    await analytics.close();

    expect(reports).toEqual([]);
    const stored = await readSourceMessages(t, setup.source);
    expect([...stored.keys()].sort()).toEqual([...ids].sort());
    expect(stored.has(refusedId)).toBe(false);
    expect(stored.get(ids[3])?.payload).toMatchObject({ type: 'track', event: 'second batch, same token' });
  });

  it('sends Bearer <token> and the write key in the body, and reuses one token for many batches', async () => {
    const setup = await createOAuthWorkspace(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: setup.source.writeKey,
      host: proxy.url,
      ...FAST,
      gzip: true,
      onError,
      oauth: oauthOf(setup, { authServer: `${t.baseUrl}/` }),
    });
    const ids = [
      await sendOne(analytics, 'one'),
      await sendOne(analytics, 'two'),
      await sendOne(analytics, 'three'),
    ];
    await analytics.close();
    await proxy.close();

    expect(reports).toEqual([]);
    expect(proxy.requests.map((request) => request.status)).toEqual([200, 200, 200]);
    const headers = proxy.requests.map((request) => bearerOf(request.headers));
    expect(new Set(headers).size).toBe(1);
    for (const body of proxy.bodies()) expect(body.writeKey).toBe(setup.source.writeKey);
    expect([...(await readSourceMessages(t, setup.source)).keys()].sort()).toEqual([...ids].sort());
  });

  it('a 401 from the tracking API drops the token: that batch goes to onError, the next one gets a new token and is stored', async () => {
    const setup = await createOAuthWorkspace(t);
    // The real server accepts the token throughout; the proxy plays a tracking API that refused it once.
    const proxy = await startRecordingProxy(t.baseUrl, (index) =>
      index === 1 ? { status: 401, body: UNAUTHORIZED } : { forward: true },
    );
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: setup.source.writeKey,
      host: proxy.url,
      ...FAST,
      onError,
      oauth: oauthOf(setup, { authServer: t.baseUrl }),
    });
    const first = await sendOne(analytics, 'before the 401');
    const refused = await sendOne(analytics, 'refused with 401');
    const after = await sendOne(analytics, 'after the 401');
    const later = await sendOne(analytics, 'later');
    await analytics.close();
    await proxy.close();

    expect(proxy.requests.map((request) => request.status)).toEqual([200, 401, 200, 200]);
    const [t1, t1again, t2, t2again] = proxy.requests.map((request) => bearerOf(request.headers));
    expect(t1again).toBe(t1);
    expect(t2).not.toBe(t1);
    // The new token is cached in turn.
    expect(t2again).toBe(t2);
    expect(reports).toHaveLength(1);
    expect(reports[0].batch.map((message) => message.messageId)).toEqual([refused]);
    expect((reports[0].error as AnalyticsDeliveryError).details).toMatchObject({
      failure: 'http_status',
      status: 401,
    });
    expect([...(await readSourceMessages(t, setup.source)).keys()].sort()).toEqual(
      [first, after, later].sort(),
    );
  });

  it('after its application is deleted, the token is refused (401) and dropped, and the token endpoint refuses a new one: onError names invalid_client', async () => {
    const setup = await createOAuthWorkspace(t);
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: setup.source.writeKey,
      host: t.baseUrl,
      ...FAST,
      onError,
      oauth: oauthOf(setup),
    });
    const stored = await sendOne(analytics, 'while the application exists');
    const deleted = await configApi(
      t,
      'DELETE',
      `workspaces/${setup.source.workspaceSlug}/oauth-applications/${setup.applicationId}`,
    );
    expect(deleted.status).toBe(200);
    await sendOne(analytics, 'old token');
    await sendOne(analytics, 'no new token');
    await analytics.close();

    expect(reports.map((report) => (report.error as AnalyticsDeliveryError).details)).toEqual([
      expect.objectContaining({ failure: 'http_status', status: 401, serverCode: 'unauthorized' }),
      expect.objectContaining({ failure: 'oauth', status: 401, oauthError: 'invalid_client', attempts: 0 }),
    ]);
    expect(reports[1].error.message).toMatch(/OAuth.*401 invalid_client/);
    expect([...(await readSourceMessages(t, setup.source)).keys()]).toEqual([stored]);
  });

  it.each([
    [
      'an unknown key id',
      (setup: OAuthTestSetup) => oauthOf(setup, { keyId: 'no-such-key' }),
      /unknown key id/,
    ],
    [
      'a key the application does not know',
      (setup: OAuthTestSetup) => oauthOf(setup, { clientKey: generateClientKey().privatePem }),
      /rejected/,
    ],
  ])(
    '%s: the token endpoint refuses it, the batch goes to onError with the OAuth error and is never sent',
    async (_case, oauth, description) => {
      const setup = await createOAuthWorkspace(t);
      const proxy = await startRecordingProxy(t.baseUrl);
      const { reports, onError } = errorRecorder();
      const analytics = new Analytics({
        writeKey: setup.source.writeKey,
        host: proxy.url,
        ...FAST,
        onError,
        oauth: { ...oauth(setup), authServer: t.baseUrl },
      });
      const ids = [
        (await analytics.track({ userId: 'u', event: 'a' })).messageId,
        (await analytics.track({ userId: 'u', event: 'b' })).messageId,
      ];
      const started = Date.now();
      await analytics.close();
      await proxy.close();

      // Not retried: a 401 from the token endpoint is final (FAST's backoff would still show as waits).
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(proxy.requests).toEqual([]);
      expect(reports).toHaveLength(1);
      const error = reports[0].error as AnalyticsDeliveryError;
      expect(error).toBeInstanceOf(AnalyticsDeliveryError);
      expect(error.code).toBe('delivery_failed');
      expect(error.details).toMatchObject({ failure: 'oauth', status: 401, oauthError: 'invalid_client' });
      expect(error.details.oauthErrorDescription).toMatch(description);
      expect(error.message).toContain(`${t.baseUrl}/token`);
      expect(reports[0].batch.map((message) => message.messageId)).toEqual(ids);
      expect((await readSourceMessages(t, setup.source)).size).toBe(0);
    },
  );

  it('syncMode: a call resolves delivered with a token, and rejects with the OAuth error without one', async () => {
    const setup = await createOAuthWorkspace(t);
    const good = new Analytics({
      writeKey: setup.source.writeKey,
      host: t.baseUrl,
      ...FAST,
      syncMode: true,
      oauth: oauthOf(setup),
    });
    const results = await Promise.all([
      good.track({ userId: 'u', event: 'sync 1' }),
      good.track({ userId: 'u', event: 'sync 2' }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['delivered', 'delivered']);
    await good.close();
    const bad = new Analytics({
      writeKey: setup.source.writeKey,
      host: t.baseUrl,
      ...FAST,
      syncMode: true,
      oauth: oauthOf(setup, { keyId: 'wrong' }),
    });
    await expect(bad.track({ userId: 'u', event: 'sync 3' })).rejects.toMatchObject({
      details: { failure: 'oauth', oauthError: 'invalid_client' },
    });
    await bad.close();
    const stored = await readSourceMessages(t, setup.source);
    expect([...stored.keys()].sort()).toEqual(results.map((result) => result.messageId).sort());
  });

  describe('token refresh at half lifetime (a moved monotonic clock; the real token endpoint)', () => {
    it('keeps the token until half its lifetime, then fetches a new one the tracking API accepts', async () => {
      // 60 s is the shortest lifetime the Config API allows; the clock is moved instead of waiting.
      const setup = await createOAuthWorkspace(t, { tokenLifetimeSeconds: 60 });
      let movedMs = 0;
      const clock = { wallMs: SYSTEM_CLOCK.wallMs, elapsedMs: () => SYSTEM_CLOCK.elapsedMs() + movedMs };
      const options = resolveOptions({
        writeKey: setup.source.writeKey,
        host: t.baseUrl,
        ...FAST,
        oauth: oauthOf(setup),
      });
      const authorization = new OAuthAuthorization(
        options.oauth!,
        options,
        new LeveledLogger(console, 'silent'),
        clock,
      );

      // Concurrent sends share one token request: each token the server issues is different.
      const concurrent = await Promise.all([1, 2, 3, 4, 5].map(() => authorization.authorizationHeader()));
      expect(new Set(concurrent).size).toBe(1);
      const first = concurrent[0];
      movedMs = 29_000;
      expect(await authorization.authorizationHeader()).toBe(first);
      movedMs = 30_500;
      const second = await authorization.authorizationHeader();
      expect(second).not.toBe(first);
      expect(await authorization.authorizationHeader()).toBe(second);

      // Both are real tokens: the tracking API (which requires OAuth here) takes each.
      for (const [index, header] of [first, second].entries()) {
        const response = await postJson(
          t,
          '/v1/track',
          {
            userId: 'u',
            event: `token ${index}`,
            messageId: `refresh-${index}-${setup.clientId}`,
            writeKey: setup.source.writeKey,
          },
          undefined,
          { authorization: header },
        );
        expect(response.status).toBe(200);
      }
      expect((await readSourceMessages(t, setup.source)).size).toBe(2);
    });
  });
});
