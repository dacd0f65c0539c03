import { Body, Controller, Get, Logger, Module, Post } from '@nestjs/common';
import { PassThrough } from 'node:stream';
import { createHttpApplication } from '../http/http-server';
import { JsonLogger } from './json-logger';
import { REDACTED, redactText, redactValue } from './secret-redaction';

function captureLines(): { stream: PassThrough; lines: () => Record<string, any>[]; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line)),
  };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('secret redaction', () => {
  it('redacts credentials after an auth scheme, encrypted settings and key=value secrets in text', () => {
    expect(redactText('Authorization: Basic d2stMTIzOg==')).toBe(`Authorization: Basic ${REDACTED}`);
    expect(redactText('got bearer eyJhbGciOi.abc.def here')).toBe(`got bearer ${REDACTED} here`);
    expect(redactText('setting "enc:v1:AAAA:BBBB" stored')).toBe(`setting "${REDACTED}" stored`);
    expect(redactText('shared_secret=hunter2, url=x')).toBe(`shared_secret=${REDACTED}, url=x`);
    expect(redactText('{"password":"pw1"}')).toBe(`{"password":"${REDACTED}"}`);
    expect(redactText('delivered 3 messages to webhooks')).toBe('delivered 3 messages to webhooks');
  });

  it('redacts secret keys at any depth and secret-looking values under any key, without touching the input', () => {
    const input = {
      headers: { Authorization: 'Basic abc', 'x-request-id': 'r-1' },
      destination: {
        config: { url: 'https://example.test', shared_secret: 'hunter2', api_key: 'enc:v1:xyz' },
        connection_string: 'postgres://u:p@db/x',
      },
      list: ['enc:v1:inlist', 'plain'],
      accessToken: 'tok',
      password: 'pw',
      count: 3,
    };
    const redacted = redactValue(input) as any;
    expect(redacted).toEqual({
      headers: { Authorization: REDACTED, 'x-request-id': 'r-1' },
      destination: {
        config: { url: 'https://example.test', shared_secret: REDACTED, api_key: REDACTED },
        connection_string: REDACTED,
      },
      list: [REDACTED, 'plain'],
      accessToken: REDACTED,
      password: REDACTED,
      count: 3,
    });
    expect(input.destination.config.shared_secret).toBe('hunter2');
  });

  it('survives cycles and errors', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    expect(redactValue(cyclic)).toEqual({ name: 'a', self: '[...]' });
    const error = redactValue(new Error('token=abc failed')) as any;
    expect(error.message).toBe(`token=${REDACTED} failed`);
  });
});

describe('JsonLogger', () => {
  it('writes one JSON object per line with time, level, context and message; LOG_LEVEL filters', async () => {
    const capture = captureLines();
    const logger = new JsonLogger({ level: 'warn', destination: capture.stream });
    logger.log('not written', 'Probe');
    logger.debug('not written either', 'Probe');
    logger.warn('slow destination', 'Router');
    logger.error('delivery failed', 'Error: boom\n    at x', 'Router');
    logger.error({ shared_secret: 'hunter2', reason: 'x' }, 'Router');
    await flush();
    const lines = capture.lines();
    expect(lines.map((line) => [line.level, line.context, line.message])).toEqual([
      ['warn', 'Router', 'slow destination'],
      ['error', 'Router', 'delivery failed'],
      ['error', 'Router', 'object'],
    ]);
    expect(lines[1].stack).toContain('Error: boom');
    expect(lines[2].data).toEqual({ shared_secret: REDACTED, reason: 'x' });
    for (const line of lines) expect(Date.parse(line.time)).not.toBeNaN();
    expect(capture.text()).not.toContain('hunter2');
  });

  it('follows the levels Nest sets', async () => {
    const capture = captureLines();
    const logger = new JsonLogger({ level: 'error', destination: capture.stream });
    logger.debug('hidden');
    logger.setLogLevels(['error', 'warn', 'log', 'debug']);
    logger.debug('shown');
    logger.verbose('still hidden');
    await flush();
    expect(capture.lines().map((line) => line.message)).toEqual(['shown']);
  });
});

