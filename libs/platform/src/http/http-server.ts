import { DynamicModule, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Environment } from '../environment';
import { JsonLogger } from '../logging/json-logger';
import { requestContext } from '../logging/request-context';
import { HttpMetrics } from '../metrics/http-metrics';
import type { MetricsListenerOptions } from '../metrics/metrics.listener';
import { MetricsModule } from '../metrics/metrics.module';
import { MetricsRegistry } from '../metrics/metrics.registry';
import { browserCorsHeaders, browserPreflightHeaders, isBrowserCorsPath } from './browser-cors';
import { edgeErrorResponse, EdgeRefusalRecord, HttpApis, HttpEdge } from './http-edge';
import { isPublicApiPath } from './public-api-path';
import { normalizeRequestUrl } from './request-url';

/**
 * Bodies are read whole up to this size; each API applies its own, smaller limits on top. The largest
 * is a regulation's create (6 MiB of JSON, docs/regulations.md §1), with room for its whitespace.
 */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

/**
 * How long a client may take to send a whole request (head and body). Fastify's default is none, so
 * a client that announces more body than it sends would hold its connection forever; 120 s lets the
 * largest body (8 MiB) through at 70 KB/s.
 */
const REQUEST_TIMEOUT_MS = 120_000;

export type RequestWithBodyError = FastifyRequest & {
  bodyParseError?: string;
  /** The Public API's body was of a media type it does not read (answered 422 by its guard). */
  bodyMediaTypeError?: string;
};

/** Probes come every few seconds; a log line for each would drown the requests that matter. */
const UNLOGGED_PATHS = /^\/health(\/|\?|$)/;

export interface HttpApplicationOptions {
  /** Where the JSON log lines go; standard output when absent (tests read them from a stream). */
  logDestination?: DestinationStream;
  /** The APIs the application serves, whose error bodies answer requests refused before routing
   *  (`all` by default: by path, as the all-in-one app does). */
  apis?: HttpApis;
  /** Overrides the request timeout (tests of the 408 answer). */
  requestTimeoutMs?: number;
  /**
   * Where `GET /metrics` listens (`METRICS_HOST`/`METRICS_PORT`, see `metricsListenerOf`): never on
   * the application's own port. Absent: no scrape endpoint at all (the registry still counts).
   */
  metricsListener?: MetricsListenerOptions;
  /**
   * `TRUST_PROXY` (see `trustProxySchema`): which proxies' `X-Forwarded-*` headers make
   * `request.ip`, `request.protocol` and `request.hostname`. Default false: the TCP peer's.
   */
  trustProxy?: boolean | number | string[];
  /**
   * Config API bodies longer than this many bytes are not parsed at all: they are recorded as too
   * large for the route's guard to answer 400, after authentication. Default: the 4 MiB every request
   * may have.
   */
  maxJsonBodyBytes?: number;
}

/**
 * Config API routes whose bodies may be larger than `maxJsonBodyBytes` (their guard's limit is set by
 * `AcceptsBodiesUpTo`): a regulation's create, up to 6 MiB of subject ids.
 */
const LARGER_BODY_PATH = /\/regulations?(?:\?|$)/;

/** A request id a caller may choose: at most 128 letters, digits and `._:/@+=-`. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:/@+=-]{1,128}$/;

/** The caller's X-Request-Id when it is an acceptable id (one header, plain and short), else undefined. */
export function acceptableRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && ACCEPTABLE_REQUEST_ID.test(header) ? header : undefined;
}

/**
 * One Fastify server for every Tributary HTTP surface. Body parsing is ours, not Fastify's:
 * - Config API (`/v1beta`): JSON whatever the Content-Type says (the docs' examples use `curl -d`),
 *   an empty body is no body (C1 sends `Content-Type: application/json` on GET and DELETE), and
 *   invalid JSON is recorded for the route's guard to answer 400 in the API's own error shape;
 * - Public API (`/public-api`): JSON by its media type (`parsePublicApiBody`);
 * - everything else gets the raw bytes, which the tracking API inflates and limits itself.
 */
