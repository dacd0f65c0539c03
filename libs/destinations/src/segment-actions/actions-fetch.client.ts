/**
 * The `fetch` under `@segment/actions-core`'s request client, for the requests Tributary's
 * `extendRequest` shapes (an `agent` function that also gives the guarded undici dispatcher,
 * `redirect: 'manual'`, a body already in memory): the same request as node-fetch 2 makes it (same
 * headers and defaults, same timeouts, size cap, abort and errors, node-fetch's own `Response`,
 * `FetchError` and `AbortError`), sent through undici's `dispatch` on the egress guard's connections, and
 * its answer read whole, decompressed and capped, into a `Buffer`-bodied `Response`.
 *
 * node-fetch pipes every answer through a `PassThrough`, and actions-core's `prepareResponse` clones it
 * (a tee of two more) to read it as text: streams that cost more than the request itself. A
 * `node:http` request (ClientRequest, the agent's bookkeeping and, since Node 24.22, a check of the
 * socket for unread bytes each time a kept-alive one is reused) costs about half as much again as an
 * undici dispatch of the same request over the same TLS (92-96 against 62-63 µs of CPU, BENCHMARKS.md).
 * Any other request (a HEAD, a streamed body, a redirect mode of a destination's own, an agent without
 * the dispatcher, a header undici refuses to send as given) goes to node-fetch as before.
 *
 * `installBufferedFetch` puts it in place of actions-core's, which its request client reads from its
 * fetch module at each request.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { dirname, join } from 'node:path';
import type { Transform } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import {
  constants as zlibConstants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
} from 'node:zlib';
import type {
  GuardedDispatcher,
  GuardedRequestController,
  GuardedRequestHandler,
} from '../delivery/egress/guarded-dispatcher';

/** node-fetch 2's `Headers`, as far as this module uses it. */
interface FetchHeaders {
  has(name: string): boolean;
  get(name: string): string | null;
  set(name: string, value: string): void;
  raw(): Record<string, string[]>;
}

/**
 * The `agent` Tributary's `extendRequest` gives every request: node-fetch calls it with the URL for a
 * `node:http` agent; `dispatcherFor` answers the same connections' undici dispatcher. Both note the
 * host the request goes to.
 */
export interface DispatchingAgent {
  (url: { hostname?: string | null; protocol?: string | null }): unknown;
  dispatcherFor?(url: {
    hostname?: string | null;
    protocol?: string | null;
  }): Pick<GuardedDispatcher, 'dispatch'>;
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
/**
 * Request headers undici refuses or gives a meaning of its own (it manages the connection and the
 * framing): a request naming one goes to node-fetch, which sends it as given.
 */
const UNDICI_MANAGED_HEADERS = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'expect',
]);
/** Answer headers `node:http` keeps the first of when repeated (`IncomingMessage#headers`). */
const SINGLE_VALUE_HEADERS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** Whether this module sends `request`, or node-fetch does. */
function isBuffered(request: FetchRequest): request is FetchRequest & { agent: Required<DispatchingAgent> } {
  if (
    // undici closes the connection after a HEAD (and says so in the request), against servers that
    // answer one with a body; node-fetch keeps it open.
    request.method === 'HEAD' ||
    request.redirect !== 'manual' ||
    typeof request.agent !== 'function' ||
    typeof (request.agent as DispatchingAgent).dispatcherFor !== 'function' ||
    !(request.body === null || request.body === undefined || Buffer.isBuffer(request.body))
  ) {
    return false;
  }
  // node-fetch keeps each name as first given.
  for (const name of Object.keys(request.headers.raw()))
    if (UNDICI_MANAGED_HEADERS.has(name.toLowerCase())) return false;
  return true;
}

