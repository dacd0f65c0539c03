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
import { MetricsModule } from '../metrics/metrics.module';
import { MetricsRegistry } from '../metrics/metrics.registry';
import { normalizeRequestUrl } from './request-url';

/** Bodies are read whole up to this size; each API applies its own, smaller limits on top. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

export type RequestWithBodyError = FastifyRequest & { bodyParseError?: string };

/** Probes and scrapes come every few seconds; a log line for each would drown the requests that matter. */
const UNLOGGED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

export interface HttpApplicationOptions {
  /** Where the JSON log lines go; standard output when absent (tests read them from a stream). */
  logDestination?: DestinationStream;
}

/**
 * One Fastify server for every Tributary HTTP surface. Body parsing is ours, not Fastify's:
 * - Config API (`/v1beta`): JSON whatever the Content-Type says (the docs' examples use `curl -d`),
 *   an empty body is no body (C1 sends `Content-Type: application/json` on GET and DELETE), and
 *   invalid JSON is recorded for the route's guard to answer 400 in the API's own error shape;
 * - everything else gets the raw bytes, which the tracking API inflates and limits itself.
 */
export async function createHttpApplication(
  module: unknown,
  logLevel: Environment['LOG_LEVEL'] = 'log',
  options: HttpApplicationOptions = {},
): Promise<NestFastifyApplication> {
  const logger = new JsonLogger({ level: logLevel, destination: options.logDestination });
  const adapter = new FastifyAdapter({
    rewriteUrl: (request: { url?: string }) => normalizeRequestUrl(request.url),
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    bodyLimit: MAX_REQUEST_BYTES,
    logger: false,
    frameworkErrors: answerUnroutableUrl,
    // While the server closes (SIGTERM), a request arriving on a kept-alive connection is served as
    // usual, with `Connection: close`, instead of Fastify's bare 503 (no Retry-After, not the API's
    // error body): the event log and the store stay open until the HTTP server has closed, so it can
    // be stored and answered properly, and each connection takes at most that one more request.
    return503OnClosing: false,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    HttpApplicationModule.around(module),
    adapter,
    {
      bodyParser: false,
      logger,
    },
  );
  const fastify = app.getHttpAdapter().getInstance();
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if (!request.url.startsWith('/v1beta')) return done(null, body);
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
 * Every HTTP application gets `MetricsModule` (`GET /metrics` and the registry its collectors inject)
 * beside its own module.
 */
@Module({})
class HttpApplicationModule {
  static around(module: unknown): DynamicModule {
    return { module: HttpApplicationModule, imports: [MetricsModule, module as DynamicModule] };
  }
}

/**
 * Fastify rejects some URLs before any route or Nest filter sees them (bad percent-encoding, a
 * path segment over `maxParamLength`) and would answer with its own body, whose `code` is a string
 * and which lacks the keys every client reads. Each surface promises its own error body on every
 * failure, so these are answered 400 in that shape:
 * - Config API (`/v1beta`): `{error, code: 3}`, the invalid argument of gRPC (spec §4);
 * - everything else, the tracking API: `{success: false, code, message, error}` (tracking spec §9.2);
 *   the token route has no segment to misread.
 */
function answerUnroutableUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message = error.message;
  const path = request.url.split('?')[0];
  reply.code(400).header('content-type', 'application/json; charset=utf-8');
  if (path.startsWith('/v1beta')) {
    reply.send({ error: message, code: 3, message });
  } else {
    reply.send({ success: false, code: 'invalid_request', message, error: message });
  }
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

export async function listen(app: INestApplication, port: number, host: string): Promise<string> {
  await app.listen(port, host);
  return app.getUrl();
}