export async function createHttpApplication(
  module: unknown,
  logLevel: Environment['LOG_LEVEL'] = 'log',
  options: HttpApplicationOptions = {},
): Promise<NestFastifyApplication> {
  const logger = new JsonLogger({ level: logLevel, destination: options.logDestination });
  const apis = options.apis ?? 'all';
  const requestTimeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Refusals at the edge never reach Fastify's hooks: they are logged and counted here instead, once
  // the metrics registry exists.
  let recordRefusal: (record: EdgeRefusalRecord) => void = () => undefined;
  const edge = new HttpEdge(apis, { requestTimeoutMs }, (record) => recordRefusal(record));
  const adapter = new FastifyAdapter({
    rewriteUrl: (request: { url?: string }) => normalizeRequestUrl(request.url),
    // A caller's (or its proxy's) X-Request-Id is kept when it is a plain short id, so that a request
    // can be followed through; anything else gets an id of ours, since the id goes into logs and the
    // audit trail.
    requestIdHeader: false,
    // Every client address (rate limits, OAuth throttling, a browser event's context.ip) is
    // `request.ip`; believing X-Forwarded-For from anyone would let a caller pick its own.
    trustProxy: options.trustProxy ?? false,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) =>
      acceptableRequestId(request.headers['x-request-id']) ?? randomUUID(),
    bodyLimit: MAX_REQUEST_BYTES,
    logger: false,
    frameworkErrors: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      answerUnroutableUrl(apis, error, request, reply),
    clientErrorHandler: edge.answerClientError,
    requestTimeout: requestTimeoutMs,
    http: {
      // Node answers a Host-less HTTP/1.1 request with a bare 400 itself; the hook below answers it
      // in the API's error shape instead.
      requireHostHeader: false,
      // Node swaps the two timeouts when the head's is the longer, so it is kept at most the whole
      // request's (Fastify sets `requestTimeout` itself, after creating the server).
      headersTimeout: Math.min(60_000, requestTimeoutMs),
      // How often Node looks for requests past their timeout (its default, 30 s, would let a short
      // test timeout run long).
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(requestTimeoutMs / 4))),
    },
    // While the server closes (SIGTERM), a request arriving on a kept-alive connection is served as
    // usual, with `Connection: close`, instead of Fastify's bare 503 (no Retry-After, not the API's
    // error body): the event log and the store stay open until the HTTP server has closed, so it can
    // be stored and answered properly, and each connection takes at most that one more request.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    HttpApplicationModule.around(module, options.metricsListener),
    adapter,
    {
      bodyParser: false,
      logger,
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  const server = fastify.server;
  server.on('connect', edge.answerConnect);
  // An `Expect` other than `100-continue` would get Node's bare 417; RFC 9110 §10.1.1 lets a server
  // ignore it, so such a request is served like any other.
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
  // First, so that every answer below, refusals included, carries the CORS headers.
  if (apis !== 'config') {
    fastify.addHook('onRequest', (request, reply, done) => {
      const origin = request.headers.origin;
      const preflight = request.method === 'OPTIONS';
      if ((origin === undefined && !preflight) || !isBrowserCorsPath(request.url)) return done();
      // A preflight without Host is still a malformed HTTP/1.1 request: the hook below refuses it.
      const missingHost = request.raw.httpVersion === '1.1' && !request.headers.host;
      if (preflight && !missingHost) {
        reply
          .code(204)
          .headers(browserPreflightHeaders(origin, request.headers['access-control-request-headers']))
          .send();
        return;
      }
      if (origin !== undefined) reply.headers(browserCorsHeaders(origin));
      done();
    });
  }
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersion !== '1.1' || request.headers.host) return done();
    const { status, body } = edgeErrorResponse(
      apis,
      request.url,
      'missing_host',
      'an HTTP/1.1 request needs a Host header',
    );
    reply
      .code(status)
      .header('content-type', 'application/json; charset=utf-8')
      .header('connection', 'close');
    reply.send(body);
  });
  fastify.removeAllContentTypeParsers();
  const maxJsonBodyBytes = options.maxJsonBodyBytes ?? MAX_REQUEST_BYTES;
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (isPublicApiPath(request.url)) {
      return done(null, parsePublicApiBody(request as RequestWithBodyError, body as Buffer));
    }
    if (!request.url.startsWith('/v1beta')) return done(null, body);
    // Parsing comes before authentication: a body no route would take is not parsed for anyone.
    const readable = LARGER_BODY_PATH.test(request.url) ? MAX_REQUEST_BYTES : maxJsonBodyBytes;
    if ((body as Buffer).length > readable) {
      (request as RequestWithBodyError).bodyParseError =
        `the request body is ${(body as Buffer).length} bytes; at most ${readable} are read`;
      return done(null, undefined);
    }
    done(null, parseLenientJson(request as RequestWithBodyError, body as Buffer));
  });
  fastify.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Entered after the body is read: from here on, every log line of the request carries its id.
  fastify.addHook('preHandler', (request, _reply, done) => {
    requestContext.run({ requestId: request.id }, done);
  });
  const httpMetrics = new HttpMetrics(app.get(MetricsRegistry));
  recordRefusal = ({ requestId, method, status, reason }) => {
    httpMetrics.record(method, undefined, status, 0);
    if (logger.isEnabled('log')) {
      logger.write('log', 'request refused before routing', ['HTTP'], {
        requestId,
        method,
        route: null,
        status,
        reason,
      });
    }
  };
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    const durationMs = reply.elapsedTime;
    httpMetrics.record(request.method, route, reply.statusCode, durationMs);
    if (logger.isEnabled('log') && !UNLOGGED_PATHS.test(request.url)) {
      logger.write('log', 'request completed', ['HTTP'], {
        requestId: request.id,
        method: request.method,
        route: route ?? null,
        status: reply.statusCode,
        durationMs: Math.round(durationMs * 10) / 10,
      });
    }
    done();
  });
  return app;
}

