// The token endpoint's edge cases that the real server cannot produce on demand: a clock far from ours
// (told through the Date header), 5xx, 429 with Retry-After, a malformed success. A fake token endpoint
// plays them; the tracking host is a recording proxy that answers 200, so each test sees which token
// reached it. Everything the real server can do is tested against it in oauth.e2e-spec.ts.
import { Analytics, AnalyticsDeliveryError } from '../src';
import { errorRecorder, FAST, startRecordingProxy, type RecordingProxy } from './client-e2e.kit';
import {
  generateClientKey,
  startFakeTokenEndpoint,
  tokenError,
  tokenGranted,
  type FakeTokenAnswer,
  type FakeTokenEndpoint,
  type FakeTokenRequest,
} from './oauth-e2e.kit';

const key = generateClientKey();
const TEN_MINUTES = 10 * 60_000;

describe('analytics-client OAuth: token endpoint edge cases (a fake token endpoint)', () => {
  let tracking: RecordingProxy;
  let endpoint: FakeTokenEndpoint | undefined;

  beforeEach(async () => {
    tracking = await startRecordingProxy(undefined, () => ({ status: 200, body: '{"success":true}' }));
  });

  afterEach(async () => {
    await tracking.close();
    await endpoint?.close();
    endpoint = undefined;
  });

  async function run(
    answer: (request: FakeTokenRequest) => FakeTokenAnswer,
    options: { skewMs?: number; maxRetries?: number; events?: number } = {},
  ) {
    endpoint = await startFakeTokenEndpoint(key.publicPem, answer, { skewMs: options.skewMs });
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: 'wk-fake',
      host: tracking.url,
      ...FAST,
      maxRetries: options.maxRetries ?? 10,
      onError,
      oauth: { clientId: 'client-1', clientKey: key.privatePem, keyId: 'key-1', authServer: endpoint.url },
    });
    const ids: string[] = [];
    for (let index = 0; index < (options.events ?? 1); index += 1) {
      ids.push((await analytics.track({ userId: 'u', event: `e${index}` })).messageId);
      await analytics.flush();
    }
    await analytics.close();
    return { reports, ids, requests: endpoint.requests };
  }

  /** Whether an assertion is valid by the fake server's clock, with the real server's 5 s leeway. */
  function validAtServer(request: FakeTokenRequest): boolean {
    const now = request.serverNowMs / 1000;
    const { iat, exp } = request.assertionClaims;
    return request.signatureValid && exp > now - 5 && iat <= now + 5;
  }

  it('sends the form and assertion of docs/tracking-api.md §11.2/§11.3, then uses the token with the write key in the body', async () => {
    const { reports, requests } = await run(() => tokenGranted('tok-1'));
    expect(reports).toEqual([]);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request.url).toBe('/token');
    expect(request.contentType).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(request.form)).toEqual({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: expect.any(String),
      scope: 'tracking_api:write',
    });
    expect(request.signatureValid).toBe(true);
    expect(request.assertionHeader).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' });
    expect(request.assertionClaims).toMatchObject({ iss: 'client-1', sub: 'client-1', aud: endpoint!.url });
    expect(request.assertionClaims.exp - request.assertionClaims.iat).toBe(60);
    expect(tracking.requests.map((sent) => sent.headers.authorization)).toEqual(['Bearer tok-1']);
    expect(tracking.bodies()[0].writeKey).toBe('wk-fake');
  });

  it.each([
    ['ahead: our assertion looks expired', TEN_MINUTES, 'Token is expired'],
    ['behind: our assertion looks issued in the future', -TEN_MINUTES, 'Token used before issued'],
  ])(
    'the server clock is 10 minutes %s: the client learns the skew from the Date header and asks once more at once',
    async (_case, skewMs, description) => {
      const { reports, requests } = await run(
        (request) =>
          validAtServer(request)
            ? tokenGranted('tok-after-skew')
            : tokenError(400, 'invalid_request', description),
        { skewMs, events: 2 },
      );
      expect(reports).toEqual([]);
      expect(requests.map(validAtServer)).toEqual([false, true]);
      // "At once": no backoff between the two.
      expect(requests[1].receivedAt - requests[0].receivedAt).toBeLessThan(500);
      expect(requests[1].assertionClaims.jti).not.toBe(requests[0].assertionClaims.jti);
      // The learned skew sticks: the token was cached, and both batches used it.
      expect(tracking.requests.map((sent) => sent.headers.authorization)).toEqual([
        'Bearer tok-after-skew',
        'Bearer tok-after-skew',
      ]);
    },
  );

  it('asks again only once: a second "Token is expired" gives the batch up with the OAuth error', async () => {
    const { reports, requests, ids } = await run(() =>
      tokenError(400, 'invalid_request', 'Token is expired'),
    );
    expect(requests).toHaveLength(2);
    expect(tracking.requests).toEqual([]);
    expect(reports).toHaveLength(1);
    expect(reports[0].batch.map((message) => message.messageId)).toEqual(ids);
    const error = reports[0].error as AnalyticsDeliveryError;
    expect(error.details).toMatchObject({
      failure: 'oauth',
      status: 400,
      oauthError: 'invalid_request',
      oauthErrorDescription: 'Token is expired',
    });
  });

  it('a 400 of another kind is final at once (invalid_scope)', async () => {
    const { reports, requests } = await run(() => tokenError(400, 'invalid_scope', 'no such scope'));
    expect(requests).toHaveLength(1);
    expect((reports[0].error as AnalyticsDeliveryError).details).toMatchObject({
      failure: 'oauth',
      oauthError: 'invalid_scope',
    });
  });

  it('5xx is retried with backoff until the endpoint recovers', async () => {
    const { reports, requests } = await run((request) =>
      request.index < 2 ? tokenError(503, 'server_error', 'busy') : tokenGranted('tok-after-503'),
    );
    expect(reports).toEqual([]);
    expect(requests).toHaveLength(3);
    // FAST's backoff: the first wait is at least half of 10 ms.
    expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(5);
    expect(tracking.requests.map((sent) => sent.headers.authorization)).toEqual(['Bearer tok-after-503']);
  });

  it('5xx for good: maxRetries retries, then the batch goes to onError', async () => {
    const { reports, requests } = await run(() => tokenError(500, 'server_error', 'broken'), {
      maxRetries: 2,
    });
    expect(requests).toHaveLength(3);
    expect(tracking.requests).toEqual([]);
    const error = reports[0].error as AnalyticsDeliveryError;
    expect(error.details).toMatchObject({ failure: 'oauth', status: 500, oauthError: 'server_error' });
    expect(error.message).toContain('gave up after 3 attempt(s)');
  });

  it('a token endpoint that does not answer at all (connection refused): retried, then onError names the network failure', async () => {
    const closed = await startFakeTokenEndpoint(key.publicPem, () => tokenGranted('never'));
    await closed.close();
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: 'wk-fake',
      host: tracking.url,
      ...FAST,
      maxRetries: 2,
      onError,
      oauth: { clientId: 'client-1', clientKey: key.privatePem, keyId: 'key-1', authServer: closed.url },
    });
    await analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    expect(tracking.requests).toEqual([]);
    expect(reports).toHaveLength(1);
    const error = reports[0].error as AnalyticsDeliveryError;
    expect(error.details.failure).toBe('oauth');
    expect(error.details.status).toBeUndefined();
    expect(String(error.details.cause)).toMatch(/fetch failed/);
    expect(error.message).toMatch(
      new RegExp(`gave up after 3 attempt\\(s\\): OAuth token request to ${closed.url}/token failed`),
    );
  });

  it('429 waits Retry-After seconds before asking again', async () => {
    const { reports, requests } = await run((request) =>
      request.index === 0
        ? tokenError(429, 'slow_down', 'too many', { 'retry-after': '1', 'x-ratelimit-reset': '1' })
        : tokenGranted('tok-after-429'),
    );
    expect(reports).toEqual([]);
    expect(requests).toHaveLength(2);
    expect(requests[1].receivedAt - requests[0].receivedAt).toBeGreaterThanOrEqual(950);
    expect(tracking.requests.map((sent) => sent.headers.authorization)).toEqual(['Bearer tok-after-429']);
  });

  it.each([
    ['expires_in as a string', { access_token: 'x', token_type: 'Bearer', expires_in: '3600' }, /expires_in/],
    ['no access_token', { token_type: 'Bearer', expires_in: 3600 }, /access_token/],
    ['a token type other than Bearer', { access_token: 'x', token_type: 'MAC', expires_in: 3600 }, /Bearer/],
    ['a body that is not JSON', '<html>ok</html>', /access_token/],
  ])(
    'a 200 with %s is unusable: the batch goes to onError, nothing is sent',
    async (_case, body, message) => {
      const { reports, requests } = await run(() => ({ status: 200, body }));
      expect(requests).toHaveLength(1);
      expect(tracking.requests).toEqual([]);
      const error = reports[0].error as AnalyticsDeliveryError;
      expect(error.details).toMatchObject({ failure: 'oauth', status: 200 });
      expect(error.message).toMatch(message);
    },
  );

  it.each([400, 401, 403])(
    'a %i from the tracking API drops the token; the next batch fetches a new one',
    async (status) => {
      await tracking.close();
      tracking = await startRecordingProxy(undefined, (index) =>
        index === 0
          ? { status, body: '{"success":false,"code":"x","message":"x","error":"x"}' }
          : { status: 200, body: '{"success":true}' },
      );
      const { reports, requests } = await run((request) => tokenGranted(`tok-${request.index}`), {
        events: 3,
      });
      expect(requests).toHaveLength(2);
      expect(tracking.requests.map((sent) => [sent.headers.authorization, sent.status])).toEqual([
        ['Bearer tok-0', status],
        ['Bearer tok-1', 200],
        ['Bearer tok-1', 200],
      ]);
      expect(reports).toHaveLength(1);
    },
  );

  it('a 503 from the tracking API keeps the token (only 400/401/403 drop it)', async () => {
    await tracking.close();
    tracking = await startRecordingProxy(undefined, (index) =>
      index === 0 ? { status: 503, body: '{}' } : { status: 200, body: '{"success":true}' },
    );
    const { reports, requests } = await run(() => tokenGranted('tok-kept'));
    expect(reports).toEqual([]);
    expect(requests).toHaveLength(1);
    expect(tracking.requests.map((sent) => sent.headers.authorization)).toEqual([
      'Bearer tok-kept',
      'Bearer tok-kept',
    ]);
  });
});
