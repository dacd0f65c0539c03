import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { NormalizedMessage } from '@tributary/contracts';
import { EgressGuard, type HostResolver } from '../delivery/egress/egress-guard';
import { parseEgressPolicy } from '../delivery/egress/egress-policy';
import { MAX_WEBHOOK_HEADER_VALUE_BYTES, MAX_WEBHOOK_HEADERS } from './webhook-settings.validator';
import { readWebhookTarget, WebhooksDeliveryAdapter } from './webhooks.adapter';

/**
 * The receivers here listen on loopback, whose responses the adapter keeps out of reasons unless the
 * operator allow-lists the address; most tests look at those reasons, so they allow-list it.
 */
const vouchedLoopback = () => new EgressGuard(parseEgressPolicy('open', '127.0.0.1'));

interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The client's port: requests over one kept-alive connection share it. */
  clientPort: number | undefined;
}

/** A real HTTP receiver on loopback; the path picks how it answers. */
class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly hangingResponses: ServerResponse[] = [];
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        this.requests.push({
          method: request.method ?? '',
          path,
          headers: request.headers,
          body: Buffer.concat(chunks),
          clientPort: request.socket.remotePort,
        });
        this.answer(path, response);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private answer(path: string, response: ServerResponse): void {
    switch (path) {
      case '/ok':
        response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
        return;
      case '/created':
        response.writeHead(201).end();
        return;
      case '/fail':
        response.writeHead(500).end('database exploded');
        return;
      case '/busy':
        response.writeHead(429, { 'retry-after': '7' }).end('slow down');
        return;
      case '/unavailable':
        response.writeHead(503, { 'retry-after': new Date(Date.now() + 60_000).toUTCString() }).end();
        return;
      case '/bad-gateway-with-retry-after':
        response.writeHead(502, { 'retry-after': '30' }).end();
        return;
      case '/missing':
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'no such hook', detail: 'x'.repeat(5_000) }));
        return;
      case '/unauthorized':
        response.writeHead(401).end('bad token');
        return;
      case '/request-timeout':
        response.writeHead(408).end();
        return;
      case '/moved':
        response.writeHead(301, { location: '/ok' }).end();
        return;
      case '/hang':
        this.hangingResponses.push(response);
        return;
      default:
        response.writeHead(418).end();
    }
  }

  async stop(): Promise<void> {
    for (const response of this.hangingResponses) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function trackMessage(
  messageId: string,
  properties: Record<string, unknown> = { plan: 'pro' },
): NormalizedMessage {
  return {
    type: 'track',
    event: 'Order Completed',
    messageId,
    userId: 'user-1',
    properties,
    context: { library: { name: 'analytics-node', version: '3.1.0' } },
    integrations: {},
    timestamp: '2026-01-02T03:04:05.678Z',
    receivedAt: '2026-01-02T03:04:06.000Z',
  };
}

async function freePortWithNothingListening(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('WebhooksDeliveryAdapter against a real HTTP server', () => {
  const receiver = new WebhookReceiver();
  const adapter = new WebhooksDeliveryAdapter({ timeoutMs: 300, egressGuard: vouchedLoopback() });

  beforeAll(() => receiver.start());
  afterAll(async () => {
    await adapter.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
  });

  const deliverOne = (path: string, message = trackMessage('m-1'), settings: Record<string, unknown> = {}) =>
    adapter.deliver({ settings: { url: `${receiver.baseUrl}${path}`, ...settings }, messages: [message] });

  it('POSTs the message as JSON and reports delivered on 200', async () => {
    const message = trackMessage('m-200');
    const results = await deliverOne('/ok', message);

    expect(results).toEqual([{ messageId: 'm-200', outcome: 'delivered' }]);
    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request!.body.toString('utf8'))).toEqual(message);
    expect(request!.headers['x-signature']).toBeUndefined();
  });

  it('treats any 2xx as delivered', async () => {
    expect(await deliverOne('/created')).toEqual([{ messageId: 'm-1', outcome: 'delivered' }]);
  });

  it('signs the exact body bytes with HMAC-SHA1 of the shared secret', async () => {
    // Non-ASCII content checks that the signature covers the UTF-8 bytes actually sent.
    const message = trackMessage('m-signed', { city: 'Zürich', emoji: '🚀' });
    const results = await deliverOne('/ok', message, { shared_secret: 'hush-hush' });

    expect(results[0]!.outcome).toBe('delivered');
    const [request] = receiver.requests;
    const expected = createHmac('sha1', 'hush-hush').update(request!.body).digest('hex');
    expect(request!.headers['x-signature']).toBe(expected);
    expect(request!.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/);
    const withOtherSecret = createHmac('sha1', 'other').update(request!.body).digest('hex');
    expect(request!.headers['x-signature']).not.toBe(withOtherSecret);
  });

  it('sends and signs the stored JSON of a message as given, without serializing it again', async () => {
    const message = trackMessage('m-stored', { city: 'Zürich' });
    // The same JSON written differently (an escaped ü, a space), so the test sees which bytes went out.
    const storedPayload = Buffer.from(JSON.stringify(message).replace('ü', '\\u00fc').replace('{', '{ '));
    const results = await adapter.deliver({
      settings: { url: `${receiver.baseUrl}/ok`, shared_secret: 'hush-hush' },
      messages: [message, trackMessage('m-serialized')],
      storedPayload: [storedPayload, undefined],
    });

    expect(results.map((result) => result.outcome)).toEqual(['delivered', 'delivered']);
    const byId = new Map(
      receiver.requests.map((request) => [JSON.parse(request.body.toString('utf8')).messageId, request]),
    );
    const stored = byId.get('m-stored')!;
    expect(stored.body.equals(storedPayload)).toBe(true);
    expect(JSON.parse(stored.body.toString('utf8'))).toEqual(message);
    expect(stored.headers['x-signature']).toBe(
      createHmac('sha1', 'hush-hush').update(storedPayload).digest('hex'),
    );
    expect(byId.get('m-serialized')!.body.toString('utf8')).toBe(
      JSON.stringify(trackMessage('m-serialized')),
    );
  });

  it('sends the configured headers but never lets them override host, length, type or signature', async () => {
    await deliverOne('/ok', trackMessage('m-headers'), {
      shared_secret: 's3cret',
      headers: {
        Authorization: 'Bearer abc',
        'X-Custom': 'yes',
        Host: 'evil.example',
        'Content-Length': '1',
        'Content-Type': 'text/plain',
        'X-Signature': 'forged',
      },
    });

    const [request] = receiver.requests;
    expect(request!.headers['authorization']).toBe('Bearer abc');
    expect(request!.headers['x-custom']).toBe('yes');
    expect(request!.headers['host']).toBe(new URL(receiver.baseUrl).host);
    expect(request!.headers['content-type']).toBe('application/json');
    expect(Number(request!.headers['content-length'])).toBe(request!.body.length);
    expect(request!.headers['x-signature']).toBe(
      createHmac('sha1', 's3cret').update(request!.body).digest('hex'),
    );
  });

  it('turns credentials in the URL into Basic authentication', async () => {
    const url = receiver.baseUrl.replace('http://', 'http://hook%20user:p%40ss@') + '/ok';
    const results = await adapter.deliver({ settings: { url }, messages: [trackMessage('m-basic')] });

    expect(results[0]!.outcome).toBe('delivered');
    const expected = `Basic ${Buffer.from('hook user:p@ss').toString('base64')}`;
    expect(receiver.requests[0]!.headers['authorization']).toBe(expected);
  });

  it('retries on 500 and keeps the status and body excerpt', async () => {
    expect(await deliverOne('/fail')).toEqual([
      { messageId: 'm-1', outcome: 'retry', status: 500, reason: 'HTTP 500: database exploded' },
    ]);
  });

  it('retries on 429 and honours Retry-After in seconds', async () => {
    expect(await deliverOne('/busy')).toEqual([
      { messageId: 'm-1', outcome: 'retry', status: 429, reason: 'HTTP 429: slow down', retryAfterMs: 7_000 },
    ]);
  });

  it('retries on 503 and honours Retry-After as an HTTP date', async () => {
    const [result] = await deliverOne('/unavailable');
    expect(result).toMatchObject({ outcome: 'retry', status: 503 });
    const retryAfterMs = (result as { retryAfterMs?: number }).retryAfterMs;
    // HTTP dates have one-second resolution.
    expect(retryAfterMs).toBeGreaterThan(55_000);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('ignores Retry-After on statuses other than 429 and 503', async () => {
    const [result] = await deliverOne('/bad-gateway-with-retry-after');
    expect(result).toEqual({ messageId: 'm-1', outcome: 'retry', status: 502, reason: 'HTTP 502' });
  });

  it('retries on 408', async () => {
    expect(await deliverOne('/request-timeout')).toEqual([
      { messageId: 'm-1', outcome: 'retry', status: 408, reason: 'HTTP 408' },
    ]);
  });

  it('discards on 404 with the status and a short excerpt of the body', async () => {
    const [result] = await deliverOne('/missing');
    expect(result).toMatchObject({ messageId: 'm-1', outcome: 'discard', status: 404 });
    const reason = (result as { reason: string }).reason;
    expect(reason.startsWith('HTTP 404: {"error":"no such hook"')).toBe(true);
    expect(reason.length).toBeLessThan(260);
  });

  it('discards on 401', async () => {
    expect(await deliverOne('/unauthorized')).toEqual([
      { messageId: 'm-1', outcome: 'discard', status: 401, reason: 'HTTP 401: bad token' },
    ]);
  });

  it('does not follow redirects (a redirected POST would lose its body) and discards with a hint', async () => {
    const [result] = await deliverOne('/moved');
    expect(result).toMatchObject({ outcome: 'discard', status: 301 });
    expect((result as { reason: string }).reason).toContain('redirects are not followed');
    expect(receiver.requests.map((request) => request.path)).toEqual(['/moved']);
  });

  it('retries when the receiver does not answer within the timeout', async () => {
    const startedAt = Date.now();
    const results = await deliverOne('/hang');
    expect(results).toEqual([{ messageId: 'm-1', outcome: 'retry', reason: 'timeout after 300 ms' }]);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });

  it('retries when the connection is refused', async () => {
    const port = await freePortWithNothingListening();
    const results = await adapter.deliver({
      settings: { url: `http://127.0.0.1:${port}/hook` },
      messages: [trackMessage('m-refused')],
    });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ messageId: 'm-refused', outcome: 'retry' });
    expect((results[0] as { reason: string }).reason).toContain('ECONNREFUSED');
  });

  it('discards every message of a misconfigured destination with the reason, without sending', async () => {
    const messages = [trackMessage('a'), trackMessage('b')];
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'setting "url" is not set'],
      [{ url: 'not a url' }, 'not a valid URL'],
      [{ url: 'ftp://example.com/' }, 'http(s)'],
      [{ url: `${receiver.baseUrl}/ok`, headers: { 'X-Bad': 'line\r\nbreak' } }, 'CR, LF or NUL'],
      [{ url: `${receiver.baseUrl}/ok`, headers: { 'Bad Name': 'x' } }, 'a name holds only'],
      [{ url: `${receiver.baseUrl}/ok`, headers: { 'X-Number': 3 } }, 'must be a string'],
    ];
    for (const [settings, reasonPart] of cases) {
      const results = await adapter.deliver({ settings, messages });
      expect(results.map((result) => result.messageId)).toEqual(['a', 'b']);
      for (const result of results) {
        expect(result.outcome).toBe('discard');
        expect((result as { reason: string }).reason).toContain(reasonPart);
      }
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('delivers several messages, one request each, results in input order', async () => {
    const messages = Array.from({ length: 20 }, (_, index) => trackMessage(`m-${index}`));
    const results = await adapter.deliver({ settings: { url: `${receiver.baseUrl}/ok` }, messages });

    expect(results.map((result) => result.messageId)).toEqual(messages.map((message) => message.messageId));
    expect(results.every((result) => result.outcome === 'delivered')).toBe(true);
    const receivedIds = receiver.requests.map(
      (request) => JSON.parse(request.body.toString('utf8')).messageId,
    );
    expect(receivedIds.sort()).toEqual(messages.map((message) => message.messageId).sort());
  });

  it('keeps the connection alive between requests, after failures with short bodies too', async () => {
    const paths = ['/ok', '/fail', '/unauthorized', '/ok', '/fail', '/busy', '/ok', '/ok'];
    const oneAtATime = new WebhooksDeliveryAdapter({
      timeoutMs: 2_000,
      maxConcurrentRequests: 1,
      egressGuard: vouchedLoopback(),
    });
    try {
      for (const path of paths) {
        await oneAtATime.deliver({
          settings: { url: `${receiver.baseUrl}${path}` },
          messages: [trackMessage('m-alive')],
        });
      }
    } finally {
      await oneAtATime.close();
    }
    expect(receiver.requests.map((request) => request.path)).toEqual(paths);
    // undici frees a connection for the next request a tick after the answer, so a request sent at once
    // may open a second one; what must not happen is a connection per request (a failure closing it).
    expect(new Set(receiver.requests.map((request) => request.clientPort)).size).toBeLessThanOrEqual(2);
  });

  it('answers an empty request with no results and no request', async () => {
    expect(await adapter.deliver({ settings: { url: `${receiver.baseUrl}/ok` }, messages: [] })).toEqual([]);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('WebhooksDeliveryAdapter behind the egress guard', () => {
  const receiver = new WebhookReceiver();
  const port = () => new URL(receiver.baseUrl).port;
  const adapters: WebhooksDeliveryAdapter[] = [];
  const adapterWith = (guard: EgressGuard) => {
    const adapter = new WebhooksDeliveryAdapter({ timeoutMs: 2_000, egressGuard: guard });
    adapters.push(adapter);
    return adapter;
  };
  const loopbackResolver: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];

  beforeAll(() => receiver.start());
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
  });

  it('discards with egress_denied under public, by IP literal and by name, and sends nothing', async () => {
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('public', undefined), loopbackResolver));
    for (const url of [`${receiver.baseUrl}/ok`, `http://hooks.example:${port()}/ok`]) {
      const results = await adapter.deliver({
        settings: { url },
        messages: [trackMessage('a'), trackMessage('b')],
      });
      expect(results.map((result) => result.outcome)).toEqual(['discard', 'discard']);
      for (const result of results) {
        expect((result as { reason: string }).reason).toMatch(/^egress_denied: 127\.0\.0\.1 is in loopback/);
      }
    }
    expect(receiver.requests).toHaveLength(0);
  });

  it('refuses the cloud metadata address under open, literal or resolved', async () => {
    const metadataResolver: HostResolver = async () => [{ address: '169.254.169.254', family: 4 }];
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('open', undefined), metadataResolver));
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://metadata.internal/computeMetadata/v1/',
      'http://0.0.0.0:9/',
      // Other spellings of 169.254.169.254 that URL parsing turns into the dotted form.
      'http://2852039166/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://0251.0376.0251.0376/',
    ]) {
      const [result] = await adapter.deliver({ settings: { url }, messages: [trackMessage('m')] });
      expect(result).toMatchObject({ outcome: 'discard' });
      expect((result as { reason: string }).reason).toMatch(/^egress_denied: /);
    }
  });

  it('delivers to an allow-listed name under public, with the name in the Host header', async () => {
    const adapter = adapterWith(
      new EgressGuard(parseEgressPolicy('public', 'hooks.example'), loopbackResolver),
    );
    const [result] = await adapter.deliver({
      settings: { url: `http://hooks.example:${port()}/ok` },
      messages: [trackMessage('m')],
    });
    expect(result).toEqual({ messageId: 'm', outcome: 'delivered' });
    expect(receiver.requests[0]!.headers['host']).toBe(`hooks.example:${port()}`);
  });

  it('keeps the name for TLS (SNI and certificate checks) while connecting to the checked address', async () => {
    // A TLS server on loopback that records the server name the client asks for, then ends the
    // handshake: it has no certificate to offer, and the name is all this test needs.
    const serverNames: string[] = [];
    const tlsServer = createTlsServer({
      SNICallback: (serverName, callback) => {
        serverNames.push(serverName);
        callback(new Error('no certificate here'), undefined);
      },
    });
    await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
    try {
      const tlsPort = (tlsServer.address() as AddressInfo).port;
      const adapter = adapterWith(
        new EgressGuard(parseEgressPolicy('public', 'hooks.example'), loopbackResolver),
      );
      const [result] = await adapter.deliver({
        settings: { url: `https://hooks.example:${tlsPort}/in` },
        messages: [trackMessage('m')],
      });
      expect(result).toMatchObject({ outcome: 'retry' });
      expect(serverNames).toEqual(['hooks.example']);
    } finally {
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    }
  });

  it('checks every new connection: a name that rebinds to a refused address is never connected to', async () => {
    let calls = 0;
    // First answer allowed (127.0.0.1 is allow-listed); later ones name the metadata service.
    const rebinding: HostResolver = async () =>
      calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '169.254.169.254', family: 4 }];
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('public', '127.0.0.1'), rebinding));
    // Sent together, so each opens its own connection and resolves on its own.
    const results = await adapter.deliver({
      settings: { url: `http://rebind.example:${port()}/ok` },
      messages: [trackMessage('m-1'), trackMessage('m-2'), trackMessage('m-3')],
    });
    const delivered = results.filter((result) => result.outcome === 'delivered');
    const denied = results.filter(
      (result) => result.outcome === 'discard' && result.reason.startsWith('egress_denied: 169.254.169.254'),
    );
    expect(calls).toBe(3);
    expect(delivered).toHaveLength(1);
    expect(denied).toHaveLength(2);
    expect(receiver.requests).toHaveLength(1);
  });

  it('keeps the response body of a loopback or private target out of the reason under open', async () => {
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('open', undefined), loopbackResolver));
    for (const url of [`${receiver.baseUrl}/fail`, `http://hooks.example:${port()}/fail`]) {
      expect(await adapter.deliver({ settings: { url }, messages: [trackMessage('m')] })).toEqual([
        { messageId: 'm', outcome: 'retry', status: 500, reason: 'HTTP 500' },
      ]);
    }
    const [missing] = await adapter.deliver({
      settings: { url: `${receiver.baseUrl}/missing` },
      messages: [trackMessage('m')],
    });
    expect(missing).toEqual({ messageId: 'm', outcome: 'discard', status: 404, reason: 'HTTP 404' });
  });

  it('does not follow a redirect towards the metadata address', async () => {
    const adapter = adapterWith(new EgressGuard(parseEgressPolicy('open', '127.0.0.1')));
    const [result] = await adapter.deliver({
      settings: { url: `${receiver.baseUrl}/moved` },
      messages: [trackMessage('m')],
    });
    expect(result).toMatchObject({ outcome: 'discard', status: 301 });
    expect(receiver.requests.map((request) => request.path)).toEqual(['/moved']);
  });
});

