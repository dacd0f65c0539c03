// OAuth 2.0 end to end over loopback HTTP: POST /token with signed client assertions (docs/tracking-api.md §11.1–11.5),
// then bearer tokens on the tracking API (§4.3, §11.6), with the messages read back from the event log.
import { ACCESS_TOKEN_KEY_PURPOSE, issueAccessToken, SecretBox } from '@tributary/auth';
import { randomUUID } from 'node:crypto';
import { ConfigApiClient } from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  accessTokenFor,
  createOAuthApplication,
  postToken,
  rsaKeyPair,
  setOAuthRequired,
  signAssertion,
  TestOAuthApplication,
  tokenForm,
  TokenResponse,
  TRACKING_SCOPE,
} from './oauth-e2e.kit';
import {
  createSource,
  createWorkspace,
  expectErrorBody,
  postJson,
  readSourceMessages,
  sleep,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

/** RFC 7231 IMF-fixdate, the only form clients may parse to learn their clock skew. */
const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;

function expectOAuthError(
  response: TokenResponse,
  status: number,
  error: string,
  description?: string | RegExp,
): void {
  expect({ status: response.status, error: response.body?.error }).toEqual({ status, error });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  // Both keys, both strings: a JSON body without either leaves Python's poller spinning (docs/tracking-api.md §11.5).
  expect(Object.keys(response.body).sort()).toEqual(['error', 'error_description']);
  expect(typeof response.body.error_description).toBe('string');
  expect(response.body.error_description.length).toBeGreaterThan(0);
  if (typeof description === 'string') expect(response.body.error_description).toBe(description);
  if (description instanceof RegExp) expect(response.body.error_description).toMatch(description);
}

describe('OAuth: POST /token and bearer tokens on the tracking API', () => {
  let t: TributaryTestInstance;
  let workspace: { slug: string; id: string };
  let source: TestSource;
  const signingKey = rsaKeyPair('signing-key');
  const otherKey = rsaKeyPair('other-key');

  /**
   * The token endpoint allows 20 requests per second per client, so each test gets a fresh
   * application (same keys) and bursts in one test cannot throttle the next.
   */
  async function freshApplication(keys = [signingKey], lifetime = 3600): Promise<TestOAuthApplication> {
    return createOAuthApplication(t, workspace.slug, keys, lifetime);
  }

  const assertionFor = (application: TestOAuthApplication, claims?: Record<string, unknown>) =>
    signAssertion({ clientId: application.clientId, key: application.key, aud: t.baseUrl, claims });

  beforeAll(async () => {
    t = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    workspace = await createWorkspace(t);
    source = await createSource(t, workspace);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  describe('POST /token', () => {
    it('issues a bearer token for a valid client assertion, with a JSON-number expires_in and an RFC 7231 Date', async () => {
      const application = await freshApplication();
      const response = await postToken(t, tokenForm(await assertionFor(application)));

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: TRACKING_SCOPE,
      });
      expect(typeof response.body.expires_in).toBe('number');
      expect(response.body.access_token.length).toBeGreaterThan(20);
      const date = response.headers.get('date');
      expect(date).toMatch(IMF_FIXDATE);
      expect(Math.abs(Date.parse(date!) - Date.now())).toBeLessThan(5_000);
    });

    it("answers expires_in with the application's configured token lifetime", async () => {
      const application = await freshApplication([signingKey], 7200);
      const response = await postToken(t, tokenForm(await assertionFor(application)));
      expect(response.status).toBe(200);
      expect(response.body.expires_in).toBe(7200);
    });

    it.each<[string, (application: TestOAuthApplication, baseUrl: string) => Record<string, unknown>]>([
      ['fractional iat and exp', () => ({ iat: Date.now() / 1000 - 5.25, exp: Date.now() / 1000 + 54.75 })],
      [
        'aud with a trailing slash (Node keeps the configured one)',
        (_app, baseUrl) => ({ aud: `${baseUrl}/` }),
      ],
      ['iss = the auth-server URL', (_app, baseUrl) => ({ iss: baseUrl })],
      ['no iss', () => ({ iss: undefined })],
    ])('accepts an assertion with %s', async (_label, claims) => {
      const application = await freshApplication();
      const response = await postToken(
        t,
        tokenForm(await assertionFor(application, claims(application, t.baseUrl))),
      );
      expect(response.status).toBe(200);
      expect(response.body.token_type).toBe('Bearer');
    });

    it('answers on //token, where Node asks when its auth server ends with a slash', async () => {
      const application = await freshApplication();
      const assertion = await signAssertion({
        clientId: application.clientId,
        key: application.key,
        aud: `${t.baseUrl}/`,
      });
      const response = await postToken(t, tokenForm(assertion), { path: '//token' });
      expect(response.status).toBe(200);
      expect(response.body.token_type).toBe('Bearer');
    });

    it('grants tracking_api:write when the request names no scope', async () => {
      const application = await freshApplication();
      const response = await postToken(t, tokenForm(await assertionFor(application), { scope: undefined }));
      expect(response.status).toBe(200);
      expect(response.body.scope).toBe(TRACKING_SCOPE);
    });

    it('verifies with any of the registered keys, named by kid', async () => {
      const application = await freshApplication([signingKey, otherKey]);
      const assertion = await signAssertion({
        clientId: application.clientId,
        key: otherKey,
        aud: t.baseUrl,
      });
      expect((await postToken(t, tokenForm(assertion))).status).toBe(200);
    });

    it('refuses an expired assertion: 400 invalid_request "Token is expired"', async () => {
      const application = await freshApplication();
      const nowSeconds = Math.floor(Date.now() / 1000);
      const assertion = await assertionFor(application, { iat: nowSeconds - 120, exp: nowSeconds - 60 });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 400, 'invalid_request', 'Token is expired');
    });

    it('refuses an iat in the future: 400 invalid_request "Token used before issued"', async () => {
      const application = await freshApplication();
      const nowSeconds = Math.floor(Date.now() / 1000);
      const assertion = await assertionFor(application, { iat: nowSeconds + 60, exp: nowSeconds + 120 });
      expectOAuthError(
        await postToken(t, tokenForm(assertion)),
        400,
        'invalid_request',
        'Token used before issued',
      );
    });

    it('refuses an unknown key id: 401 invalid_client', async () => {
      const application = await freshApplication();
      const assertion = await signAssertion({
        clientId: application.clientId,
        key: { keyId: 'not-registered', privateKey: signingKey.privateKey },
        aud: t.baseUrl,
      });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client');
    });

    it("refuses a signature by another key than the kid's: 401 invalid_client", async () => {
      const application = await freshApplication();
      const assertion = await signAssertion({
        clientId: application.clientId,
        key: { keyId: signingKey.keyId, privateKey: otherKey.privateKey },
        aud: t.baseUrl,
      });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client');
    });

    it('refuses an unknown client (sub): 401 invalid_client', async () => {
      const application = await freshApplication();
      const assertion = await assertionFor(application, { sub: 'no-such-client', iss: 'no-such-client' });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client');
    });

    it("refuses a sub naming another client than the key's owner: 401 invalid_client", async () => {
      const owner = await freshApplication([signingKey]);
      const other = await freshApplication([otherKey]);
      // Signed correctly with the owner's key and kid, but claiming to be the other client.
      const assertion = await signAssertion({ clientId: other.clientId, key: owner.key, aud: t.baseUrl });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client');
    });

    it('refuses an assertion for another audience: 401 invalid_client', async () => {
      const application = await freshApplication();
      const assertion = await assertionFor(application, { aud: 'https://oauth2.segment.io' });
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client');
    });

    it('refuses a reused jti: 401 invalid_client', async () => {
      const application = await freshApplication();
      const assertion = await assertionFor(application);
      expect((await postToken(t, tokenForm(assertion))).status).toBe(200);
      expectOAuthError(await postToken(t, tokenForm(assertion)), 401, 'invalid_client', /jti/);
      // A fresh assertion still works: only the replay was refused.
      expect((await postToken(t, tokenForm(await assertionFor(application)))).status).toBe(200);
    });

    it.each<[string, (nowSeconds: number) => Record<string, unknown>]>([
      ['no iat', () => ({ iat: undefined })],
      [
        'a lifetime (exp - iat) over 300 s',
        (now) => ({ iat: Math.round(now) - 5, exp: Math.round(now) + 297 }),
      ],
      ['a lifetime of a day', (now) => ({ iat: Math.round(now), exp: Math.round(now) + 86_400 })],
      ['a jti over 256 characters', () => ({ jti: 'j'.repeat(257) })],
    ])('refuses an assertion with %s: 400 invalid_request, nothing remembered', async (_label, claims) => {
      const application = await freshApplication();
      const assertion = await assertionFor(application, claims(Date.now() / 1000));
      expectOAuthError(await postToken(t, tokenForm(assertion)), 400, 'invalid_request');
      // Within the limits, the same client gets a token.
      const within = await assertionFor(application, { jti: 'j'.repeat(256) });
      expect((await postToken(t, tokenForm(within))).status).toBe(200);
    });

    it("counts the client's rate before storing a jti: an assertion refused 429 is accepted after the wait", async () => {
      const application = await freshApplication();
      const forms = await Promise.all(
        Array.from({ length: 30 }, async () => tokenForm(await assertionFor(application))),
      );
      const responses = await Promise.all(forms.map((form) => postToken(t, form)));
      const throttledIndex = responses.findIndex((response) => response.status === 429);
      expect(throttledIndex).toBeGreaterThanOrEqual(0);
      await sleep(Number(responses[throttledIndex].headers.get('retry-after')) * 1000 + 100);
      // Its jti was never stored, so the very same assertion is not a replay.
      const retried = await postToken(t, forms[throttledIndex]);
      expect({ status: retried.status, body: retried.body?.error }).toEqual({ status: 200, body: undefined });
      // And now it is stored: once more is a replay.
      expectOAuthError(await postToken(t, forms[throttledIndex]), 401, 'invalid_client', /jti/);
    });

    it('refuses a grant_type other than client_credentials: 400 unsupported_grant_type', async () => {
      const application = await freshApplication();
      const form = tokenForm(await assertionFor(application), { grant_type: 'password' });
      expectOAuthError(await postToken(t, form), 400, 'unsupported_grant_type');
    });

    it.each(['tracking_api:read', 'tracking_api:write admin', 'workspace'])(
      'refuses the scope %j: 400 invalid_scope',
      async (scope) => {
        const application = await freshApplication();
        const form = tokenForm(await assertionFor(application), { scope: encodeURIComponent(scope) });
        expectOAuthError(await postToken(t, form), 400, 'invalid_scope');
      },
    );

    it.each<[string, Record<string, string | undefined>]>([
      ['no grant_type', { grant_type: undefined }],
      ['no client_assertion_type', { client_assertion_type: undefined }],
      [
        'a wrong client_assertion_type',
        { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' },
      ],
      ['no client_assertion', { client_assertion: undefined }],
      ['an empty client_assertion', { client_assertion: '' }],
      ['a client_assertion that is not a JWT', { client_assertion: 'not-a-jwt' }],
    ])('refuses a form with %s: 400 invalid_request', async (_label, overrides) => {
      const application = await freshApplication();
      const response = await postToken(t, tokenForm(await assertionFor(application), overrides));
      expectOAuthError(response, 400, 'invalid_request');
    });

    it('refuses an empty body: 400 invalid_request', async () => {
      expectOAuthError(await postToken(t, ''), 400, 'invalid_request');
    });

    it.each([
      ['application/json', 'application/json'],
      ['text/plain (no Content-Type given)', null],
      ['multipart/form-data', 'multipart/form-data; boundary=x'],
    ])('refuses Content-Type %s: 415 with an OAuth error body', async (_label, contentType) => {
      const application = await freshApplication();
      const form = tokenForm(await assertionFor(application));
      const body =
        contentType === 'application/json'
          ? JSON.stringify(Object.fromEntries(new URLSearchParams(form)))
          : form;
      expectOAuthError(await postToken(t, body, { contentType }), 415, 'invalid_request');
    });

    // Found by the fuzz suite (issue 6): Fastify refuses these before the route's filter runs, and
    // they used to leave in the tracking API's error body, which Python's token poller cannot read.
    it.each(['not a media type', 'application/', ';charset=utf-8', '\u00b9R'])(
      'refuses a Content-Type Fastify cannot parse (%j) with an OAuth error body',
      async (contentType) => {
        const response = await postToken(t, 'grant_type=client_credentials', { contentType });
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expectOAuthError(response, response.status, 'invalid_request');
      },
    );

    it('answers another method on /token with 404 and an OAuth error body', async () => {
      const response = await fetch(`${t.baseUrl}//token/`, { method: 'GET' });
      const body = await response.json();
      expect({ status: response.status, body }).toEqual({
        status: 404,
        body: { error: 'invalid_request', error_description: expect.stringMatching(/GET/) },
      });
    });

    it('throttles a burst over 20 requests per second per client: 429 with Retry-After and X-RateLimit-Reset in seconds', async () => {
      const application = await freshApplication();
      const forms = await Promise.all(
        Array.from({ length: 40 }, async () => tokenForm(await assertionFor(application))),
      );
      const responses = await Promise.all(forms.map((form) => postToken(t, form)));

      const statuses = responses.map((response) => response.status);
      expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
      const granted = statuses.filter((status) => status === 200).length;
      // The first 20 of a window pass; the burst may straddle two windows, so more may pass, never all.
      expect(granted).toBeGreaterThanOrEqual(20);
      const throttled = responses.filter((response) => response.status === 429);
      expect(throttled.length).toBeGreaterThan(0);
      for (const response of throttled) {
        expectOAuthError(response, 429, response.body.error);
        const retryAfter = response.headers.get('retry-after');
        const reset = response.headers.get('x-ratelimit-reset');
        expect(retryAfter).toMatch(/^\d+$/);
        expect(reset).toBe(retryAfter);
        // Seconds, small: Python sleeps X-RateLimit-Reset seconds, an epoch would make it sleep for decades.
        expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(retryAfter)).toBeLessThanOrEqual(5);
      }
      // Another client is not throttled by this one's burst.
      const neighbour = await freshApplication();
      expect((await postToken(t, tokenForm(await assertionFor(neighbour)))).status).toBe(200);
      // After the advertised wait, the throttled client gets tokens again.
      await sleep(Number(throttled[0].headers.get('retry-after')) * 1000 + 100);
      expect((await postToken(t, tokenForm(await assertionFor(application)))).status).toBe(200);
    });
  });

  describe('bearer tokens on the tracking API', () => {
    const bearerBatch = (token: string, writeKey: string | undefined, messageIds: string[]) =>
      postJson(
        t,
        '/v1/batch',
        {
          ...(writeKey !== undefined && { writeKey }),
          batch: messageIds.map((messageId) => ({
            type: 'track',
            event: 'OAuth Tested',
            userId: 'user-oauth',
            messageId,
          })),
        },
        undefined,
        { authorization: `Bearer ${token}` },
      );

    it('accepts Authorization: Bearer with the write key in the body, and stores the messages', async () => {
      const token = await accessTokenFor(t, await freshApplication());
      const messageIds = [`oauth-${randomUUID()}`, `oauth-${randomUUID()}`];
      const response = await bearerBatch(token, source.writeKey, messageIds);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });

      const single = await postJson(
        t,
        '/v1/track',
        {
          writeKey: source.writeKey,
          event: 'OAuth Single',
          userId: 'user-oauth',
          messageId: `oauth-single-${randomUUID()}`,
        },
        undefined,
        { authorization: `Bearer ${token}` },
      );
      expect(single.status).toBe(200);

      const stored = await readSourceMessages(t, source);
      for (const messageId of messageIds) {
        expect(stored.get(messageId)?.payload).toMatchObject({
          type: 'track',
          event: 'OAuth Tested',
          userId: 'user-oauth',
        });
        expect(stored.get(messageId)?.workspaceId).toBe(workspace.id);
      }
      expect([...stored.values()].some((message) => message.payload.event === 'OAuth Single')).toBe(true);
    });

    it('refuses a Bearer token without a writeKey in the body: 401 invalid_write_key', async () => {
      const token = await accessTokenFor(t, await freshApplication());
      expectErrorBody(
        await bearerBatch(token, undefined, [`oauth-${randomUUID()}`]),
        401,
        'invalid_write_key',
      );
    });

    it("refuses a token of another workspace's application: 401 unauthorized, nothing stored", async () => {
      const otherWorkspace = await createWorkspace(t);
      const foreign = await createOAuthApplication(t, otherWorkspace.slug, [signingKey]);
      const token = await accessTokenFor(t, foreign);
      const messageId = `foreign-${randomUUID()}`;
      const response = await bearerBatch(token, source.writeKey, [messageId]);
      expectErrorBody(response, 401, 'unauthorized');
      expect(response.body.message).toMatch(/another workspace/);
      expect((await readSourceMessages(t, source)).has(messageId)).toBe(false);
    });

    it.each([
      ['garbage', () => Promise.resolve('garbage')],
      ['a client assertion instead of an access token', async () => assertionFor(await freshApplication())],
    ])('refuses %s as the bearer token: 401 unauthorized', async (_label, makeToken) => {
      const response = await bearerBatch(await makeToken(), source.writeKey, [`bad-token-${randomUUID()}`]);
      expectErrorBody(response, 401, 'unauthorized');
    });

    it("refuses an expired token, even one signed with the deployment's own key: 401 unauthorized", async () => {
      const application = await freshApplication();
      const signing = t.app.get(SecretBox).deriveKey(ACCESS_TOKEN_KEY_PURPOSE);
      const claims = {
        workspaceSlug: workspace.slug,
        applicationId: application.applicationId,
        clientId: application.clientId,
        scope: TRACKING_SCOPE,
      };
      const issuedTwoHoursAgo = new Date(Date.now() - 2 * 3600_000);
      const expired = await issueAccessToken(claims, 3600, signing, issuedTwoHoursAgo);
      expectErrorBody(
        await bearerBatch(expired, source.writeKey, [`expired-${randomUUID()}`]),
        401,
        'unauthorized',
      );
      // The same claims, unexpired, pass: the refusal is about expiry alone.
      const live = await issueAccessToken(claims, 3600, signing);
      expect((await bearerBatch(live, source.writeKey, [`live-${randomUUID()}`])).status).toBe(200);
      // And a token lacking the tracking scope is refused.
      const unscoped = await issueAccessToken({ ...claims, scope: 'profiles:read' }, 3600, signing);
      expectErrorBody(
        await bearerBatch(unscoped, source.writeKey, [`unscoped-${randomUUID()}`]),
        401,
        'unauthorized',
      );
    });

    it('refuses a token whose application was deleted: 401 unauthorized', async () => {
      const application = await freshApplication();
      const token = await accessTokenFor(t, application);
      expect((await bearerBatch(token, source.writeKey, [`before-delete-${randomUUID()}`])).status).toBe(200);
      const deleted = await new ConfigApiClient(t).request(
        'DELETE',
        `workspaces/${workspace.slug}/oauth-applications/${application.applicationId}`,
      );
      expect(deleted.status).toBe(200);
      expectErrorBody(
        await bearerBatch(token, source.writeKey, [`after-delete-${randomUUID()}`]),
        401,
        'unauthorized',
      );
      // And the deleted application can no longer get tokens.
      const response = await postToken(t, tokenForm(await assertionFor(application)));
      expect({ status: response.status, error: response.body?.error }).toEqual({
        status: 401,
        error: 'invalid_client',
      });
    });

    it('with oauth_required, refuses a bare write key (Basic or body) and accepts a bearer token; switched off, accepts it again', async () => {
      const guardedWorkspace = await createWorkspace(t);
      const guardedSource = await createSource(t, guardedWorkspace);
      const application = await createOAuthApplication(t, guardedWorkspace.slug, [signingKey]);
      const message = (messageId: string) => ({
        type: 'track',
        event: 'Guarded',
        userId: 'user-guarded',
        messageId,
      });

      const switchedOn = await setOAuthRequired(t, guardedWorkspace.slug, true);
      expect(switchedOn.status).toBe(200);
      expect(switchedOn.body.oauth_required).toBe(true);

      const refusedIds = [`basic-${randomUUID()}`, `body-${randomUUID()}`];
      const basic = await postJson(
        t,
        '/v1/batch',
        { batch: [message(refusedIds[0])] },
        guardedSource.writeKey,
      );
      expectErrorBody(basic, 401, 'unauthorized');
      expect(basic.body.message).toMatch(/requires OAuth/);
      expect(basic.body.message).toMatch(/Bearer/);
      const body = await postJson(t, '/v1/batch', {
        writeKey: guardedSource.writeKey,
        batch: [message(refusedIds[1])],
      });
      expectErrorBody(body, 401, 'unauthorized');
      expect(body.body.message).toMatch(/requires OAuth/);

      const token = await accessTokenFor(t, application);
      const acceptedId = `bearer-${randomUUID()}`;
      const bearer = await postJson(
        t,
        '/v1/batch',
        { writeKey: guardedSource.writeKey, batch: [message(acceptedId)] },
        undefined,
        {
          authorization: `Bearer ${token}`,
        },
      );
      expect(bearer.status).toBe(200);

      const switchedOff = await setOAuthRequired(t, guardedWorkspace.slug, false);
      expect(switchedOff.status).toBe(200);
      expect(switchedOff.body.oauth_required).toBe(false);
      const againId = `basic-again-${randomUUID()}`;
      const basicAgain = await postJson(
        t,
        '/v1/batch',
        { batch: [message(againId)] },
        guardedSource.writeKey,
      );
      expect(basicAgain.status).toBe(200);

      const stored = await readSourceMessages(t, guardedSource);
      expect([...stored.keys()].sort()).toEqual([acceptedId, againId].sort());
      for (const refused of refusedIds) expect(stored.has(refused)).toBe(false);
    });

    it('refuses a valid token next to an unknown write key in the body: 401 invalid_write_key', async () => {
      const token = await accessTokenFor(t, await freshApplication());
      const response = await postJson(
        t,
        '/v1/batch',
        { writeKey: 'no-such-key', batch: [{ type: 'track', event: 'x', userId: 'u' }] },
        undefined,
        {
          authorization: `Bearer ${token}`,
        },
      );
      expectErrorBody(response, 401, 'invalid_write_key');
    });
  });
});

