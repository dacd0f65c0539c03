// Drives the real @segment/analytics-node 3.1, unchanged, with its oauthSettings against Tributary:
// it asks POST /token for an access token with a signed client assertion, then sends its batches
// with Authorization: Bearer (docs/tracking-api.md §4.2, §11). The workspace requires OAuth, so a stored message
// proves the bearer path; a recording HTTP client is the request log of what the library sent.
import {
  Analytics,
  FetchHTTPClient,
  type HTTPClient,
  type HTTPClientRequest,
  type HTTPResponse,
} from '@segment/analytics-node';
import { randomUUID } from 'node:crypto';
import { ConfigApiClient } from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createOAuthApplication,
  rsaKeyPair,
  setOAuthRequired,
  TestOAuthApplication,
  TRACKING_SCOPE,
} from './oauth-e2e.kit';
import {
  createSource,
  createWorkspace,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

interface LoggedExchange {
  url: string;
  headers: Record<string, string>;
  body: string;
  status: number;
  responseBody: string;
}

/** The library's own fetch client, with every request and its answer written down. */
class RecordingHttpClient implements HTTPClient {
  readonly log: LoggedExchange[] = [];
  private readonly inner = new FetchHTTPClient();

  async makeRequest(options: HTTPClientRequest): Promise<HTTPResponse> {
    const response = await this.inner.makeRequest(options);
    const responseBody = response.text ? await response.text() : '';
    this.log.push({
      url: options.url,
      headers: options.headers,
      body: options.body,
      status: response.status,
      responseBody,
    });
    // The body was consumed for the log: hand the library an equivalent response.
    return {
      headers: response.headers,
      status: response.status,
      statusText: response.statusText,
      text: async () => responseBody,
    };
  }
}

describe('@segment/analytics-node 3.1 with OAuth against Tributary', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let application: TestOAuthApplication;

  beforeAll(async () => {
    t = await startTributary();
    const workspace = await createWorkspace(t);
    source = await createSource(t, workspace, 'node');
    application = await createOAuthApplication(t, workspace.slug, [rsaKeyPair('node-key')]);
    const required = await setOAuthRequired(t, workspace.slug, true);
    if (required.status !== 200)
      throw new Error(`oauth_required: ${required.status} ${JSON.stringify(required.body)}`);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  function analyticsFor(app: TestOAuthApplication, authServer: string, httpClient: HTTPClient) {
    return new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      flushAt: 2,
      flushInterval: 200,
      maxRetries: 1,
      httpClient,
      oauthSettings: {
        clientId: app.clientId,
        clientKey: app.key.privatePem,
        keyId: app.key.keyId,
        authServer,
      },
    });
  }

  it('gets a token from POST /token, sends Bearer batches, and the messages are stored in a workspace that requires OAuth', async () => {
    const http = new RecordingHttpClient();
    const analytics = analyticsFor(application, t.baseUrl, http);
    const errors: unknown[] = [];
    analytics.on('error', (error) => errors.push(error));

    const runId = randomUUID();
    const sent = [`node-oauth-track-${runId}`, `node-oauth-identify-${runId}`, `node-oauth-page-${runId}`];
    analytics.track({
      userId: 'oauth-user',
      event: 'OAuth Order',
      properties: { revenue: 9.5 },
      messageId: sent[0],
    });
    analytics.identify({ userId: 'oauth-user', traits: { plan: 'pro' }, messageId: sent[1] });
    analytics.page({ userId: 'oauth-user', name: 'Pricing', messageId: sent[2] });
    await analytics.closeAndFlush({ timeout: 15_000 });

    expect(errors).toEqual([]);
    const tokenRequests = http.log.filter((exchange) => exchange.url === `${t.baseUrl}/token`);
    const trackingRequests = http.log.filter((exchange) => exchange.url === `${t.baseUrl}/v1/batch`);
    expect(tokenRequests.length).toBeGreaterThanOrEqual(1);
    expect(trackingRequests.length).toBeGreaterThanOrEqual(2); // flushAt 2: three events need two batches
    expect(http.log.length).toBe(tokenRequests.length + trackingRequests.length);

    // The token exchange, as the library performed it.
    const tokenExchange = tokenRequests[0];
    expect(tokenExchange.headers['Content-Type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(tokenExchange.body);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('scope')).toBe(TRACKING_SCOPE);
    expect(tokenExchange.status).toBe(200);
    const token = JSON.parse(tokenExchange.responseBody);
    expect(token).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: TRACKING_SCOPE,
    });

    // Every batch carried that token and the write key, and was accepted.
    for (const request of trackingRequests) {
      expect(request.headers.Authorization).toBe(`Bearer ${token.access_token}`);
      expect(JSON.parse(request.body).writeKey).toBe(source.writeKey);
      expect(request.status).toBe(200);
    }

    const stored = await readSourceMessages(t, source);
    expect(stored.get(sent[0])?.payload).toMatchObject({
      type: 'track',
      event: 'OAuth Order',
      userId: 'oauth-user',
      properties: { revenue: 9.5 },
    });
    expect(stored.get(sent[1])?.payload).toMatchObject({
      type: 'identify',
      userId: 'oauth-user',
      traits: { plan: 'pro' },
    });
    expect(stored.get(sent[2])?.payload).toMatchObject({
      type: 'page',
      userId: 'oauth-user',
      name: 'Pricing',
    });
  });

  it('works with an auth server URL ending in a slash: the library asks //token and signs aud with the slash', async () => {
    const http = new RecordingHttpClient();
    const analytics = analyticsFor(application, `${t.baseUrl}/`, http);
    const errors: unknown[] = [];
    analytics.on('error', (error) => errors.push(error));

    const messageId = `node-oauth-slash-${randomUUID()}`;
    analytics.track({ userId: 'oauth-user', event: 'Slash', messageId });
    await analytics.closeAndFlush({ timeout: 15_000 });

    expect(errors).toEqual([]);
    const tokenRequests = http.log.filter((exchange) => exchange.url === `${t.baseUrl}//token`);
    expect(tokenRequests.map((exchange) => exchange.status)).toEqual([200]);
    const assertion = new URLSearchParams(tokenRequests[0].body).get('client_assertion')!;
    const claims = JSON.parse(Buffer.from(assertion.split('.')[1], 'base64url').toString());
    expect(claims.aud).toBe(`${t.baseUrl}/`);
    expect((await readSourceMessages(t, source)).get(messageId)?.payload.event).toBe('Slash');
  });

  it('reports an error and stores nothing when the application was deleted: /token answers 401 invalid_client', async () => {
    const doomed = await createOAuthApplication(t, source.workspaceSlug, [rsaKeyPair('doomed-key')]);
    const deleted = await new ConfigApiClient(t).request(
      'DELETE',
      `workspaces/${source.workspaceSlug}/oauth-applications/${doomed.applicationId}`,
    );
    expect(deleted.status).toBe(200);

    const http = new RecordingHttpClient();
    const analytics = analyticsFor(doomed, t.baseUrl, http);
    const errors: unknown[] = [];
    analytics.on('error', (error) => errors.push(error));
    const messageId = `node-oauth-deleted-${randomUUID()}`;
    analytics.track({ userId: 'oauth-user', event: 'Never Stored', messageId });
    await analytics.closeAndFlush({ timeout: 15_000 });

    expect(errors.length).toBeGreaterThan(0);
    const tokenRequests = http.log.filter((exchange) => exchange.url === `${t.baseUrl}/token`);
    expect(tokenRequests.length).toBeGreaterThanOrEqual(1);
    for (const exchange of tokenRequests) {
      expect(exchange.status).toBe(401);
      expect(JSON.parse(exchange.responseBody)).toEqual({
        error: 'invalid_client',
        error_description: expect.any(String),
      });
    }
    // Without a token the library may fall back to Basic; the workspace requires OAuth, so that fails too.
    for (const request of http.log.filter((exchange) => exchange.url === `${t.baseUrl}/v1/batch`)) {
      expect(request.status).toBe(401);
    }
    expect((await readSourceMessages(t, source)).has(messageId)).toBe(false);
  });
});