@Controller('probe')
class ProbeController {
  private readonly logger = new Logger('Probe');

  @Post()
  async post(@Body() body: unknown): Promise<{ ok: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.logger.log(`handling a body of ${Buffer.isBuffer(body) ? body.length : 0} bytes`);
    return { ok: true };
  }

  @Get('secret')
  secret(): { ok: boolean } {
    this.logger.warn('caller sent Authorization: Basic c2VjcmV0LXdyaXRlLWtleTo= and enc:v1:abc:def');
    return { ok: true };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('createHttpApplication logging', () => {
  it('carries the request id into lines logged inside the request and writes one line per request', async () => {
    const capture = captureLines();
    const app = await createHttpApplication(ProbeModule, 'log', { logDestination: capture.stream });
    await app.listen(0, '127.0.0.1');
    try {
      const baseUrl = await app.getUrl();
      const posted = await fetch(`${baseUrl}/probe`, {
        method: 'POST',
        headers: { 'x-request-id': 'req-probe-1', 'content-type': 'application/octet-stream' },
        body: 'x'.repeat(100),
      });
      expect(posted.status).toBe(201);
      const generated = await fetch(`${baseUrl}/probe/secret`, {
        headers: { authorization: 'Basic c2VjcmV0LXdyaXRlLWtleTo=' },
      });
      const generatedId = generated.headers.get('x-request-id');
      expect(generatedId).toMatch(/^[0-9a-f-]{36}$/);
      // An id too long, or with characters that do not belong in an id, is replaced by one of ours:
      // the id goes into every log line and the audit trail.
      for (const chosen of ['x'.repeat(129), 'id with spaces', 'id"},{"forged":"line', '<script>']) {
        const answered = await fetch(`${baseUrl}/probe/secret`, { headers: { 'x-request-id': chosen } });
        expect({ chosen, id: answered.headers.get('x-request-id') }).toEqual({
          chosen,
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        });
      }
      // Probes are not logged (this module has no health route: a 404, still not logged).
      expect((await fetch(`${baseUrl}/health/live`)).status).toBe(404);
      expect((await fetch(`${baseUrl}/no-such-path`)).status).toBe(404);
      await flush();

      const lines = capture.lines();
      const inside = lines.find((line) => line.context === 'Probe' && line.message.startsWith('handling'));
      expect(inside).toMatchObject({
        level: 'info',
        requestId: 'req-probe-1',
        message: 'handling a body of 100 bytes',
      });
      expect(lines.find((line) => line.context === 'HTTP' && line.requestId === 'req-probe-1')).toMatchObject(
        {
          method: 'POST',
          route: '/probe',
          status: 201,
        },
      );
      const warned = lines.find((line) => line.context === 'Probe' && line.level === 'warn');
      expect(warned?.requestId).toBe(generatedId);
      expect(warned?.message).toBe(`caller sent Authorization: Basic ${REDACTED} and ${REDACTED}`);
      // An unknown path is logged with no route pattern, and its line still has the request id.
      const unmatched = lines.find((line) => line.context === 'HTTP' && line.route === null);
      expect(unmatched).toMatchObject({ method: 'GET', status: 404 });
      expect(typeof unmatched?.requestId).toBe('string');
      expect(lines.filter((line) => line.context === 'HTTP' && line.status === 404)).toHaveLength(1);
      expect(capture.text()).not.toContain('c2VjcmV0LXdyaXRlLWtleTo=');
      expect(capture.text()).not.toContain('enc:v1:');
      // Lines written outside any request (Nest's start-up) have no request id.
      expect(lines.some((line) => line.context !== 'HTTP' && line.requestId === undefined)).toBe(true);
    } finally {
      await app.close();
    }
  });
});
