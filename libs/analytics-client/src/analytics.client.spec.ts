// The client's queue and its refusals, without a network: `send: false` replaces the transport. The
// behaviours that need a server (batching, retries, gzip, syncMode's 200) are in test/*.e2e-spec.ts.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Analytics,
  AnalyticsQueueError,
  AnalyticsValidationError,
  VERSION,
  type AnalyticsError,
  type AnalyticsMessage,
} from './index';

const packageRoot = join(__dirname, '..');
const repositoryRoot = join(packageRoot, '..', '..');

function recordErrors() {
  const reports: Array<{ error: AnalyticsError; batch: readonly AnalyticsMessage[] }> = [];
  return {
    reports,
    onError: (error: AnalyticsError, batch: readonly AnalyticsMessage[]) => reports.push({ error, batch }),
  };
}

describe('the package', () => {
  const manifest = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));

  it('exports VERSION equal to package.json', () => {
    expect(manifest.name).toBe('@tributary/analytics-client');
    expect(VERSION).toBe(manifest.version);
  });

  it('has no dependencies, and its sources import only Node built-ins and each other', () => {
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.main).toBe('dist/index.js');
    expect(manifest.types).toBe('dist/index.d.ts');
    const sources = readdirSync(join(packageRoot, 'src')).filter(
      (file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'),
    );
    for (const file of sources) {
      const text = readFileSync(join(packageRoot, 'src', file), 'utf8');
      const imported = [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1]);
      for (const specifier of imported)
        expect({ file, specifier, ok: /^(node:|\.\/)/.test(specifier) }).toEqual({
          file,
          specifier,
          ok: true,
        });
    }
  });
});

