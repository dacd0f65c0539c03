import { randomUUID } from 'node:crypto';
import {
  IncomingMessage,
  maxHeaderSize as NODE_MAX_HEADER_SIZE,
  METHODS,
  ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Socket } from 'node:net';
import { browserCorsHeaders, isBrowserCorsPath } from './browser-cors';
import { isPublicApiPath } from './public-api-path';
import { normalizeRequestUrl } from './request-url';

/**
 * Which APIs an application serves, and so whose error body a refusal carries:
 * - `config` (the Config API and router apps): `{error, code: <gRPC code>, message}` (docs/config-api.md §4);
 * - `tracking` (the tracking API app): `{success: false, code, message, error}` (docs/tracking-api.md §9.2),
 *   and RFC 6749's `{error, error_description}` on the token route (§11.5);
 * - `all` (the all-in-one app): by path, as its route-not-found filter does: `/v1beta` is the Config
 *   API's, `/token` the token route's, everything else the tracking API's.
 */
export type HttpApis = 'tracking' | 'config' | 'all';

export type HttpErrorShape = 'tracking' | 'config' | 'oauth' | 'public';

/** Why a request is refused before any route sees it. */
export type EdgeRefusal = 'malformed' | 'unknown_method' | 'head_too_large' | 'timeout' | 'missing_host';

/** Status and each API's code per refusal. 431 and 408 are not in the tracking spec's table; 413 is
 *  never sent (docs/tracking-api.md §9.1: older Node clients retry it). */
const REFUSALS: Record<EdgeRefusal, { status: number; tracking: string; grpc: number }> = {
  malformed: { status: 400, tracking: 'invalid_request', grpc: 3 },
  missing_host: { status: 400, tracking: 'invalid_request', grpc: 3 },
  // Config docs/tracking-api.md §4: a wrong method is 404 NOT_FOUND there; the tracking filter answers known methods
  // on a route that lacks them 404 `not_found` too, so an unknown method gets the same.
  unknown_method: { status: 404, tracking: 'not_found', grpc: 5 },
  head_too_large: { status: 431, tracking: 'headers_too_large', grpc: 3 },
  timeout: { status: 408, tracking: 'request_timeout', grpc: 4 },
};

/** The Public API's error `type` of each status a refusal has. */
const PUBLIC_API_ERROR_TYPES: Record<number, string> = {
  400: 'ValidationFailure',
  404: 'NotFound',
  408: 'RequestError',
  431: 'ValidationFailure',
};

/** After answering, how long the server keeps reading (and dropping) what the client still sends
 *  before it closes: closing at once, with unread bytes, resets the connection, and the client may
 *  lose the answer with it. */
const LINGER_MS = 2_000;

/** The longest request target or method quoted back in a message. */
const QUOTE_LIMIT = 200;

export interface EdgeRefusalRecord {
  requestId: string;
  /** The method, when the request line could be read; a method Node does not know is `other`. */
  method: string;
  status: number;
  /** Node's parser error code (`HPE_INVALID_METHOD`, ...) or the refusal. */
  reason: string;
}

/** The error Node's HTTP server gives `clientError` listeners. */
export type HttpClientError = Error & { code?: string; reason?: string; rawPacket?: unknown };

/** `_httpMessage` is the response a socket is writing, or will write next; Node's own clientError
 *  handler reads it for the same purpose, to avoid corrupting an answer in flight. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse<IncomingMessage> | null };

/** The path that decides the error shape: the request target without its query, normalized as
 *  routing normalizes it (so `//v1beta/...` and `http://host/v1beta/...` are the Config API's). */
function routePathOf(target: string): string {
  return normalizeRequestUrl(target).split('?')[0];
}

export function errorShapeOf(target: string | undefined, apis: HttpApis): HttpErrorShape {
  const path = target === undefined ? undefined : routePathOf(target);
  // The Public API is served wherever the Config API is (docs/public-api.md).
  if (path !== undefined && apis !== 'tracking' && isPublicApiPath(path)) return 'public';
  if (apis === 'config') return 'config';
  if (path === '/token') return 'oauth';
  if (apis === 'all' && path?.startsWith('/v1beta')) return 'config';
  return 'tracking';
}

