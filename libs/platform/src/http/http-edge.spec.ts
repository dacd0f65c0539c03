// The HTTP edge of every Tributary application (createHttpApplication), on a probe module over real
// loopback HTTP: which API's error body a refused request gets in each application (`apis`), the 408
// of a request that never finishes arriving, pipelined junk, and the log line and metric of a refusal.
// The apps' own suites (apps/tributary/test/http-edge.e2e-spec.ts) run the same refusals on the real routes.
import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { PassThrough } from 'node:stream';
import { ParsedResponse, rawExchange } from '../../../../test/support/raw-http';
import { edgeErrorResponse, errorShapeOf, HttpApis } from './http-edge';
import { createHttpApplication } from './http-server';
import { metricsUrlOf } from './serve-entry-point';

@Controller()
class ProbeController {
  @Post('v1/track')
  track(@Body() body: unknown): { success: boolean; bytes: number } {
    return { success: true, bytes: Buffer.isBuffer(body) ? body.length : 0 };
  }

  @Get('v1beta/workspaces')
  workspaces(): { workspaces: unknown[] } {
    return { workspaces: [] };
  }

  @Post('v1beta/workspaces')
  createWorkspace(): { workspace: object } {
    return { workspace: {} };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

function captureLines(): { stream: PassThrough; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return {
    stream,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const TRACKING_BODY = {
  success: false,
  code: expect.any(String),
  message: expect.any(String),
  error: expect.any(String),
};
const CONFIG_BODY = { error: expect.any(String), code: expect.any(Number), message: expect.any(String) };
const OAUTH_BODY = { error: 'invalid_request', error_description: expect.any(String) };

describe('errorShapeOf and edgeErrorResponse', () => {
  it.each<[HttpApis, string | undefined, 'tracking' | 'config' | 'oauth' | 'public']>([
    ['all', '/v1/track', 'tracking'],
    ['all', '/public-api/sources?x=1', 'public'],
    ['all', '//public-api', 'public'],
    ['all', '/public-apis', 'tracking'],
    ['config', '/public-api/', 'public'],
    ['tracking', '/public-api/sources', 'tracking'],
    ['all', '/v1beta/workspaces', 'config'],
    ['all', '//v1beta//workspaces/?x=1', 'config'],
    ['all', 'http://collector.example/v1beta/workspaces', 'config'],
    ['all', '/token', 'oauth'],
    ['all', '//token?x=1', 'oauth'],
    ['all', '/health/ready', 'tracking'],
    ['all', undefined, 'tracking'],
    ['tracking', '/v1beta/workspaces', 'tracking'],
    ['tracking', '/token', 'oauth'],
    ['tracking', undefined, 'tracking'],
    ['config', '/v1/track', 'config'],
    ['config', '/token', 'config'],
    ['config', undefined, 'config'],
  ])('%s %s -> %s', (apis, target, shape) => expect(errorShapeOf(target, apis)).toBe(shape));

  it('gives each refusal its status and each API its code', () => {
    expect(edgeErrorResponse('all', '/v1/track', 'head_too_large', 'too big')).toEqual({
      status: 431,
      body: { success: false, code: 'headers_too_large', message: 'too big', error: 'too big' },
    });
    expect(edgeErrorResponse('all', '/v1beta/x', 'unknown_method', 'no route')).toEqual({
      status: 404,
      body: { error: 'no route', code: 5, message: 'no route' },
    });
    expect(edgeErrorResponse('all', '/token', 'malformed', 'bad')).toEqual({
      status: 400,
      body: { error: 'invalid_request', error_description: 'bad' },
    });
    expect(edgeErrorResponse('config', undefined, 'timeout', 'slow')).toEqual({
      status: 408,
      body: { error: 'slow', code: 4, message: 'slow' },
    });
    expect(edgeErrorResponse('all', '/public-api/sources', 'unknown_method', 'no route')).toEqual({
      status: 404,
      body: { errors: [{ type: 'NotFound', message: 'no route' }] },
    });
  });
});

describe('createHttpApplication: requests refused before routing', () => {
  const apps: NestFastifyApplication[] = [];

  async function start(options: { apis?: HttpApis; requestTimeoutMs?: number; log?: PassThrough } = {}) {
    const app = await createHttpApplication(ProbeModule, 'log', {
      apis: options.apis,
      requestTimeoutMs: options.requestTimeoutMs,
      logDestination: options.log ?? new PassThrough().resume(),
      metricsListener: { port: 0, host: '127.0.0.1' },
    });
    await app.listen(0, '127.0.0.1');
    apps.push(app);
    return (app.getHttpServer().address() as { port: number }).port;
  }

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  const only = (responses: ParsedResponse[]): ParsedResponse => {
    expect(responses).toHaveLength(1);
    return responses[0];
  };

  it('answers 408 in the shape of the API whose request did not arrive in time, head or body', async () => {
    const port = await start({ requestTimeoutMs: 300 });
    const slowBody = await rawExchange(
      port,
      ['POST /v1/track HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{"type":'],
      { timeoutMs: 5_000 },
    );
    expect(only(slowBody.responses)).toMatchObject({
      status: 408,
      body: {
        ...TRACKING_BODY,
        code: 'request_timeout',
        message: 'the request did not arrive completely within 300 ms',
      },
    });
    expect(slowBody.closedByServer).toBe(true);
    const slowBeta = await rawExchange(
      port,
      ['POST /v1beta/workspaces HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab'],
      { timeoutMs: 5_000 },
    );
    expect(only(slowBeta.responses)).toMatchObject({ status: 408, body: { ...CONFIG_BODY, code: 4 } });
    // A head that never ends: the request line is in an earlier read, so the application's own shape.
    const slowHead = await rawExchange(port, ['GET /v1beta/workspaces HTTP/1.1\r\nhost: x\r\n'], {
      timeoutMs: 5_000,
    });
    expect(only(slowHead.responses)).toMatchObject({ status: 408, body: TRACKING_BODY });
  });

  it('answers in the standalone application’s own shape whatever the path, the token route aside', async () => {
    const configPort = await start({ apis: 'config' });
    const split = await rawExchange(configPort, [
      'GET /v1beta/workspaces HTTP/1.1\r\nhost: x\r\n',
      `x-padding: ${'p'.repeat(10_000)}`,
      `${'p'.repeat(10_000)}\r\n\r\n`,
    ]);
    expect(only(split.responses)).toMatchObject({ status: 431, body: { ...CONFIG_BODY, code: 3 } });
    const foo = await rawExchange(configPort, ['FOO /v1/track HTTP/1.1\r\nhost: x\r\n\r\n']);
    expect(only(foo.responses)).toMatchObject({ status: 404, body: { ...CONFIG_BODY, code: 5 } });

    const trackingPort = await start({ apis: 'tracking' });
    const beta = await rawExchange(trackingPort, ['FOO /v1beta/workspaces HTTP/1.1\r\nhost: x\r\n\r\n']);
    expect(only(beta.responses)).toMatchObject({
      status: 404,
      body: { ...TRACKING_BODY, code: 'not_found' },
    });
    const token = await rawExchange(trackingPort, ['FOO /token HTTP/1.1\r\nhost: x\r\n\r\n']);
    expect(only(token.responses)).toMatchObject({ status: 404, body: OAUTH_BODY });
  });

  it('answers pipelined requests in order, then the junk after them 400, then closes', async () => {
    const port = await start();
    const track = 'POST /v1/track HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}';
    const result = await rawExchange(port, [`${track}${track}not a request\r\n\r\n`]);
    expect(result.responses.map((response) => [response.status, response.body])).toEqual([
      [201, { success: true, bytes: 2 }],
      [201, { success: true, bytes: 2 }],
      [400, { ...TRACKING_BODY, code: 'invalid_request' }],
    ]);
    expect(result.closedByServer).toBe(true);
  });

  it('logs each refusal with its request id and counts it under the unmatched route', async () => {
    const log = captureLines();
    const port = await start({ log: log.stream });
    const unknownMethod = only(
      (await rawExchange(port, ['FOO /v1/track HTTP/1.1\r\nhost: x\r\n\r\n'])).responses,
    );
    const largeHead = only(
      (
        await rawExchange(port, [
          `GET /v1/track HTTP/1.1\r\nhost: x\r\nx-padding: ${'p'.repeat(20_000)}\r\n\r\n`,
        ])
      ).responses,
    );
    expect([unknownMethod.status, largeHead.status]).toEqual([404, 431]);
    const refusals = log.lines().filter((entry) => entry.message === 'request refused before routing');
    expect(refusals).toEqual([
      expect.objectContaining({
        requestId: unknownMethod.headers['x-request-id'],
        method: 'other',
        route: null,
        status: 404,
        reason: 'HPE_INVALID_METHOD',
      }),
      expect.objectContaining({
        requestId: largeHead.headers['x-request-id'],
        method: 'GET',
        route: null,
        status: 431,
        reason: 'HPE_HEADER_OVERFLOW',
      }),
    ]);
    const metrics = await (await fetch(metricsUrlOf(apps[apps.length - 1])!)).text();
    expect(metrics).toMatch(
      /tributary_http_requests_total\{method="other",route="unmatched",status_class="4xx"\} 1\n/,
    );
    expect(metrics).toMatch(
      /tributary_http_requests_total\{method="GET",route="unmatched",status_class="4xx"\} 1\n/,
    );
  });
});
