// Hostile input at the HTTP edge (issue 6), over raw TCP on loopback: requests Node's HTTP parser
// refuses before any route sees them (a head over 16 KiB, an unknown method, a malformed request line,
// header or framing, a body cut short), HTTP/1.0, and bodies whose Content-Type or Content-Length lie.
// Each gets the error body of the API it was sent to (docs/tracking-api.md §9.2, docs/config-api.md §4, RFC 6749
// on the token route), never a 5xx, never Node's or Fastify's own body, and the server carries on.
import { randomUUID } from 'node:crypto';
import { ParsedResponse, rawExchange, RawExchange } from '../../../test/support/raw-http';
import {
  basicAuth,
  createWorkspaceAndSource,
  postJson,
  readSourceMessages,
  TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';

type Refusal = 'malformed' | 'unknown_method' | 'head_too_large' | 'missing_host';

const STATUS: Record<Refusal, number> = {
  malformed: 400,
  missing_host: 400,
  unknown_method: 404,
  head_too_large: 431,
};

/** `METHOD target VERSION`, the headers, and the blank line; the body is the caller's. */
function head(method: string, target: string, headers: Record<string, string>, version = 'HTTP/1.1'): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${method} ${target} ${version}\r\n${lines.join('')}\r\n`;
}

function expectJson(response: ParsedResponse): void {
  expect(response.headers['content-type']).toMatch(/^application\/json/);
}

function expectTrackingError(response: ParsedResponse | undefined, status: number, code: string): void {
  expect({ status: response?.status, body: response?.body }).toEqual({
    status,
    body: { success: false, code, message: expect.any(String), error: expect.any(String) },
  });
  expectJson(response!);
}

function expectConfigError(response: ParsedResponse | undefined, status: number, code: number): void {
  expect({ status: response?.status, body: response?.body }).toEqual({
    status,
    body: { error: expect.any(String), code, message: expect.any(String) },
  });
  expectJson(response!);
}

/** The refusal closes the connection: the parser cannot tell where a next request would start. */
function expectOneAnswerThenClose(exchange: RawExchange): ParsedResponse {
  expect({ closedByServer: exchange.closedByServer, answers: exchange.responses.length }).toEqual({
    closedByServer: true,
    answers: 1,
  });
  expect(exchange.responses[0].headers.connection).toBe('close');
  expect(exchange.responses[0].headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  return exchange.responses[0];
}

interface Api {
  name: string;
  /** A route of the API and the headers it needs, so only the refused part is wrong. */
  target: string;
  method: string;
  headers(): Record<string, string>;
  expectRefusal(response: ParsedResponse | undefined, refusal: Refusal): void;
}

const TRACKING_CODES: Record<Refusal, string> = {
  malformed: 'invalid_request',
  missing_host: 'invalid_request',
  unknown_method: 'not_found',
  head_too_large: 'headers_too_large',
};
const GRPC_CODES: Record<Refusal, number> = {
  malformed: 3,
  missing_host: 3,
  unknown_method: 5,
  head_too_large: 3,
};

describe('HTTP edge: what the HTTP parser refuses is answered in the API’s own error body', () => {
  let instance: TributaryTestInstance;
  let source: TestSource;

  const trackingApi: Api = {
    name: 'tracking API',
    target: '/v1/track',
    method: 'POST',
    headers: () => ({
      host: 'collector.test',
      'content-type': 'application/json',
      authorization: basicAuth(source.writeKey),
    }),
    expectRefusal: (response, refusal) =>
      expectTrackingError(response, STATUS[refusal], TRACKING_CODES[refusal]),
  };
  const configApiSurface: Api = {
    name: 'Config API',
    target: '/v1beta/workspaces',
    method: 'GET',
    headers: () => ({ host: 'config.test', authorization: `Bearer ${instance.adminToken}` }),
    expectRefusal: (response, refusal) => expectConfigError(response, STATUS[refusal], GRPC_CODES[refusal]),
  };
  const tokenRoute: Api = {
    name: 'token route',
    target: '/token',
    method: 'POST',
    headers: () => ({ host: 'oauth.test', 'content-type': 'application/x-www-form-urlencoded' }),
    expectRefusal: (response) => {
      expect(response?.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expectJson(response!);
    },
  };

  const exchange = (parts: (string | Uint8Array)[], options?: Parameters<typeof rawExchange>[2]) =>
    rawExchange(instance.port, parts, options);

  beforeAll(async () => {
    instance = await startTributary();
    source = await createWorkspaceAndSource(instance);
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  afterEach(async () => {
    // The server survived: both APIs still answer a good request.
    const tracked = await postJson(
      instance,
      '/v1/track',
      { type: 'track', event: 'Still Alive', userId: 'u-1', messageId: randomUUID() },
      source.writeKey,
    );
    expect({ status: tracked.status, body: tracked.body }).toEqual({ status: 200, body: { success: true } });
    expect((await configApi(instance, 'GET', 'workspaces')).status).toBe(200);
  });

  describe.each([
    ['tracking API', () => trackingApi],
    ['Config API', () => configApiSurface],
    ['token route', () => tokenRoute],
  ])('%s', (_name, apiOf: () => Api) => {
    // Resolved inside each test: the write key and admin token exist only after beforeAll.
    const api = (): Api => apiOf();

    it('answers a head over 16 KiB (one large header, a long URL, thousands of headers) 431, and closes', async () => {
      const { target, method } = api();
      const oneLargeHeader = head(method, target, { ...api().headers(), 'x-padding': 'p'.repeat(20_000) });
      const longUrl = head(method, `${target}?q=${'x'.repeat(20_000)}`, api().headers());
      const manyHeaders = head(
        method,
        target,
        Object.fromEntries([
          ...Object.entries(api().headers()),
          ...Array.from({ length: 3_000 }, (_, i) => [`x-header-${i}`, 'value']),
        ]),
      );
      for (const request of [oneLargeHeader, longUrl, manyHeaders]) {
        api().expectRefusal(expectOneAnswerThenClose(await exchange([request])), 'head_too_large');
      }
    });

    it('answers HEAD with a head over 16 KiB 431 without a body', async () => {
      const result = await exchange(
        [head('HEAD', api().target, { ...api().headers(), 'x-padding': 'p'.repeat(20_000) })],
        {
          headRequests: 1,
        },
      );
      const response = expectOneAnswerThenClose(result);
      expect({ status: response.status, text: response.text }).toEqual({ status: 431, text: '' });
      expect(Number(response.headers['content-length'])).toBeGreaterThan(0);
    });

    it('answers a method Node does not know (FOO, a lower-case post, BREW) 404, and closes', async () => {
      for (const method of ['FOO', 'post', 'BREW']) {
        const response = expectOneAnswerThenClose(
          await exchange([head(method, api().target, api().headers())]),
        );
        api().expectRefusal(response, 'unknown_method');
        expect(JSON.stringify(response.body)).toContain(`${method} ${api().target}`);
      }
    });

    it('answers a malformed request line (an unknown version, junk after it, bare LF, a NUL) 400', async () => {
      const requests = [
        head(api().method, api().target, api().headers(), 'HTTP/9.9'),
        head(api().method, api().target, api().headers(), 'HTTP/1.1 extra'),
        `${api().method} ${api().target} HTTP/1.1\nhost: x\n\n`,
        head(api().method, `${api().target}?a=\u0000b`, api().headers()),
      ];
      for (const request of requests) {
        api().expectRefusal(expectOneAnswerThenClose(await exchange([request])), 'malformed');
      }
    });

    it('answers a bad header, a bad or doubled Content-Length, Content-Length with chunked, broken chunks 400', async () => {
      const withHeaders = (extra: string) =>
        `${head(api().method, api().target, api().headers()).slice(0, -2)}${extra}\r\n`;
      const requests = [
        withHeaders('bad header: x\r\n'),
        withHeaders('x-control: a\u0001b\r\n'),
        withHeaders('x-folded: a\r\n b\r\n'),
        withHeaders('content-length: abc\r\n') + '{}',
        withHeaders('content-length: -1\r\n') + '{}',
        withHeaders('content-length: 2\r\ncontent-length: 3\r\n') + '{}',
        withHeaders('content-length: 2\r\ntransfer-encoding: chunked\r\n') + '2\r\n{}\r\n0\r\n\r\n',
        withHeaders('transfer-encoding: chunked\r\n') + 'zz\r\n{}\r\n0\r\n\r\n',
        withHeaders('transfer-encoding: gzip\r\n') + '{}',
      ];
      for (const request of requests) {
        api().expectRefusal(expectOneAnswerThenClose(await exchange([request])), 'malformed');
      }
    });

    it('answers an HTTP/1.1 request without Host 400 (RFC 9112 §3.2), and closes', async () => {
      const { host: _host, ...headers } = api().headers();
      const response = expectOneAnswerThenClose(await exchange([head(api().method, api().target, headers)]));
      api().expectRefusal(response, 'missing_host');
    });
  });

  describe('tracking API', () => {
    const batchOf = (...messageIds: string[]) =>
      JSON.stringify({
        batch: messageIds.map((messageId) => ({
          type: 'track',
          event: 'Cut Short',
          userId: 'u-1',
          messageId,
        })),
      });

    it('stores nothing of a body cut short by the client’s FIN, and answers it 400', async () => {
      const messageIds = [randomUUID(), randomUUID(), randomUUID()];
      const body = batchOf(...messageIds);
      const request = head('POST', '/v1/batch', {
        ...trackingApi.headers(),
        'content-length': String(body.length),
      });
      const result = await exchange([request, body.slice(0, Math.floor(body.length * 0.8))], {
        finish: 'end',
      });
      expectTrackingError(expectOneAnswerThenClose(result), 400, 'invalid_request');
      const stored = await readSourceMessages(instance, source);
      expect(messageIds.filter((id) => stored.has(id))).toEqual([]);
    });

    it('stores nothing of a body cut short by a reset, and answers the next connection', async () => {
      const messageIds = [randomUUID(), randomUUID()];
      const body = batchOf(...messageIds);
      const request = head('POST', '/v1/batch', {
        ...trackingApi.headers(),
        'content-length': String(body.length),
      });
      const result = await exchange([request, body.slice(0, body.length - 10)], { finish: 'reset' });
      expect(result.responses).toEqual([]);
      const stored = await readSourceMessages(instance, source);
      expect(messageIds.filter((id) => stored.has(id))).toEqual([]);
    });

    it('answers a body longer than its Content-Length as sent, then the rest 400, then closes', async () => {
      const body = JSON.stringify({ type: 'track', event: 'Long', userId: 'u-1', messageId: randomUUID() });
      const request = head('POST', '/v1/track', { ...trackingApi.headers(), 'content-length': '10' }) + body;
      const result = await exchange([request]);
      expect(result.closedByServer).toBe(true);
      expect(result.responses.map((response) => response.status)).toEqual([400, 400]);
      // The first ten bytes are not JSON; what follows is not a request.
      expectTrackingError(result.responses[0], 400, 'invalid_json');
      expectTrackingError(result.responses[1], 400, 'invalid_request');
      expect(result.responses[1].headers.connection).toBe('close');
    });

    it('serves HTTP/1.0 (no Host needed) and closes after the answer; keeps the connection when asked to', async () => {
      const messageId = randomUUID();
      const body = JSON.stringify({ type: 'track', event: 'Old Client', userId: 'u-1', messageId });
      const { host: _host, ...headers } = trackingApi.headers();
      const request = head(
        'POST',
        '/v1/track',
        { ...headers, 'content-length': String(body.length) },
        'HTTP/1.0',
      );
      const result = await exchange([request + body]);
      expect(result.closedByServer).toBe(true);
      expect(result.responses.map(({ status, body }) => ({ status, body }))).toEqual([
        { status: 200, body: { success: true } },
      ]);
      expect(result.responses[0].headers.connection).toMatch(/close/i);
      expect((await readSourceMessages(instance, source)).has(messageId)).toBe(true);

      const keepAlive = head(
        'POST',
        '/v1/track',
        { ...headers, connection: 'keep-alive', 'content-length': String(body.length) },
        'HTTP/1.0',
      );
      const twice = await exchange([keepAlive + body, keepAlive + body], { timeoutMs: 1_000 });
      expect(twice.responses.map((response) => response.status)).toEqual([200, 200]);
    });

    it('accepts JSON whatever the Content-Type says, and refuses a body that is not JSON 400', async () => {
      // Spec §5.1 names application/json; browsers' beacons send text/plain, and refusing those would
      // lose events, so the body decides. A body that is not JSON is 400 invalid_json either way.
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const body = JSON.stringify({
          type: 'track',
          event: 'Typed',
          userId: 'u-1',
          messageId: randomUUID(),
        });
        const response = await postJson(instance, '/v1/track', JSON.parse(body), source.writeKey, {
          'content-type': contentType,
        });
        expect({ contentType, status: response.status, body: response.body }).toEqual({
          contentType,
          status: 200,
          body: { success: true },
        });
      }
      const xml = await exchange([
        head('POST', '/v1/track', {
          ...trackingApi.headers(),
          'content-type': 'application/xml',
          'content-length': '7',
          connection: 'close',
        }) + '<a></a>',
      ]);
      expectTrackingError(xml.responses[0], 400, 'invalid_json');
      // A Content-Type that is not a media type at all is refused before the body is read.
      for (const contentType of ['', 'not a media type']) {
        const response = await postJson(
          instance,
          '/v1/track',
          { type: 'track', event: 'Typed', userId: 'u-1', messageId: randomUUID() },
          source.writeKey,
          { 'content-type': contentType },
        );
        expect({ contentType, status: response.status, code: response.body?.code }).toEqual({
          contentType,
          status: 400,
          code: 'invalid_request',
        });
      }
    });

    it('serves a request whose Expect is not 100-continue, and an absolute-form target', async () => {
      const body = JSON.stringify({
        type: 'track',
        event: 'Expecting',
        userId: 'u-1',
        messageId: randomUUID(),
      });
      const expecting = head('POST', '/v1/track', {
        ...trackingApi.headers(),
        expect: 'something-else',
        'content-length': String(body.length),
        connection: 'close',
      });
      const absolute = head('POST', 'http://collector.test/v1/track', {
        ...trackingApi.headers(),
        'content-length': String(body.length),
        connection: 'close',
      });
      for (const request of [expecting, absolute]) {
        const result = await exchange([request + body]);
        expect(result.responses.map(({ status, body }) => ({ status, body }))).toEqual([
          { status: 200, body: { success: true } },
        ]);
      }
    });

    it('answers CONNECT 404 (no proxy here), HTTP/2 without TLS 400, a head over 16 KiB in several reads 431', async () => {
      const connect = await exchange([head('CONNECT', 'example.com:443', { host: 'example.com:443' })]);
      expectTrackingError(expectOneAnswerThenClose(connect), 404, 'not_found');
      const http2 = await exchange(['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n']);
      expectTrackingError(expectOneAnswerThenClose(http2), 400, 'invalid_request');

      const start = `POST /v1/track HTTP/1.1\r\nhost: collector.test\r\n`;
      const split = await exchange([
        start,
        `x-padding: ${'p'.repeat(10_000)}`,
        `${'p'.repeat(10_000)}\r\n\r\n`,
      ]);
      expectTrackingError(expectOneAnswerThenClose(split), 431, 'headers_too_large');
    });
  });

  describe('Config API', () => {
    const createWorkspace = (slug: string) =>
      JSON.stringify({ workspace: { name: `workspaces/${slug}`, display_name: 'Edge' } });

    it('creates nothing from a body cut short by the client’s FIN, and answers it 400 code 3', async () => {
      const slug = `edge-${randomUUID().slice(0, 8)}`;
      const body = createWorkspace(slug);
      const request = head('POST', '/v1beta/workspaces', {
        ...configApiSurface.headers(),
        'content-type': 'application/json',
        'content-length': String(body.length),
      });
      const result = await exchange([request, body.slice(0, body.length - 5)], { finish: 'end' });
      expectConfigError(expectOneAnswerThenClose(result), 400, 3);
      expect((await configApi(instance, 'GET', `workspaces/${slug}`)).status).toBe(404);
    });

    it('reads JSON whatever the Content-Type says (curl -d sends form), refuses XML 400 code 3', async () => {
      const slug = `edge-${randomUUID().slice(0, 8)}`;
      const body = createWorkspace(slug);
      const form = await exchange([
        head('POST', '/v1beta/workspaces', {
          ...configApiSurface.headers(),
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(body.length),
          connection: 'close',
        }) + body,
      ]);
      expect(form.responses[0].status).toBe(200);
      expect((await configApi(instance, 'GET', `workspaces/${slug}`)).status).toBe(200);
      const xml = await exchange([
        head('POST', '/v1beta/workspaces', {
          ...configApiSurface.headers(),
          'content-type': 'application/xml',
          'content-length': '7',
          connection: 'close',
        }) + '<a></a>',
      ]);
      expectConfigError(xml.responses[0], 400, 3);
    });

    it('serves HTTP/1.0 without Host and closes after the answer', async () => {
      const { host: _host, ...headers } = configApiSurface.headers();
      const result = await exchange([head('GET', '/v1beta/workspaces', headers, 'HTTP/1.0')]);
      expect(result.closedByServer).toBe(true);
      expect(result.responses.map((response) => response.status)).toEqual([200]);
      expect(result.responses[0].body).toMatchObject({ workspaces: expect.any(Array) });
    });

    it('answers a head over 16 KiB arriving in several reads 431 with a JSON error body', async () => {
      // The read that overflows no longer holds the request line, so the all-in-one cannot tell the
      // API and answers in the tracking shape, which still has the `error` string Config API clients
      // read; the standalone Config API answers in its own (libs/platform http-edge.spec.ts).
      const start = `GET /v1beta/workspaces HTTP/1.1\r\nhost: config.test\r\n`;
      const split = await exchange([
        start,
        `x-padding: ${'p'.repeat(10_000)}`,
        `${'p'.repeat(10_000)}\r\n\r\n`,
      ]);
      const response = expectOneAnswerThenClose(split);
      expect(response.status).toBe(431);
      expect(response.body).toMatchObject({ error: expect.any(String) });
    });
  });
});
