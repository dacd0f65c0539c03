// What Segment's browser and mobile libraries need of the tracking API besides the server routes
// (docs/browser-mobile.md §5): the analytics.js files, the settings document, the short routes, CORS on
// every answer (refusals and the HTTP edge's own included), 405 on a wrong method, a source's
// allowed origins, and `context.ip` for client-side requests.
import { readdirSync, readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { rawExchange, rawRequest } from '../../../test/support/raw-http';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  basicAuth,
  createWorkspaceAndSource,
  deleteSource,
  expectErrorBody,
  postTracking,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';

const UMD_DIRECTORY = join(dirname(require.resolve('@segment/analytics-next/package.json')), 'dist', 'umd');
const PAGE_ORIGIN = 'http://127.0.0.1:8081';

function expectCors(headers: Headers, origin = PAGE_ORIGIN): void {
  expect(headers.get('access-control-allow-origin')).toBe(origin);
  expect(headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
}

describe('browser and mobile routes', () => {
  let t: TributaryTestInstance;
  let source: TestSource;

  beforeAll(async () => {
    t = await startTributary();
    source = await createWorkspaceAndSource(t, { catalog: 'javascript' });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  describe('the analytics.js loader and chunks', () => {
    const standalone = readFileSync(join(UMD_DIRECTORY, 'standalone.js'));

    it.each(['analytics.min.js', 'analytics.js'])(
      'serves the package standalone.js unmodified as /analytics.js/v1/{key}/%s',
      async (file) => {
        const response = await fetch(`${t.baseUrl}/analytics.js/v1/${source.writeKey}/${file}`, {
          headers: { 'accept-encoding': 'identity' },
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
        expect(response.headers.get('cache-control')).toBe('public, max-age=300');
        expect(response.headers.get('content-encoding')).toBeNull();
        expect(Buffer.from(await response.arrayBuffer()).equals(standalone)).toBe(true);
      },
    );

    it('sends the package gzip twin when gzip is accepted, and 304 for a known ETag', async () => {
      const path = `/analytics.js/v1/${source.writeKey}/analytics.min.js`;
      const gzipped = await rawRequest(t.port, {
        method: 'GET',
        path,
        headers: { 'accept-encoding': 'gzip, deflate, br' },
      });
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(gzipped.headers['vary']).toMatch(/Accept-Encoding/);
      const raw = await new Promise<Buffer>((resolve, reject) => {
        // rawRequest decodes the body as text; the exact bytes come from node:http itself.
        httpGet({ host: '127.0.0.1', port: t.port, path, headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(Buffer.concat(chunks)));
        }).on('error', reject);
      });
      expect(raw.equals(readFileSync(join(UMD_DIRECTORY, 'standalone.js.gz')))).toBe(true);
      expect(gunzipSync(raw).equals(standalone)).toBe(true);
      const refused = await rawRequest(t.port, {
        method: 'GET',
        path,
        headers: { 'accept-encoding': 'gzip;q=0' },
      });
      expect(refused.headers['content-encoding']).toBeUndefined();

      const etag = gzipped.headers['etag'] as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const cached = await rawRequest(t.port, { method: 'GET', path, headers: { 'if-none-match': etag } });
      expect(cached.status).toBe(304);
      expect(cached.text).toBe('');
    });

    it('answers HEAD with the headers and no body', async () => {
      const head = await rawRequest(t.port, {
        method: 'HEAD',
        path: `/analytics.js/v1/${source.writeKey}/analytics.min.js`,
      });
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toBe('application/javascript; charset=utf-8');
      expect(head.text).toBe('');
    });

    it('serves every chunk of the package from /analytics-next/bundles/, immutable', async () => {
      const chunks = readdirSync(UMD_DIRECTORY).filter((name) => /\.bundle\.[0-9a-f]{20}\.js$/.test(name));
      expect(chunks.length).toBeGreaterThanOrEqual(8);
      for (const chunk of chunks) {
        const response = await fetch(`${t.baseUrl}/analytics-next/bundles/${chunk}`);
        expect({ chunk, status: response.status }).toEqual({ chunk, status: 200 });
        expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(
          Buffer.from(await response.arrayBuffer()).equals(readFileSync(join(UMD_DIRECTORY, chunk))),
        ).toBe(true);
      }
    });

    it.each([
      `/analytics.js/v1/KEY/standalone.js`,
      `/analytics.js/v1/KEY/analytics.min.js.map`,
      `/analytics.js/v1/KEY/platform/analytics.min.js`,
      `/analytics-next/bundles/standalone.js`,
      `/analytics-next/bundles/index.js`,
      `/analytics-next/bundles/queryString.bundle.00000000000000000000.js`,
      `/analytics-next/bundles/..%2Fpackage.json`,
      `/analytics-next/bundles/%2E%2E%2F%2E%2E%2Fpackage.json`,
      `/analytics-next/package.json`,
      `/next-integrations/integrations/x/1/x.dynamic.js.gz`,
    ])('answers 404 for %s', async (path) => {
      const response = await rawRequest(t.port, { method: 'GET', path });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ success: false, code: 'not_found' });
    });
  });

  describe('GET /v1/projects/{writeKey}/settings', () => {
    it('points the libraries back at this deployment, with CORS, and keeps metrics off Segment', async () => {
      const response = await fetch(`${t.baseUrl}/v1/projects/${source.writeKey}/settings`, {
        headers: { origin: PAGE_ORIGIN },
      });
      expect(response.status).toBe(200);
      expectCors(response.headers);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      // Without PUBLIC_BASE_URL, apiHost follows the request's Host: no shared cache may keep it.
      expect(response.headers.get('cache-control')).toBe('private, max-age=60');
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toEqual({
        integrations: {
          'Segment.io': {
            apiKey: source.writeKey,
            apiHost: `127.0.0.1:${t.port}/v1`,
            protocol: 'http',
            addBundledMetadata: true,
            unbundledIntegrations: [],
            maybeBundledConfigIds: {},
          },
        },
        plan: {},
        edgeFunction: {},
        middlewareSettings: {},
        enabledMiddleware: {},
        remotePlugins: [],
        legacyVideoPluginsEnabled: false,
        metrics: { sampleRate: 0 },
        consentSettings: { allCategories: [], hasUnmappedDestinations: false },
      });
      // No top-level null: analytics-kotlin fails to decode one.
      expect(Object.values(body).every((value) => value !== null)).toBe(true);
    });

    it('tells caches that an answer to a request without Origin differs from one with it', async () => {
      const response = await fetch(`${t.baseUrl}/v1/projects/${source.writeKey}/settings`);
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
      expect(response.headers.get('cache-control')).toBe('private, max-age=60');
    });

    it('answers an unknown write key 404 with the error body and CORS', async () => {
      const response = await postlessGet(`/v1/projects/not-a-key/settings`);
      expect(response.status).toBe(404);
      expectCors(response.headers);
      expectErrorBody(response, 404, 'not_found');
    });

    it('answers HEAD with the headers only', async () => {
      const head = await rawRequest(t.port, {
        method: 'HEAD',
        path: `/v1/projects/${source.writeKey}/settings`,
      });
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toMatch(/^application\/json/);
      expect(head.text).toBe('');
    });

    it('answers 404 once the source is deleted', async () => {
      const doomed = await createWorkspaceAndSource(t);
      expect((await postlessGet(`/v1/projects/${doomed.writeKey}/settings`)).status).toBe(200);
      await deleteSource(t, doomed);
      expectErrorBody(await postlessGet(`/v1/projects/${doomed.writeKey}/settings`), 404, 'not_found');
    });

    async function postlessGet(path: string) {
      const response = await fetch(`${t.baseUrl}${path}`, { headers: { origin: PAGE_ORIGIN } });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
    }
  });

  describe('short routes', () => {
    const routes = [
      ['t', 'track', { event: 'Clicked', properties: { color: 'red' } }],
      ['i', 'identify', { traits: { email: 'a@example.com' } }],
      ['p', 'page', { name: 'Home', properties: { path: '/' } }],
      ['s', 'screen', { name: 'Main', properties: {} }],
      ['g', 'group', { groupId: 'g-1', traits: {} }],
      ['a', 'alias', { previousId: 'old' }],
    ] as const;

    it.each(routes)(
      'POST /v1/%s stores a %s sent as analytics.js sends it (text/plain, Basic, writeKey in body)',
      async (short, type, fields) => {
        const messageId = `ajs-next-1795666374905-${crypto.randomUUID()}`;
        const response = await postTracking(
          t,
          `/v1/${short}`,
          JSON.stringify({
            type,
            ...fields,
            messageId,
            anonymousId: '591aee9d-3916-4264-8736-73f025455450',
            context: { library: { name: 'analytics.js', version: 'next-1.84.3' }, userAgent: 'Chrome' },
            integrations: {},
            writeKey: source.writeKey,
            sentAt: new Date().toISOString(),
            _metadata: { bundled: ['Segment.io'], unbundled: [], bundledIds: [] },
          }),
          { 'content-type': 'text/plain', authorization: basicAuth(source.writeKey), origin: PAGE_ORIGIN },
        );
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ success: true });
        expectCors(response.headers);
        const stored = (await readSourceMessages(t, source)).get(messageId);
        expect(stored?.payload).toMatchObject({
          type,
          ...fields,
          anonymousId: '591aee9d-3916-4264-8736-73f025455450',
          // The address the request came from, since the message carried none.
          context: {
            library: { name: 'analytics.js', version: 'next-1.84.3' },
            userAgent: 'Chrome',
            ip: '127.0.0.1',
          },
        });
      },
    );

    it('takes classic analytics.js posts: text/plain, no Authorization, writeKey and sentAt in the body', async () => {
      const messageId = `ajs-${'0123456789abcdef'.repeat(2)}`;
      const response = await postTracking(
        t,
        '/v1/p',
        JSON.stringify({
          name: 'Pricing',
          properties: { path: '/pricing' },
          anonymousId: 'classic-anon',
          messageId,
          context: { library: { name: 'analytics.js', version: '4.1.0' } },
          writeKey: source.writeKey,
          sentAt: new Date().toISOString(),
        }),
        { 'content-type': 'text/plain', origin: PAGE_ORIGIN },
      );
      expect(response.status).toBe(200);
      expectCors(response.headers);
      expect((await readSourceMessages(t, source)).get(messageId)?.payload).toMatchObject({
        type: 'page',
        name: 'Pricing',
        anonymousId: 'classic-anon',
        context: { ip: '127.0.0.1' },
      });
    });

    it('POST /v1/b stores a batch with the write key in the body only, and keeps a context.ip sent', async () => {
      const ids = [crypto.randomUUID(), crypto.randomUUID()];
      const response = await postTracking(
        t,
        '/v1/b',
        JSON.stringify({
          writeKey: source.writeKey,
          batch: [
            { type: 'track', event: 'A', userId: 'u', messageId: ids[0], writeKey: source.writeKey },
            { type: 'track', event: 'B', userId: 'u', messageId: ids[1], context: { ip: '198.51.100.4' } },
          ],
          sentAt: new Date().toISOString(),
        }),
        { 'content-type': 'text/plain' },
      );
      expect(response.status).toBe(200);
      const stored = await readSourceMessages(t, source);
      expect(stored.get(ids[0])?.payload.context).toEqual({ ip: '127.0.0.1' });
      expect(stored.get(ids[1])?.payload.context).toEqual({ ip: '198.51.100.4' });
    });

    it('leaves a server-side library request alone: no CORS headers, no context.ip', async () => {
      const messageId = crypto.randomUUID();
      const response = await postTracking(
        t,
        '/v1/batch',
        JSON.stringify({ batch: [{ type: 'track', event: 'S', userId: 'u', messageId }] }),
        { authorization: basicAuth(source.writeKey), 'user-agent': 'analytics-python/2.3.4' },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
      expect((await readSourceMessages(t, source)).get(messageId)?.payload.context).toEqual({});
    });

    it('answers POST /v1/m (library metrics) 200 and stores nothing', async () => {
      const response = await postTracking(
        t,
        '/v1/m',
        '{"series":[{"type":"Counter","metric":"analytics_js.invoke","value":1,"tags":{"library":"analytics.js"}}]}',
        { 'content-type': 'text/plain', origin: PAGE_ORIGIN },
      );
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });
      expectCors(response.headers);
    });
  });

  describe('CORS', () => {
    it.each(['/v1/t', '/v1/b', '/v1/batch', '/v1/m', `/v1/projects/KEY/settings`, '/v1/unknown'])(
      'answers a preflight to %s 204 without auth, allowing the headers analytics.js sends',
      async (path) => {
        const response = await rawRequest(t.port, {
          method: 'OPTIONS',
          path,
          headers: {
            origin: PAGE_ORIGIN,
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'authorization,x-retry-count',
          },
        });
        expect(response.status).toBe(204);
        expect(response.text).toBe('');
        expect(response.headers['access-control-allow-origin']).toBe(PAGE_ORIGIN);
        expect(response.headers['access-control-allow-methods']).toMatch(/POST/);
        expect(response.headers['access-control-allow-headers']).toBe('authorization,x-retry-count');
        expect(response.headers['access-control-max-age']).toBe('86400');
        expect(response.headers['vary']).toMatch(/Origin/);
      },
    );

    it('allows Authorization, Content-Type and X-Retry-Count when the preflight names no headers', async () => {
      const response = await rawRequest(t.port, {
        method: 'OPTIONS',
        path: '/v1/t',
        headers: { origin: PAGE_ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(response.status).toBe(204);
      expect(response.headers['access-control-allow-headers']).toBe(
        'Authorization, Content-Type, X-Retry-Count',
      );
    });

    it('puts the headers on refusals: unknown key, bad JSON, invalid message, unknown path', async () => {
      const headers = { 'content-type': 'text/plain', origin: PAGE_ORIGIN };
      const unknownKey = await postTracking(
        t,
        '/v1/t',
        '{"event":"x","userId":"u","writeKey":"nope"}',
        headers,
      );
      expectErrorBody(unknownKey, 401, 'invalid_write_key');
      expectCors(unknownKey.headers);
      const badJson = await postTracking(t, '/v1/t', '{"event":', {
        ...headers,
        authorization: basicAuth(source.writeKey),
      });
      expectErrorBody(badJson, 400, 'invalid_json');
      expectCors(badJson.headers);
      const invalid = await postTracking(t, '/v1/t', '{"userId":"u"}', {
        ...headers,
        authorization: basicAuth(source.writeKey),
      });
      expectErrorBody(invalid, 400, 'missing_event');
      expectCors(invalid.headers);
      const unknownPath = await postTracking(t, '/v1/nope', '{}', headers);
      expect(unknownPath.status).toBe(404);
      expectCors(unknownPath.headers);
    });

    it('puts them on the answers of the HTTP edge and of URLs the router refuses', async () => {
      const exchange = await rawExchange(t.port, [
        'POST /v1/t HTTP/1.1\r\nHost: x\r\nOrigin: http://page.test\r\nContent-Length: abc\r\n\r\n',
      ]);
      expect(exchange.responses[0]?.status).toBe(400);
      expect(exchange.responses[0]?.headers['access-control-allow-origin']).toBe('*');
      expect(exchange.responses[0]?.headers['access-control-expose-headers']).toMatch(/Retry-After/);
      const badUrl = await rawRequest(t.port, {
        method: 'POST',
        path: '/v1/%zz',
        headers: { origin: PAGE_ORIGIN },
        body: '{}',
      });
      expect(badUrl.status).toBe(400);
      expect(badUrl.headers['access-control-allow-origin']).toBe(PAGE_ORIGIN);
      // The Config API is not for pages: no CORS there.
      const configApiEdge = await rawExchange(t.port, [
        'POST /v1beta/workspaces HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      ]);
      expect(configApiEdge.responses[0]?.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('does not answer preflights on the Config API', async () => {
      const response = await rawRequest(t.port, {
        method: 'OPTIONS',
        path: '/v1beta/workspaces',
        headers: { origin: PAGE_ORIGIN, 'access-control-request-method': 'POST' },
      });
      expect(response.status).not.toBe(204);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('wrong method', () => {
    it.each([
      ['GET', '/v1/track'],
      ['GET', '/v1/t'],
      ['PUT', '/v1/batch'],
      ['DELETE', '/v1/b'],
      ['PATCH', '/v1/import'],
      ['GET', '/v1/m'],
    ])('answers %s %s 405 with Allow and CORS', async (method, path) => {
      const response = await rawRequest(t.port, { method, path, headers: { origin: PAGE_ORIGIN } });
      expect(response.status).toBe(405);
      expect(response.headers['allow']).toBe('POST, OPTIONS');
      expect(response.headers['access-control-allow-origin']).toBe(PAGE_ORIGIN);
      expect(response.body).toEqual({
        success: false,
        code: 'method_not_allowed',
        message: expect.stringContaining(method),
        error: expect.any(String),
      });
    });

    it('answers HEAD on a tracking route 405 without a body', async () => {
      const response = await rawRequest(t.port, { method: 'HEAD', path: '/v1/track' });
      expect(response.status).toBe(405);
      expect(response.text).toBe('');
    });

    it('keeps 404 for a path that is no route', async () => {
      const response = await rawRequest(t.port, { method: 'GET', path: '/v1/nope' });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'not_found' });
    });
  });

  describe("a source's allowed origins", () => {
    let restricted: TestSource;
    const sourcePath = () => `workspaces/${restricted.workspaceSlug}/sources/${restricted.sourceSlug}`;

    beforeAll(async () => {
      restricted = await createWorkspaceAndSource(t, { catalog: 'javascript' });
    });

    it('is empty (any origin) by default, and set by PATCH with an update mask', async () => {
      expect((await configApi(t, 'GET', sourcePath())).body.allowed_origins).toEqual([]);
      const updated = await configApi(t, 'PATCH', sourcePath(), {
        source: {
          allowed_origins: ['HTTPS://Shop.Example.com', 'http://127.0.0.1:8081', 'https://*.example.org'],
        },
        update_mask: { paths: ['source.allowed_origins'] },
      });
      expect(updated.status).toBe(200);
      expect(updated.body.allowed_origins).toEqual([
        'https://shop.example.com',
        'http://127.0.0.1:8081',
        'https://*.example.org',
      ]);
      expect((await configApi(t, 'GET', sourcePath())).body.allowed_origins).toEqual(
        updated.body.allowed_origins,
      );
      const audit = await configApi(t, 'GET', `workspaces/${restricted.workspaceSlug}/audit-events`);
      expect(audit.status).toBe(200);
      expect(JSON.stringify(audit.body.audit_events)).toContain('SourceUpdated');
    });

    it('refuses a bad origin with the Config API error and changes nothing', async () => {
      const response = await configApi(t, 'PATCH', sourcePath(), {
        source: { allowed_origins: ['https://ok.test', 'https://x.test/path'] },
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 3,
        message: expect.stringContaining('allowed_origins[1]'),
      });
      expect((await configApi(t, 'GET', sourcePath())).body.allowed_origins).toHaveLength(3);
    });

    it('takes events from a listed origin and from clients without Origin, refuses others 403 with CORS', async () => {
      const send = (origin?: string) =>
        postTracking(
          t,
          '/v1/t',
          JSON.stringify({ event: 'E', anonymousId: 'a', messageId: crypto.randomUUID() }),
          {
            'content-type': 'text/plain',
            authorization: basicAuth(restricted.writeKey),
            ...(origin !== undefined && { origin }),
          },
        );
      expect((await send('http://127.0.0.1:8081')).status).toBe(200);
      expect((await send('https://a.example.org')).status).toBe(200);
      expect((await send(undefined)).status).toBe(200);
      const refused = await send('https://evil.test');
      expectErrorBody(refused, 403, 'origin_not_allowed');
      expectCors(refused.headers, 'https://evil.test');
      const settings = await fetch(`${t.baseUrl}/v1/projects/${restricted.writeKey}/settings`, {
        headers: { origin: 'https://evil.test' },
      });
      expect(settings.status).toBe(403);
      const allowedSettings = await fetch(`${t.baseUrl}/v1/projects/${restricted.writeKey}/settings`, {
        headers: { origin: 'https://shop.example.com' },
      });
      expect(allowedSettings.status).toBe(200);
    });

    it('goes back to any origin with an empty list, and can be given at creation', async () => {
      await configApi(t, 'PATCH', sourcePath(), {
        source: { allowed_origins: [] },
        update_mask: { paths: ['source.allowed_origins'] },
      });
      const anyOrigin = await postTracking(
        t,
        '/v1/t',
        JSON.stringify({ event: 'E', anonymousId: 'a', writeKey: restricted.writeKey }),
        { 'content-type': 'text/plain', origin: 'https://evil.test' },
      );
      expect(anyOrigin.status).toBe(200);

      const created = await configApi(t, 'POST', `workspaces/${restricted.workspaceSlug}/sources`, {
        source: {
          name: `workspaces/${restricted.workspaceSlug}/sources/web-${process.pid}`,
          catalog_name: 'catalog/sources/javascript',
          allowed_origins: ['https://www.example.com'],
        },
      });
      expect(created.status).toBe(200);
      expect(created.body.allowed_origins).toEqual(['https://www.example.com']);
    });
  });

  describe('the settings document behind a proxy', () => {
    let proxied: TributaryTestInstance;
    let proxiedSource: TestSource;

    afterEach(async () => {
      await proxied?.stop({ removeData: true });
    });

    it('is private when the address comes from forwarded headers (no PUBLIC_BASE_URL)', async () => {
      proxied = await startTributary({ environment: { TRUST_PROXY: 'true' } });
      proxiedSource = await createWorkspaceAndSource(proxied, { catalog: 'javascript' });
      const response = await fetch(`${proxied.baseUrl}/v1/projects/${proxiedSource.writeKey}/settings`, {
        headers: { 'x-forwarded-host': 'collector.evil', 'x-forwarded-proto': 'http' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toMatch(/^private\b/);
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
    });

    it('is shared, and names PUBLIC_BASE_URL whatever the forwarded headers say, when it is set', async () => {
      proxied = await startTributary({
        environment: { TRUST_PROXY: 'true', PUBLIC_BASE_URL: 'https://t.example.com' },
      });
      proxiedSource = await createWorkspaceAndSource(proxied, { catalog: 'javascript' });
      const response = await fetch(`${proxied.baseUrl}/v1/projects/${proxiedSource.writeKey}/settings`, {
        headers: { 'x-forwarded-host': 'collector.evil', 'x-forwarded-proto': 'http' },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=60');
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
      const body = (await response.json()) as {
        integrations: Record<string, { apiHost: string; protocol: string }>;
      };
      expect(body.integrations['Segment.io']).toMatchObject({
        apiHost: 't.example.com/v1',
        protocol: 'https',
      });
    });
  });

  describe('under a rate limit', () => {
    let limited: TributaryTestInstance;
    let limitedSource: TestSource;

    beforeAll(async () => {
      limited = await startTributary({ environment: { TRACKING_RATE_LIMIT: '1' } });
      limitedSource = await createWorkspaceAndSource(limited, { catalog: 'javascript' });
    });

    afterAll(async () => {
      await limited?.stop({ removeData: true });
    });

    it('answers 429 with Retry-After exposed to the page, and preflights 204 all the same', async () => {
      const post = () =>
        postTracking(limited, '/v1/t', JSON.stringify({ event: 'E', anonymousId: 'a' }), {
          'content-type': 'text/plain',
          authorization: basicAuth(limitedSource.writeKey),
          origin: PAGE_ORIGIN,
        });
      const answers = [await post(), await post(), await post()];
      const refused = answers.find((response) => response.status === 429);
      expect(refused).toBeDefined();
      expectErrorBody(refused!, 429, 'rate_limited');
      expectCors(refused!.headers);
      expect(refused!.headers.get('retry-after')).toMatch(/^\d+$/);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const preflight = await rawRequest(limited.port, {
          method: 'OPTIONS',
          path: '/v1/t',
          headers: { origin: PAGE_ORIGIN, 'access-control-request-method': 'POST' },
        });
        expect(preflight.status).toBe(204);
      }
    });
  });
});