describe('WebhooksDeliveryAdapter signature timestamp', () => {
  const receiver = new WebhookReceiver();
  const now = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const adapter = new WebhooksDeliveryAdapter({ timeoutMs: 2_000, now: () => now });

  beforeAll(() => receiver.start());
  afterAll(async () => {
    await adapter.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.requests.length = 0;
  });

  it('is off by default: the signature covers the body alone and no timestamp header is sent', async () => {
    await adapter.deliver({
      settings: { url: `${receiver.baseUrl}/ok`, shared_secret: 's3cret' },
      messages: [trackMessage('m')],
    });
    const [request] = receiver.requests;
    expect(request!.headers['x-signature-timestamp']).toBeUndefined();
    expect(request!.headers['x-signature']).toBe(
      createHmac('sha1', 's3cret').update(request!.body).digest('hex'),
    );
  });

  it('when on, sends X-Signature-Timestamp and signs "<timestamp>.<body>"', async () => {
    await adapter.deliver({
      settings: {
        url: `${receiver.baseUrl}/ok`,
        shared_secret: 's3cret',
        signature_timestamp: true,
        headers: { 'X-Signature-Timestamp': '1' },
      },
      messages: [trackMessage('m')],
    });
    const [request] = receiver.requests;
    const timestamp = String(Math.floor(now / 1000));
    expect(request!.headers['x-signature-timestamp']).toBe(timestamp);
    expect(request!.headers['x-signature']).toBe(
      createHmac('sha1', 's3cret').update(`${timestamp}.`).update(request!.body).digest('hex'),
    );
  });

  it('sends no timestamp without a shared secret, and refuses a non-boolean setting', async () => {
    await adapter.deliver({
      settings: { url: `${receiver.baseUrl}/ok`, signature_timestamp: true },
      messages: [trackMessage('m')],
    });
    expect(receiver.requests[0]!.headers['x-signature-timestamp']).toBeUndefined();
    expect(readWebhookTarget({ url: 'https://example.com/', signature_timestamp: 'yes' })).toBe(
      'setting "signature_timestamp" must be a boolean',
    );
  });
});