describe('Analytics without a network (send: false)', () => {
  it('queues calls, resolves them as queued, and flush() empties the queue', async () => {
    const { reports, onError } = recordErrors();
    const analytics = new Analytics({ writeKey: 'wk', send: false, flushInterval: 60_000, onError });
    const result = await analytics.track({ userId: 'u', event: 'Signed Up' });
    expect(result).toMatchObject({ status: 'queued', message: { type: 'track', event: 'Signed Up' } });
    expect(result.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(analytics.queueLength).toBe(1);
    await analytics.flush();
    expect(analytics.queueLength).toBe(0);
    expect(reports).toEqual([]);
    await analytics.close();
  });

  it('stub: true works the same way; syncMode then resolves each call as delivered', async () => {
    const analytics = new Analytics({ writeKey: 'wk', stub: true, syncMode: true });
    await expect(analytics.identify({ userId: 'u', traits: { a: 1 } })).resolves.toMatchObject({
      status: 'delivered',
    });
    expect(analytics.queueLength).toBe(0);
    await analytics.close();
  });

  it('refuses calls past maxQueueSize, reports each one with its message, and never throws', async () => {
    const { reports, onError } = recordErrors();
    const analytics = new Analytics({
      writeKey: 'wk',
      send: false,
      maxQueueSize: 3,
      flushInterval: 60_000,
      onError,
      logLevel: 'silent',
    });
    const results = [];
    for (let index = 0; index < 5; index += 1)
      results.push(await analytics.track({ userId: 'u', event: `e${index}` }));
    expect(results.map((result) => result.status)).toEqual([
      'queued',
      'queued',
      'queued',
      'refused',
      'refused',
    ]);
    expect(analytics.queueLength).toBe(3);
    expect(reports).toHaveLength(2);
    expect(reports[0].error).toBeInstanceOf(AnalyticsQueueError);
    expect(reports[0].error.code).toBe('queue_full');
    expect(reports[0].error.message).toContain('maxQueueSize');
    expect(reports.map((report) => report.batch.map((message) => message.event))).toEqual([['e3'], ['e4']]);
    expect(results[3]).toMatchObject({
      status: 'refused',
      error: reports[0].error,
      messageId: reports[0].batch[0].messageId,
    });
    // Once drained, the queue takes messages again.
    await analytics.flush();
    await expect(analytics.track({ userId: 'u', event: 'after' })).resolves.toMatchObject({
      status: 'queued',
    });
    await analytics.close();
  });

  it('refuses calls after close(), reported as client_closed; close() twice is harmless', async () => {
    const { reports, onError } = recordErrors();
    const analytics = new Analytics({ writeKey: 'wk', send: false, onError });
    await analytics.track({ userId: 'u', event: 'before' });
    await analytics.close();
    await analytics.close();
    const result = await analytics.track({ userId: 'u', event: 'late' });
    expect(result).toMatchObject({ status: 'refused', error: { code: 'client_closed' } });
    expect(reports.map((report) => [report.error.code, report.batch[0].event])).toEqual([
      ['client_closed', 'late'],
    ]);
  });

  it('throws AnalyticsValidationError synchronously for an invalid call and queues nothing', () => {
    const analytics = new Analytics({ writeKey: 'wk', send: false });
    expect(() => analytics.track({ userId: 'u' } as never)).toThrow(AnalyticsValidationError);
    expect(() => analytics.alias({ userId: 'u' } as never)).toThrow(/previousId/);
    expect(() => analytics.page({ properties: {} })).toThrow(/userId" or "anonymousId/);
    expect(() =>
      analytics.track({ userId: 'u', event: 'big', properties: { blob: 'x'.repeat(33_000) } }),
    ).toThrow(/is \d+ bytes of JSON; the limit is 32768 bytes/);
    expect(analytics.queueLength).toBe(0);
  });

  it('survives an onError handler that throws', async () => {
    const lines: string[] = [];
    const logger = {
      error: (line: string) => lines.push(line),
      warn: () => {},
      info: () => {},
      debug: () => {},
    };
    const analytics = new Analytics({
      writeKey: 'wk',
      send: false,
      maxQueueSize: 1,
      flushInterval: 60_000,
      logger,
      onError: () => {
        throw new Error('handler bug');
      },
    });
    await analytics.track({ userId: 'u', event: 'a' });
    await expect(analytics.track({ userId: 'u', event: 'b' })).resolves.toMatchObject({ status: 'refused' });
    expect(lines).toEqual([expect.stringContaining('onError threw')]);
    await analytics.close();
  });

  it('logs given-up messages when there is no onError, at or above logLevel only', async () => {
    const lines: Array<[string, string]> = [];
    const logger = {
      error: (line: string) => lines.push(['error', line]),
      warn: (line: string) => lines.push(['warn', line]),
      info: (line: string) => lines.push(['info', line]),
      debug: (line: string) => lines.push(['debug', line]),
    };
    const quiet = new Analytics({ writeKey: 'wk', send: false, logLevel: 'silent', logger });
    await quiet.close();
    await quiet.track({ userId: 'u', event: 'x' });
    expect(lines).toEqual([]);
    const loud = new Analytics({ writeKey: 'wk', send: false, logLevel: 'error', logger });
    await loud.close();
    await loud.track({ userId: 'u', event: 'x' });
    expect(lines).toEqual([
      ['error', expect.stringMatching(/^\[tributary-analytics\] track refused: the client is closed/)],
    ]);
  });

  it('keeps no timer that holds the process open: a program that never calls close() still exits', () => {
    const script = `
      const { Analytics } = require('./libs/analytics-client/src');
      const analytics = new Analytics({ writeKey: 'wk', host: 'http://127.0.0.1:9', flushInterval: 60000, logLevel: 'silent' });
      analytics.track({ userId: 'u', event: 'never sent' });
      console.log('queued', analytics.queueLength);
    `;
    const started = Date.now();
    const child = spawnSync(process.execPath, ['--require', './test/support/swc-register.js', '-e', script], {
      cwd: repositoryRoot,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect({ status: child.status, stdout: child.stdout.trim(), stderr: child.stderr }).toEqual({
      status: 0,
      stdout: 'queued 1',
      stderr: '',
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