/** The status and body of a refusal, in the shape of the API the request target belongs to. */
export function edgeErrorResponse(
  apis: HttpApis,
  target: string | undefined,
  refusal: EdgeRefusal,
  message: string,
): { status: number; body: Record<string, unknown> } {
  const { status, tracking, grpc } = REFUSALS[refusal];
  switch (errorShapeOf(target, apis)) {
    case 'config':
      return { status, body: { error: message, code: grpc, message } };
    case 'oauth':
      return { status, body: { error: 'invalid_request', error_description: message } };
    case 'public':
      return {
        status,
        body: { errors: [{ type: PUBLIC_API_ERROR_TYPES[status] ?? 'RequestError', message }] },
      };
    case 'tracking':
      return { status, body: { success: false, code: tracking, message, error: message } };
  }
}

function quote(text: string): string {
  return text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text;
}

/** `FOO /v1/track HTTP/1.1` at the start of a packet; the version may be missing when the line is cut. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+)(?: +(HTTP\/\d\.\d)\r?$)?/;

interface RequestLine {
  method: string;
  target: string;
  /** Whether the line ended with an HTTP version: only then is an unknown method all that is wrong. */
  complete: boolean;
}

/** The request line at the start of the bytes the parser refused, when they start one. */
function readRequestLine(packet: unknown): RequestLine | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  const lineEnd = packet.indexOf(0x0a);
  const line = packet.subarray(0, lineEnd < 0 ? Math.min(packet.length, 8_192) : lineEnd).toString('latin1');
  const match = REQUEST_LINE.exec(line);
  return match ? { method: match[1], target: match[2], complete: match[3] !== undefined } : undefined;
}

/**
 * Answers what Node's HTTP parser refuses before Fastify, Nest or any route sees a request, which
 * Node or Fastify would otherwise answer with a bare status or Fastify's own body (whose `code` is
 * missing and which lacks the keys every client reads):
 * - a head (request line and headers) over Node's limit, 16 KiB: 431;
 * - a method Node does not know (`FOO`, `post`): 404, as for a known method on no route;
 * - any other malformed request (request line, header, Content-Length, Transfer-Encoding, chunk
 *   framing, a body cut short by the client's FIN, HTTP/2 without TLS): 400;
 * - a request not received within the request timeout: 408;
 * - `CONNECT` (this is no proxy): 404.
 * Each answer is in the error shape of the API the request was for, carries `Connection: close` and
 * closes the connection: after a parse error the parser cannot find where the next request starts.
 * When the refused bytes do not say which request they belong to (a head that overflowed in a later
 * read), the shape is the application's own (`tracking` for the all-in-one).
 */
export class HttpEdge {
  /** The parser reports its error again for every later read of the same connection; one answer. */
  private readonly refusedSockets = new WeakSet<Socket>();

  constructor(
    private readonly apis: HttpApis,
    private readonly limits: { requestTimeoutMs: number },
    private readonly onRefusal: (record: EdgeRefusalRecord) => void = () => undefined,
  ) {}

  /** Fastify's `clientErrorHandler`: Node's `clientError` event. */
  readonly answerClientError = (error: HttpClientError, rawSocket: Socket): void => {
    const socket = rawSocket as HttpSocket;
    if (this.refusedSockets.has(socket)) return;
    this.refusedSockets.add(socket);
    const refusal = this.refusalOf(error);
    // Not a request problem (a reset, a broken pipe) or nobody left to answer: just close.
    if (refusal === undefined || !socket.writable) {
      socket.destroy();
      return;
    }
    const inFlight = socket._httpMessage;
    if (inFlight && !inFlight.req.complete) {
      // The refused bytes are the rest of the request being answered (its body was cut short, its
      // chunk framing is broken): answer that request, unless its answer has begun.
      if (inFlight.headersSent) {
        socket.destroy();
        return;
      }
      const line = {
        method: inFlight.req.method ?? 'other',
        target: inFlight.req.url ?? '/',
        complete: true,
      };
      this.answer(socket, error, refusal, line);
      return;
    }
    if (inFlight) {
      // Earlier requests of this connection (pipelined, or a body longer than its Content-Length)
      // are still being answered: let them finish, then refuse what came after, for the same API.
      const line = { method: 'other', target: inFlight.req.url ?? '/', complete: false };
      this.afterAnswersInFlight(socket, () => this.answer(socket, error, refusal, line));
      return;
    }
    this.answer(socket, error, refusal, readRequestLine(error.rawPacket));
  };