export function createBufferedFetch(nodeFetch: NodeFetch, fallback: Fetch = nodeFetch): Fetch {
  const { Headers } = nodeFetch;
  return (request) => {
    if (!isBuffered(request)) return fallback(request);
    return new Promise((resolve, reject) => {
      const body = request.body as Buffer | null | undefined;
      // getNodeRequestOptions of node-fetch 2, step for step.
      const headers = new Headers(request.headers);
      if (!headers.has('Accept')) headers.set('Accept', '*/*');
      const parsed = new URL(request.url);
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
      // urlToHttpOptions gives what url.parse gave node-fetch's agent function: the host without IPv6
      // brackets, and the credentials of the URL as `auth`, which `node:http` sends as Basic
      // authentication unless the request names its own.
      const target = urlToHttpOptions(parsed);
      const dispatcher = request.agent.dispatcherFor(target);
      // A name given once goes as a string (undici takes Content-Length and Host only so); one given
      // several times as each of its values, as `node:http` sends it.
      const sent: Record<string, string | string[]> = {};
      for (const [name, values] of Object.entries(headers.raw()))
        sent[name] = values.length === 1 || name.toLowerCase() === 'host' ? values[0]! : values;
      if (target.auth && !headers.has('Authorization')) {
        sent['authorization'] = `Basic ${Buffer.from(target.auth).toString('base64')}`;
      }
      if (request.signal?.aborted) {
        reject(new nodeFetch.AbortError('The user aborted a request.'));
        return;
      }
      const exchange = new BufferedExchange(nodeFetch, request, resolve, reject);
      dispatcher.dispatch(
        {
          origin: parsed.origin,
          path: `${parsed.pathname}${parsed.search}`,
          method: request.method,
          headers: sent,
          body: body ?? null,
        },
        exchange,
      );
    });
  };
}

/**
 * One request as undici reports it, settled once by whatever comes first: the whole answer, an error,
 * an abort, a timeout (node-fetch's: one until the answer's headers, another for its whole body).
 */
class BufferedExchange implements GuardedRequestHandler {
  private controller: GuardedRequestController | undefined;
  private settled = false;
  private timer: NodeJS.Timeout | undefined;
  private status = 0;
  private statusText = '';
  private answerHeaders: FetchHeaders | undefined;
  /** Decodes the answer's body by its Content-Encoding; absent when it is read as it comes. */
  private decoder: Transform | undefined;
  /** A deflate answer's decoder is chosen by its first byte. */
  private deflate = false;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private readonly onAbort = () => this.fail(new this.nodeFetch.AbortError('The user aborted a request.'));

  constructor(
    private readonly nodeFetch: NodeFetch,
    private readonly request: FetchRequest,
    private readonly resolve: (response: unknown) => void,
    private readonly reject: (error: Error) => void,
  ) {
    request.signal?.addEventListener('abort', this.onAbort);
    // node-fetch starts it once the request has its socket, before connecting; here, at once.
    if (request.timeout) {
      this.timer = setTimeout(
        () => this.fail(new nodeFetch.FetchError(`network timeout at: ${request.url}`, 'request-timeout')),
        request.timeout,
      );
    }
  }

  onRequestStart(controller: GuardedRequestController): void {
    this.controller = controller;
    // Settled while waiting for a connection: not sent at all.
    if (this.settled) controller.abort(new Error('the request was given up'));
  }

  onResponseStart(
    _controller: GuardedRequestController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    // 1xx answers come before the real one.
    if (statusCode < 200 || this.settled) return;
    const { request, nodeFetch } = this;
    clearTimeout(this.timer);
    this.status = statusCode;
    this.statusText = statusMessage ?? '';
    const answerHeaders = headersOf(headers, nodeFetch.Headers);
    this.answerHeaders = answerHeaders;
    if (REDIRECT_STATUSES.has(statusCode)) {
      // node-fetch's manual mode: Location made absolute, left as it is when it is no URL.
      const location = answerHeaders.get('Location');
      if (location !== null) {
        try {
          answerHeaders.set('Location', new URL(location, request.url).toString());
        } catch {
          // As node-fetch: an invalid Location is left for the caller to see.
        }
      }
    }
    this.startDecoding(answerHeaders);
    if (request.timeout) {
      this.timer = setTimeout(
        () =>
          this.fail(
            new nodeFetch.FetchError(
              `Response timeout while trying to fetch ${request.url} (over ${request.timeout}ms)`,
              'body-timeout',
            ),
          ),
        request.timeout,
      );
    }
  }

