import { AnalyticsValidationError } from './errors';
import { REGION_HOSTS, resolveOptions, resolveUrl } from './options';

describe('resolveUrl', () => {
  it('defaults to the us region and /v1/batch', () => {
    expect(resolveUrl(undefined, undefined)).toBe(`${REGION_HOSTS.us}/v1/batch`);
    expect(resolveUrl('eu', undefined)).toBe(`${REGION_HOSTS.eu}/v1/batch`);
  });

  it('appends the path to any URL, keeping its path prefix and one slash between', () => {
    expect(resolveUrl('http://127.0.0.1:8080', '/v1/import')).toBe('http://127.0.0.1:8080/v1/import');
    expect(resolveUrl('https://example.com/tracking/', 'v1/batch')).toBe(
      'https://example.com/tracking/v1/batch',
    );
  });

  it.each([['not a url'], ['ftp://example.com'], ['mars']])('refuses host %j', (host) => {
    expect(() => resolveUrl(host, undefined)).toThrow(AnalyticsValidationError);
  });
});

describe('resolveOptions', () => {
  it('has the documented defaults', () => {
    const resolved = resolveOptions({ writeKey: 'wk' });
    expect(resolved).toMatchObject({
      writeKey: 'wk',
      url: `${REGION_HOSTS.us}/v1/batch`,
      batchSize: 100,
      flushInterval: 500,
      maxQueueSize: 10_000,
      maxRetries: 10,
      timeout: 10_000,
      gzip: false,
      syncMode: false,
      send: true,
      logLevel: 'warn',
      retryBackoff: { initialDelayMs: 200, maxDelayMs: 30_000, maxRetryAfterMs: 300_000 },
    });
  });

  it('stub: true is send: false', () => {
    expect(resolveOptions({ writeKey: 'wk', stub: true }).send).toBe(false);
    expect(resolveOptions({ writeKey: 'wk', send: false }).send).toBe(false);
  });

  it.each([
    [{}, 'writeKey'],
    [{ writeKey: '  ' }, 'writeKey'],
    [{ writeKey: 'wk', batchSize: 0 }, 'batchSize'],
    [{ writeKey: 'wk', batchSize: 2501 }, 'batchSize'],
    [{ writeKey: 'wk', maxQueueSize: 1.5 }, 'maxQueueSize'],
    [{ writeKey: 'wk', maxRetries: -1 }, 'maxRetries'],
    [{ writeKey: 'wk', timeout: 0 }, 'timeout'],
    [{ writeKey: 'wk', gzip: 'yes' }, 'gzip'],
    [{ writeKey: 'wk', logLevel: 'loud' }, 'logLevel'],
    [{ writeKey: 'wk', onError: 'log' }, 'onError'],
    [{ writeKey: 'wk', path: '' }, 'path'],
    [{ writeKey: 'wk', retryBackoff: { initialDelayMs: -5 } }, 'initialDelayMs'],
  ])('refuses %j, naming %s', (options, field) => {
    try {
      resolveOptions(options as never);
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(AnalyticsValidationError);
      expect((error as AnalyticsValidationError).code).toBe('invalid_options');
      expect((error as AnalyticsValidationError).field).toBe(field);
    }
  });
});
