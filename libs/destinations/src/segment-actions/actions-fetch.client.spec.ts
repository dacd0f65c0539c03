import { createServer, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { Agent as UndiciAgent } from 'undici';
import { createBufferedFetch } from './actions-fetch.client';

// The buffered fetch must answer what node-fetch answers, request for request: each case below is
// sent through both, to the same server, and what the server saw and what the caller got compared.

/* eslint-disable @typescript-eslint/no-require-imports */
const core = require.resolve('@segment/actions-core');
const nodeFetch = require(
  require.resolve('node-fetch', {
    paths: [dirname(require.resolve('cross-fetch', { paths: [dirname(core)] }))],
  }),
);
/* eslint-enable @typescript-eslint/no-require-imports */
const { Request } = nodeFetch;
const bufferedFetch = createBufferedFetch(nodeFetch) as (request: unknown) => Promise<unknown>;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

function withoutDate<T extends { headers: IncomingMessage['headers'] }>(seen: T): T {
  const headers = { ...seen.headers };
  delete headers.date;
  return { ...seen, headers };
}

describe('the buffered fetch of Actions requests', () => {
  let server: Server;
  let base: string;
  let handler: Handler;
  const seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const agent = new Agent({ keepAlive: true });
  const dispatcher = new UndiciAgent();
  const contacted: string[] = [];
  // As Tributary's `extendRequest` gives it: node-fetch's agent, and the dispatcher the buffered fetch sends with.
  const agentFn = Object.assign(() => agent, {
    dispatcherFor: (url: { hostname?: string | null }) => {
      contacted.push(String(url.hostname));
      return dispatcher;
    },
    destroy: () => undefined,
  });

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: Buffer.concat(chunks).toString(),
        });
        handler(request, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    agent.destroy();
    await dispatcher.close();
    await new Promise((resolve) => server.close(resolve));
  });

  /** What a fetch gave: the answer's parts, or the error's. */
  async function outcomeOf(
    fetch: (request: unknown) => Promise<unknown>,
    init: Record<string, unknown>,
    path = '/x',
  ) {
    const request = new Request(`${base}${path}`, { agent: agentFn, redirect: 'manual', ...init });
    try {
      const response = (await fetch(request)) as {
        status: number;
        statusText: string;
        url: string;
        headers: { raw(): Record<string, string[]> };
        text(): Promise<string>;
      };
      // Read without a clone: node-fetch's clone has neither the size cap nor the body timeout.
      const text = await response.text();
      const headers = { ...response.headers.raw() };
      delete headers['date'];
      return { status: response.status, statusText: response.statusText, url: response.url, headers, text };
    } catch (error) {
      const failure = error as { name: string; type?: string; code?: string; message: string };
      return { error: failure.name, type: failure.type, code: failure.code, message: failure.message };
    }
  }

  /** Sends the same request through node-fetch and the buffered fetch, expecting the same of both. */
  async function same(init: Record<string, unknown>, answer: Handler, path?: string) {
    handler = answer;
    seen.length = 0;
    const expected = await outcomeOf(nodeFetch, init, path);
    const fromNodeFetch = seen.splice(0).map(withoutDate);
    const actual = await outcomeOf(bufferedFetch, init, path);
    const fromBuffered = seen.splice(0).map(withoutDate);
    expect(actual).toEqual(expected);
    expect(fromBuffered).toEqual(fromNodeFetch);
    return actual;
  }

  const json: Handler = (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'x-many': ['a', 'b'] });
    response.end('{"ok":true}');
  };

  it('sends the same request and reads the same answer', async () => {
    const body = JSON.stringify({ events: [{ event_type: 'Song Played' }] });
    const outcome = await same(
      {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Segment (Actions)' },
      },
      json,
      '/2/httpapi?x=1',
    );
    expect(outcome).toMatchObject({ status: 200, text: '{"ok":true}' });
    await same({ method: 'GET' }, json);
    await same({ method: 'POST' }, json);
    await same(
      { method: 'PUT', compress: false, headers: { Accept: 'text/plain', Host: 'vendor.example' } },
      json,
    );
  });

  it('reads repeated answer headers as node-fetch reads them from node:http', async () => {
    const outcome = await same({}, (_request, response) => {
      response.setHeader('set-cookie', ['a=1', 'b=2']);
      response.setHeader('x-many', ['a', 'b']);
      response.setHeader('cookie', ['c=1', 'd=2']);
      response.setHeader('etag', ['"one"', '"two"']);
      response.end('ok');
    });
    expect(outcome).toMatchObject({
      headers: expect.objectContaining({ 'set-cookie': ['a=1', 'b=2'], 'x-many': ['a, b'], etag: ['"one"'] }),
    });
  });

  it('notes the host of every request it sends', async () => {
    handler = json;
    contacted.length = 0;
    await bufferedFetch(new Request(`${base}/a`, { agent: agentFn, redirect: 'manual' }));
    expect(contacted).toEqual(['127.0.0.1']);
  });

  it('sends the credentials of the URL as node-fetch does', async () => {
    handler = json;
    seen.length = 0;
    const withCredentials = base.replace('http://', 'http://user:p%40ss@');
    await nodeFetch(new Request(`${withCredentials}/a`, { agent: agentFn, redirect: 'manual' }));
    await bufferedFetch(new Request(`${withCredentials}/a`, { agent: agentFn, redirect: 'manual' }));
    expect(seen[1]!.headers.authorization).toBe(seen[0]!.headers.authorization);
    expect(seen[1]!.headers.authorization).toBe(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
  });

  it('decodes gzip, deflate (zlib and raw) and brotli, and leaves other codings alone', async () => {
    const text = 'a'.repeat(10_000);
    const encoded: [string, Buffer][] = [
      ['gzip', gzipSync(text)],
      ['x-gzip', gzipSync(text)],
      ['deflate', deflateSync(text)],
      ['deflate', deflateRawSync(text)],
      ['br', brotliCompressSync(text)],
      ['identity', Buffer.from(text)],
    ];
    for (const [coding, bytes] of encoded) {
      const outcome = await same({}, (_request, response) => {
        response.writeHead(200, { 'content-encoding': coding });
        response.end(bytes);
      });
      expect(outcome).toMatchObject({ text });
    }
    // No body at all under a coding.
    await same({}, (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'deflate' });
      response.end();
    });
    await same({ compress: false }, (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end(gzipSync(text));
    });
  });

  it('fails a corrupt encoded answer as node-fetch does', async () => {
    await same({}, (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end('not gzip');
    });
  });

  it('caps the decoded answer at the request size', async () => {
    const outcome = await same({ size: 1_000 }, (_request, response) => {
      response.writeHead(200, { 'content-encoding': 'gzip' });
      response.end(gzipSync(Buffer.alloc(1_000_000)));
    });
    expect(outcome).toMatchObject({ error: 'FetchError', type: 'max-size' });
    await same({ size: 1_000 }, (_request, response) => response.end('x'.repeat(1_000)));
  });

  it('reports a redirect with its Location made absolute, never following it', async () => {
    for (const location of ['/elsewhere?a=1', 'https://other.example/b', 'http://[bad']) {
      const outcome = await same({ method: 'POST', body: 'x' }, (_request, response) => {
        response.writeHead(302, { location });
        response.end();
      });
      expect(outcome).toMatchObject({ status: 302 });
    }
  });

  it('times out waiting for the answer, and for its body', async () => {
    const headersLate = await same({ timeout: 100 }, (_request, response) => {
      setTimeout(() => response.end('late'), 400);
    });
    expect(headersLate).toMatchObject({ error: 'FetchError', type: 'request-timeout' });
    const bodyLate = await same({ timeout: 100 }, (_request, response) => {
      response.writeHead(200);
      response.write('part');
      setTimeout(() => response.end('late'), 400);
    });
    expect(bodyLate).toMatchObject({ error: 'FetchError', type: 'body-timeout' });
  });

  it('stops at an abort, before and during the request', async () => {
    const aborted = new AbortController();
    aborted.abort();
    expect(await same({ signal: aborted.signal }, json)).toMatchObject({ error: 'AbortError' });
    const later = () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      return controller.signal;
    };
    handler = (_request, response) => setTimeout(() => response.end('late'), 300);
    const expected = await outcomeOf(nodeFetch, { signal: later() });
    const actual = await outcomeOf(bufferedFetch, { signal: later() });
    expect(actual).toEqual(expected);
    expect(actual).toMatchObject({ error: 'AbortError' });
  });

  it('fails a connection that ends before the answer does', async () => {
    // node-fetch waits for such a body until its timeout (the stream it pipes into never ends): both
    // are a FetchError, which an action reports as a connection error; this one says so at once.
    handler = (_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('short');
      setTimeout(() => response.socket?.destroy(), 20);
    };
    const started = Date.now();
    expect(await outcomeOf(bufferedFetch, { timeout: 5_000 })).toMatchObject({
      error: 'FetchError',
      type: 'system',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await outcomeOf(nodeFetch, { timeout: 200 })).toMatchObject({ error: 'FetchError' });
    await same({}, (request) => request.socket.destroy());
  });

  it('reports a refused connection as node-fetch does', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const init = { agent: agentFn, redirect: 'manual' };
    const url = `http://127.0.0.1:${port}/x`;
    const outcome = async (fetch: (request: unknown) => Promise<unknown>) =>
      fetch(new Request(url, init)).catch(
        (error: { name: string; type: string; code: string; message: string }) => ({
          error: error.name,
          type: error.type,
          code: error.code,
          message: error.message,
        }),
      );
    const expected = await outcome(nodeFetch);
    expect(await outcome(bufferedFetch)).toEqual(expected);
    expect(expected).toMatchObject({ error: 'FetchError', type: 'system', code: 'ECONNREFUSED' });
  });

  it('leaves to node-fetch what it does not buffer', async () => {
    handler = json;
    const calls: unknown[] = [];
    const fallback = createBufferedFetch(nodeFetch, (request) => {
      calls.push(request);
      return nodeFetch(request);
    }) as (request: unknown) => Promise<unknown>;
    const follow = new Request(`${base}/x`, { agent: agentFn });
    const withAgentObject = new Request(`${base}/x`, { agent, redirect: 'manual' });
    const head = new Request(`${base}/x`, { agent: agentFn, redirect: 'manual', method: 'HEAD' });
    const withoutDispatcher = new Request(`${base}/x`, {
      agent: Object.assign(() => agent, { destroy: () => undefined }),
      redirect: 'manual',
    });
    // A header undici manages itself goes as the destination gave it.
    const closing = new Request(`${base}/x`, {
      agent: agentFn,
      redirect: 'manual',
      headers: { Connection: 'close' },
    });
    const { Readable } = await import('node:stream');
    const streamed = new Request(`${base}/x`, {
      agent: agentFn,
      redirect: 'manual',
      method: 'POST',
      body: Readable.from(['a']),
    });
    const unbuffered = [follow, withAgentObject, head, withoutDispatcher, closing, streamed];
    for (const request of unbuffered) await fallback(request);
    expect(calls).toEqual(unbuffered);
    await fallback(new Request(`${base}/x`, { agent: agentFn, redirect: 'manual' }));
    expect(calls).toHaveLength(unbuffered.length);
  });
});