  onResponseData(_controller: GuardedRequestController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.deflate && this.decoder === undefined) {
      // Old servers send raw deflate: the first byte tells which (node-fetch's test).
      this.decode((chunk[0]! & 0x0f) === 0x08 ? createInflate() : createInflateRaw());
    }
    if (this.decoder) this.decoder.write(chunk);
    else this.take(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.decoder) this.decoder.end();
    else this.finish();
  }

  onResponseError(_controller: GuardedRequestController, error: Error): void {
    const { request, nodeFetch } = this;
    if (this.status === 0) {
      // What `node:http` reports for a connection closed before the answer, as node-fetch shows it.
      const cause = isClosedSocket(error)
        ? Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
        : error;
      this.fail(
        new nodeFetch.FetchError(
          `request to ${request.url} failed, reason: ${cause.message}`,
          'system',
          cause,
        ),
      );
      return;
    }
    // A connection that closes before the answer is complete.
    const premature = isClosedSocket(error)
      ? Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })
      : error;
    this.fail(
      new nodeFetch.FetchError(
        `Invalid response body while trying to fetch ${request.url}: ${premature.message}`,
        'system',
        premature,
      ),
    );
  }

  /** As node-fetch decodes an answer: by its Content-Encoding, when the request allows it. */
  private startDecoding(headers: FetchHeaders): void {
    const codings = headers.get('Content-Encoding');
    const { request } = this;
    if (!request.compress || codings === null) return;
    if (this.status === 204 || this.status === 304) return;
    // As cURL and node-fetch: lenient with answers that end without a final flush.
    const lenient = { flush: zlibConstants.Z_SYNC_FLUSH, finishFlush: zlibConstants.Z_SYNC_FLUSH };
    if (codings === 'gzip' || codings === 'x-gzip') this.decode(createGunzip(lenient));
    else if (codings === 'br') this.decode(createBrotliDecompress());
    else if (codings === 'deflate' || codings === 'x-deflate') {
      // Made at the first chunk; no body at all is an empty answer.
      this.deflate = true;
    }
  }

  private decode(decoder: Transform): void {
    this.decoder = decoder;
    decoder.on('data', (chunk: Buffer) => this.take(chunk));
    decoder.on('end', () => this.finish());
    decoder.on('error', (error: Error) =>
      this.fail(
        new this.nodeFetch.FetchError(
          `Invalid response body while trying to fetch ${this.request.url}: ${error.message}`,
          'system',
          error,
        ),
      ),
    );
  }

  private take(chunk: Buffer): void {
    if (this.settled) return;
    const { size, url } = this.request;
    if (size && this.bytes + chunk.length > size) {
      this.fail(new this.nodeFetch.FetchError(`content size at ${url} over limit: ${size}`, 'max-size'));
      return;
    }
    this.bytes += chunk.length;
    this.chunks.push(chunk);
  }

  private finish(): void {
    if (this.settled) return;
    this.settle();
    const { request, chunks, bytes } = this;
    this.resolve(
      new this.nodeFetch.Response(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes), {
        url: request.url,
        status: this.status,
        statusText: this.statusText,
        headers: this.answerHeaders,
        size: request.size,
        timeout: request.timeout,
        counter: request.counter,
      }),
    );
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settle();
    this.decoder?.destroy();
    this.controller?.abort(error);
    this.reject(error);
  }

  private settle(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** undici's report of a connection the other side closed. */
function isClosedSocket(error: Error): boolean {
  return (error as { code?: unknown }).code === 'UND_ERR_SOCKET';
}

/**
 * The answer's headers as node-fetch keeps them (`createHeadersLenient`, without the names and values it
 * refuses) from what `node:http` would have given it: a repeated header joined with ", " (cookies with
 * "; "), or its first value only for the headers that take one; `set-cookie` as a list.
 */
function headersOf(received: IncomingHttpHeaders, Headers: NodeFetch['Headers']): FetchHeaders {
  const headers = new Headers();
  const map = headers.raw();
  for (const [name, value] of Object.entries(received)) {
    if (value === undefined || INVALID_TOKEN.test(name)) continue;
    let values: string[];
    if (!Array.isArray(value)) values = [value];
    else if (name === 'set-cookie') values = value;
    else if (SINGLE_VALUE_HEADERS.has(name)) values = [value[0]!];
    else values = [value.join(name === 'cookie' ? '; ' : ', ')];
    values = values.filter((entry) => !INVALID_HEADER_CHARACTER.test(entry));
    if (values.length > 0) map[name] = values;
  }
  return headers;
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