describe('OAuth behind a TLS-terminating proxy: OAUTH_AUDIENCES', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary({
      environment: { OAUTH_AUDIENCES: 'https://oauth.tributary.example/, https://eu.tributary.example' },
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('accepts the configured public URLs as aud, with or without a trailing slash, and still the direct address', async () => {
    const workspace = await createWorkspace(t);
    const application = await createOAuthApplication(t, workspace.slug);
    for (const aud of [
      'https://oauth.tributary.example',
      'https://oauth.tributary.example/',
      'https://eu.tributary.example/',
      t.baseUrl,
    ]) {
      const assertion = await signAssertion({ clientId: application.clientId, key: application.key, aud });
      expect({ aud, status: (await postToken(t, tokenForm(assertion))).status }).toEqual({
        aud,
        status: 200,
      });
    }
    const elsewhere = await signAssertion({
      clientId: application.clientId,
      key: application.key,
      aud: 'https://oauth2.segment.io',
    });
    expectOAuthError(await postToken(t, tokenForm(elsewhere)), 401, 'invalid_client');
  });
});

describe('OAuth with PUBLIC_BASE_URL: aud must be the public URL, never the Host the request names', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary({
      environment: {
        PUBLIC_BASE_URL: 'https://tracking.tributary.example/',
        OAUTH_AUDIENCES: 'https://eu.tributary.example',
      },
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('accepts the public URL (and OAUTH_AUDIENCES), refuses the address the request reached', async () => {
    const workspace = await createWorkspace(t);
    const application = await createOAuthApplication(t, workspace.slug);
    for (const aud of [
      'https://tracking.tributary.example',
      'https://tracking.tributary.example/',
      'https://eu.tributary.example',
    ]) {
      const assertion = await signAssertion({ clientId: application.clientId, key: application.key, aud });
      expect({ aud, status: (await postToken(t, tokenForm(assertion))).status }).toEqual({
        aud,
        status: 200,
      });
    }
    const direct = await signAssertion({
      clientId: application.clientId,
      key: application.key,
      aud: t.baseUrl,
    });
    expectOAuthError(await postToken(t, tokenForm(direct)), 401, 'invalid_client', /aud/);
    // A Host header naming an attacker's choice changes nothing either.
    const spoofed = await signAssertion({
      clientId: application.clientId,
      key: application.key,
      aud: 'http://attacker.example',
    });
    const response = await fetch(`${t.baseUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'attacker.example' },
      body: tokenForm(spoofed),
    });
    expect(response.status).toBe(401);
  });
});