describe('readWebhookTarget on hostile headers', () => {
  it('trims header values in linear time (a long run of inner whitespace)', () => {
    const value = `a${' '.repeat(MAX_WEBHOOK_HEADER_VALUE_BYTES - 2)}b`;
    const headers = Object.fromEntries(
      Array.from({ length: MAX_WEBHOOK_HEADERS }, (_, index) => [`X-Padding-${index}`, value]),
    );
    const startedAt = performance.now();
    const target = readWebhookTarget({ url: 'https://example.com/', headers });
    // The regular expression this replaced took seconds per header here.
    expect(performance.now() - startedAt).toBeLessThan(500);
    expect(typeof target === 'object' && target.headers['x-padding-0']).toBe(value);
  });

  it('trims leading and trailing HTTP whitespace only', () => {
    const target = readWebhookTarget({
      url: 'https://example.com/',
      headers: { 'X-A': ' \t value with  inner  spaces \t ' },
    });
    expect(typeof target === 'object' && target.headers['x-a']).toBe('value with  inner  spaces');
  });

  it.each([
    [
      { headers: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`X-${index}`, 'v'])) },
      'at most 50',
    ],
    [{ headers: { ['X'.repeat(257)]: 'v' } }, 'at most 256 bytes'],
    [{ headers: { 'X-Big': 'v'.repeat(8 * 1024 + 1) } }, 'at most 8192 bytes'],
    [{ headers: { 'X-Nul': 'a\u0000b' } }, 'CR, LF or NUL'],
    [{ headers: { 'X(bad)': 'v' } }, 'a name holds only'],
    [{ headers: ['X-A'] }, 'map of strings'],
  ])('refuses %#: %s', (settings, problem) => {
    const target = readWebhookTarget({ url: 'https://example.com/', ...settings });
    expect(target).toEqual(expect.stringContaining(problem));
  });
});
