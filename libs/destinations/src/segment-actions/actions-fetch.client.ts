/**
 * The `fetch` under `@segment/actions-core`'s request client, for the requests Tributary's
 * `extendRequest` shapes (an `agent` function, `redirect: 'manual'`, a body already in memory): the
 * same request through the same `node:http(s)` call and egress agents as node-fetch 2 makes it (same
 * headers and defaults, same timeouts, size cap, abort and errors, node-fetch's own `Response`,
 * `FetchError` and `AbortError`), but the answer is read whole, decompressed and capped, into a
 * `Buffer`-bodied `Response` before it is handed back. node-fetch pipes every answer through a
 * `PassThrough`, and actions-core's `prepareResponse` clones it (a tee of two more) to read it as
 * text: streams that cost more than the request itself. Any other request (a streamed body, a
 * redirect mode of a destination's own, an agent that is not a function) goes to node-fetch as before.
 *
 * `installBufferedFetch` puts it in place of actions-core's, which its request client reads from its
 * fetch module at each request.
 */
import { request as httpRequest, type IncomingMessage, type Agent } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import {
  constants as zlibConstants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
} from 'node:zlib';

/** node-fetch 2's `Headers`, as far as this module uses it. */
interface FetchHeaders {
  has(name: string): boolean;
  get(name: string): string | null;
  set(name: string, value: string): void;
  raw(): Record<string, string[]>;
}

/** node-fetch 2's `Request`, as far as this module uses it. */
interface FetchRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: FetchHeaders;
  readonly redirect: string;
  readonly signal: AbortSignal | null;
  readonly body: unknown;
  readonly agent?: unknown;
  readonly compress: boolean;
  readonly timeout: number;
  readonly size: number;
  readonly counter: number;
}

interface NodeFetch {
  (request: FetchRequest): Promise<unknown>;
  Headers: new (init?: unknown) => FetchHeaders;
  Response: new (body: Buffer, init: Record<string, unknown>) => unknown;
  FetchError: new (message: string, type: string, systemError?: unknown) => Error;
  AbortError: new (message: string) => Error;
}