/**
 * Every HTTP application gets `MetricsModule` (the registry its collectors inject, and the separate
 * `/metrics` listener) beside its own module.
 */
@Module({})
class HttpApplicationModule {
  static around(module: unknown, metricsListener: MetricsListenerOptions | undefined): DynamicModule {
    return {
      module: HttpApplicationModule,
      imports: [MetricsModule.register(metricsListener), module as DynamicModule],
    };
  }
}

/**
 * Fastify rejects some URLs before any route or Nest filter sees them (bad percent-encoding, a
 * path segment over `maxParamLength`) and would answer with its own body, whose `code` is a string
 * and which lacks the keys every client reads. Each API promises its own error body on every
 * failure, so these are answered 400 in that shape (`HttpApis`): `{error, code: 3}` for the Config
 * API, `{success: false, code: 'invalid_request', message, error}` for the tracking API.
 */
function answerUnroutableUrl(
  apis: HttpApis,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const { status, body } = edgeErrorResponse(apis, request.url, 'malformed', error.message);
  const origin = request.headers.origin;
  if (apis !== 'config' && origin !== undefined && isBrowserCorsPath(normalizeRequestUrl(request.url))) {
    reply.headers(browserCorsHeaders(origin));
  }
  reply.code(status).header('content-type', 'application/json; charset=utf-8').send(body);
}

function parseLenientJson(request: RequestWithBodyError, body: Buffer): unknown {
  const text = body.toString('utf8').trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    request.bodyParseError = `invalid JSON body: ${(error as Error).message}`;
    return undefined;
  }
}

/** `application/json` and every `application/*+json` (the SDKs' `vnd.segment.v1alpha+json`). */
const JSON_MEDIA_TYPE = /^application\/(?:json|[^\s/;]+\+json)$/i;

/**
 * The Public API reads a body as JSON when its Content-Type says JSON (parameters such as `charset`
 * ignored); a body without a Content-Type (or an empty one) is no body, as Segment's SDK sends when
 * it creates a write key; any other media type is recorded for the guard to refuse.
 */
function parsePublicApiBody(request: RequestWithBodyError, body: Buffer): unknown {
  const contentType = request.headers['content-type'];
  const mediaType = contentType?.split(';')[0].trim() ?? '';
  const text = body.toString('utf8').trim();
  if (mediaType === '' || text === '') {
    if (text !== '' && mediaType === '') {
      request.bodyMediaTypeError = 'a request body needs Content-Type: application/json';
    }
    return undefined;
  }
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    request.bodyMediaTypeError = `Content-Type ${mediaType} is not JSON; send application/json`;
    return undefined;
  }
  return parseLenientJson(request, body);
}

export async function listen(app: INestApplication, port: number, host: string): Promise<string> {
  await app.listen(port, host);
  return app.getUrl();
}