  /** Node's `connect` event: without a listener Node closes the connection without a word. */
  readonly answerConnect = (request: IncomingMessage, socket: Socket): void => {
    const method = request.method ?? 'CONNECT';
    const target = request.url ?? '';
    const message = `no route for ${method} ${quote(target)}: this server is not a proxy`;
    this.send(socket, method, undefined, 'unknown_method', 'CONNECT', message);
  };

  private refusalOf(error: HttpClientError): EdgeRefusal | undefined {
    if (error.code === 'HPE_HEADER_OVERFLOW') return 'head_too_large';
    if (error.code === 'HPE_INVALID_METHOD') return 'unknown_method';
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'timeout';
    if (error.code?.startsWith('HPE_')) return 'malformed';
    return undefined;
  }

  private answer(
    socket: Socket,
    error: HttpClientError,
    refusal: EdgeRefusal,
    line: RequestLine | undefined,
  ): void {
    const target = line?.target;
    let kind = refusal;
    let message: string;
    switch (refusal) {
      case 'head_too_large':
        message = `the request line and headers are larger than ${NODE_MAX_HEADER_SIZE} bytes`;
        break;
      case 'timeout':
        message = `the request did not arrive completely within ${formatDuration(this.limits.requestTimeoutMs)}`;
        break;
      case 'unknown_method':
        if (line?.complete) {
          message = `no route for ${quote(line.method)} ${quote(line.target)}: ${quote(line.method)} is not an HTTP method this server knows (methods are case-sensitive)`;
          break;
        }
        // The line is not a request line at all (`hello`): malformed, not merely an odd method.
        kind = 'malformed';
        message = 'malformed HTTP request: the request line is not `METHOD target HTTP/1.1`';
        break;
      default:
        message = `malformed HTTP request: ${describeParseError(error)}`;
    }
    this.send(socket, line?.method, target, kind, error.code ?? refusal, message);
  }

  private send(
    socket: Socket,
    method: string | undefined,
    target: string | undefined,
    refusal: EdgeRefusal,
    reason: string,
    message: string,
  ): void {
    const requestId = randomUUID();
    const { status, body } = edgeErrorResponse(this.apis, target, refusal, message);
    const payload = JSON.stringify(body);
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(payload)}`,
      `x-request-id: ${requestId}`,
      `date: ${new Date().toUTCString()}`,
      'connection: close',
      ...this.corsHeaderLines(target),
    ].join('\r\n');
    // A HEAD answer has no body (its length is still announced).
    socket.end(`${head}\r\n\r\n${method === 'HEAD' ? '' : payload}`);
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
    this.onRefusal({
      requestId,
      method: method !== undefined && METHODS.includes(method) ? method : 'other',
      status,
      reason,
    });
  }

  /**
   * A page's request to the tracking API that the parser refused still needs
   * `Access-Control-Allow-Origin` for the page to see the status; the request's `Origin` is unknown
   * here (its headers were not read), so any origin is allowed.
   */
  private corsHeaderLines(target: string | undefined): string[] {
    if (this.apis === 'config' || target === undefined || !isBrowserCorsPath(routePathOf(target))) return [];
    return Object.entries(browserCorsHeaders(undefined)).map(([name, value]) => `${name}: ${value}`);
  }

  /** Calls `then` once no response of this connection is in flight; gives up after a while. */
  private afterAnswersInFlight(socket: HttpSocket, then: () => void): void {
    const giveUp = setTimeout(() => socket.destroy(), Math.max(this.limits.requestTimeoutMs, 10_000));
    giveUp.unref();
    const check = (): void => {
      if (socket.destroyed) return clearTimeout(giveUp);
      const inFlight = socket._httpMessage;
      if (!inFlight) {
        clearTimeout(giveUp);
        if (socket.writable) then();
        else socket.destroy();
        return;
      }
      // `close` comes after Node has handed the connection to the next queued response, if any.
      inFlight.once('close', check);
    };
    check();
  }
}

function formatDuration(ms: number): string {
  return ms >= 1_000 ? `${Math.round(ms / 1_000)} s` : `${ms} ms`;
}

/** Node's parser reasons are short and readable; a few need the context they leave out. */
function describeParseError(error: HttpClientError): string {
  switch (error.code) {
    case 'HPE_INVALID_EOF_STATE':
      return 'the connection was closed before the request was complete';
    case 'HPE_PAUSED_H2_UPGRADE':
      return 'HTTP/2 without TLS is not supported; send HTTP/1.1';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'chunk extensions are too large';
    default:
      return error.reason ?? error.message;
  }
}