type Fetch = (request: FetchRequest) => Promise<unknown>;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
// node-fetch's checks of a header name and value (it leaves out what fails them).
const INVALID_TOKEN = /[^^_`a-zA-Z\-0-9!#$%&'*+.|~]/;
const INVALID_HEADER_CHARACTER = /[^\t\x20-\x7e\x80-\xff]/;

/** Whether this module reads `request`'s answer, or node-fetch does. */
function isBuffered(request: FetchRequest): boolean {
  return (
    request.redirect === 'manual' &&
    typeof request.agent === 'function' &&
    (request.body === null || request.body === undefined || Buffer.isBuffer(request.body))
  );
}

export function createBufferedFetch(nodeFetch: NodeFetch, fallback: Fetch = nodeFetch): Fetch {
  const { Headers, Response, FetchError, AbortError } = nodeFetch;
  return (request) => {
    if (!isBuffered(request)) return fallback(request);
    return new Promise((resolve, reject) => {
      const { url, signal, timeout, size } = request;
      const body = request.body as Buffer | null | undefined;
      // getNodeRequestOptions of node-fetch 2, step for step.
      const headers = new Headers(request.headers);
      if (!headers.has('Accept')) headers.set('Accept', '*/*');
      const parsed = new URL(url);
      const { protocol } = parsed;
      if (protocol !== 'https:' && protocol !== 'http:') {
        throw new TypeError('Only HTTP(S) protocols are supported');
      }
      let contentLength: string | null = null;
      if (body == null && /^(POST|PUT)$/i.test(request.method)) contentLength = '0';
      if (body != null) contentLength = String(body.length);
      if (contentLength) headers.set('Content-Length', contentLength);
      if (!headers.has('User-Agent')) {
        headers.set('User-Agent', 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)');
      }
      if (request.compress && !headers.has('Accept-Encoding')) headers.set('Accept-Encoding', 'gzip,deflate');
      // urlToHttpOptions gives what url.parse gave node-fetch, and its agent function: the host without
      // IPv6 brackets, the path with its query, the credentials of the URL as `auth`.
      const target = urlToHttpOptions(parsed);
      const agent = (request.agent as (url: typeof target) => Agent)(target);
      const nodeHeaders: Record<string, string | string[]> = { ...headers.raw() };
      // http.request takes only a string as the Host header.
      for (const name of Object.keys(nodeHeaders))
        if (name.toLowerCase() === 'host') nodeHeaders[name] = (nodeHeaders[name] as string[])[0]!;

      if (signal?.aborted) {
        reject(new AbortError('The user aborted a request.'));
        return;
      }
      const send = protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send({
        ...target,
        method: request.method,
        headers: nodeHeaders,
        agent,
      });
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let answer: Readable | undefined;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        answer?.destroy();
        outgoing.destroy();
        reject(error);
      };
      const onAbort = () => fail(new AbortError('The user aborted a request.'));
      signal?.addEventListener('abort', onAbort);
      if (timeout) {
        outgoing.once('socket', () => {
          if (settled || answer) return;
          timer = setTimeout(
            () => fail(new FetchError(`network timeout at: ${url}`, 'request-timeout')),
            timeout,
          );
        });
      }
      outgoing.on('error', (error: Error) =>
        fail(new FetchError(`request to ${url} failed, reason: ${error.message}`, 'system', error)),
      );
      outgoing.on('response', (response: IncomingMessage) => {
        clearTimeout(timer);
        const answerHeaders = headersOf(response, Headers);
        if (REDIRECT_STATUSES.has(response.statusCode ?? 0)) {
          // node-fetch's manual mode: Location made absolute, left as it is when it is no URL.
          const location = answerHeaders.get('Location');
          if (location !== null) {
            try {
              answerHeaders.set('Location', new URL(location, url).toString());
            } catch {
              // As node-fetch: an invalid Location is left for the caller to see.
            }
          }
        }
        answer = decoded(request, response, answerHeaders);
        if (timeout) {
          timer = setTimeout(
            () =>
              fail(
                new FetchError(
                  `Response timeout while trying to fetch ${url} (over ${timeout}ms)`,
                  'body-timeout',
                ),
              ),
            timeout,
          );
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        answer.on('data', (chunk: Buffer) => {
          if (settled) return;
          if (size && bytes + chunk.length > size) {
            fail(new FetchError(`content size at ${url} over limit: ${size}`, 'max-size'));
            return;
          }
          bytes += chunk.length;
          chunks.push(chunk);
        });
        answer.on('error', (error: Error) =>
          fail(
            error.name === 'AbortError'
              ? error
              : new FetchError(
                  `Invalid response body while trying to fetch ${url}: ${error.message}`,
                  'system',
                  error,
                ),
          ),
        );
        // A connection that closes before the answer is complete ends it without 'end'.
        response.on('close', () => {
          if (!response.complete) {
            const premature = Object.assign(new Error('Premature close'), {
              code: 'ERR_STREAM_PREMATURE_CLOSE',
            });
            fail(
              new FetchError(
                `Invalid response body while trying to fetch ${url}: ${premature.message}`,
                'system',
                premature,
              ),
            );
          }
        });
        answer.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(
            new Response(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes), {
              url,
              status: response.statusCode,
              statusText: response.statusMessage,
              headers: answerHeaders,
              size,
              timeout,
              counter: request.counter,
            }),
          );
        });
      });
      outgoing.end(body ?? undefined);
    });
  };
}

/** node-fetch's `createHeadersLenient`: the answer's headers, without the names and values it refuses. */
function headersOf(response: IncomingMessage, Headers: NodeFetch['Headers']): FetchHeaders {
  const headers = new Headers();
  const map = headers.raw();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined || INVALID_TOKEN.test(name)) continue;
    const values = (Array.isArray(value) ? value : [value]).filter(
      (entry) => !INVALID_HEADER_CHARACTER.test(entry),
    );
    if (values.length > 0) map[name] = values;
  }
  return headers;
}

/** The answer's body as node-fetch decodes it: by its Content-Encoding, when the request allows it. */
function decoded(request: FetchRequest, response: IncomingMessage, headers: FetchHeaders): Readable {
  const codings = headers.get('Content-Encoding');
  if (!request.compress || request.method === 'HEAD' || codings === null) return response;
  if (response.statusCode === 204 || response.statusCode === 304) return response;
  // As cURL and node-fetch: lenient with answers that end without a final flush.
  const lenient = { flush: zlibConstants.Z_SYNC_FLUSH, finishFlush: zlibConstants.Z_SYNC_FLUSH };
  if (codings === 'gzip' || codings === 'x-gzip') return response.pipe(createGunzip(lenient));
  if (codings === 'br') return response.pipe(createBrotliDecompress());
  if (codings === 'deflate' || codings === 'x-deflate') {
    // Old servers send raw deflate: the first byte tells which (node-fetch's test).
    const output = new PassThrough();
    let started = false;
    response.once('data', (first: Buffer) => {
      started = true;
      const inflate = (first[0]! & 0x0f) === 0x08 ? createInflate() : createInflateRaw();
      inflate.on('error', (error) => output.destroy(error));
      inflate.pipe(output);
      inflate.write(first);
      response.pipe(inflate);
    });
    response.once('end', () => {
      if (!started) output.end();
    });
    return output;
  }
  return response;
}

let installed = false;

/** Puts the buffered fetch in place of actions-core's, once per thread (see the module's comment). */
export function installBufferedFetch(): void {
  if (installed) return;
  // The fetch module is not among the package's exports: it is reached by its file, beside the entry.
  const core = require.resolve('@segment/actions-core');
  /* eslint-disable @typescript-eslint/no-require-imports */
  const fetchModule = require(join(dirname(core), 'fetch.js')) as { default: Fetch };
  const crossFetch = require.resolve('cross-fetch', { paths: [dirname(core)] });
  const nodeFetch = require(require.resolve('node-fetch', { paths: [dirname(crossFetch)] })) as NodeFetch;
  /* eslint-enable @typescript-eslint/no-require-imports */
  fetchModule.default = createBufferedFetch(nodeFetch, fetchModule.default);
  installed = true;
}
