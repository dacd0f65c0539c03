import { generateKeyPairSync } from 'node:crypto';
import { Analytics } from './analytics.client';
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

describe('resolveOptions: oauth', () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const base = { clientId: 'client-1', clientKey: pkcs8, keyId: 'key-1' };

  function refusal(oauth: unknown, host?: string): AnalyticsValidationError {
    try {
      resolveOptions({ writeKey: 'wk', host, oauth: oauth as never });
    } catch (error) {
      return error as AnalyticsValidationError;
    }
    throw new Error('expected the options to be refused');
  }

  it('defaults the auth server to the tracking host (its base, without the path) and the scope', () => {
    const { oauth } = resolveOptions({
      writeKey: 'wk',
      host: 'http://127.0.0.1:8080/tracking/',
      oauth: base,
    });
    expect(oauth).toMatchObject({
      clientId: 'client-1',
      keyId: 'key-1',
      authServer: 'http://127.0.0.1:8080/tracking',
      tokenUrl: 'http://127.0.0.1:8080/tracking/token',
      scope: 'tracking_api:write',
    });
    expect(oauth?.privateKey.asymmetricKeyType).toBe('rsa');
    expect(resolveOptions({ writeKey: 'wk' }).oauth).toBeUndefined();
  });

  it('takes an auth server (one trailing slash dropped), a scope, and a PKCS #1 key too', () => {
    const pkcs1 = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const { oauth } = resolveOptions({
      writeKey: 'wk',
      oauth: { ...base, clientKey: pkcs1, authServer: 'https://auth.example/', scope: 'tracking_api:write' },
    });
    expect(oauth).toMatchObject({
      authServer: 'https://auth.example',
      tokenUrl: 'https://auth.example/token',
    });
  });

  it.each([
    ['not an object', 'oauth', 'oauth'],
    ['no clientId', { ...base, clientId: undefined }, 'oauth.clientId'],
    ['an empty keyId', { ...base, keyId: ' ' }, 'oauth.keyId'],
    ['no clientKey', { ...base, clientKey: undefined }, 'oauth.clientKey'],
    ['a clientKey that is not PEM', { ...base, clientKey: 'secret' }, 'oauth.clientKey'],
    [
      'a truncated PEM',
      { ...base, clientKey: pkcs8.slice(0, 200) + '\n-----END PRIVATE KEY-----\n' },
      'oauth.clientKey',
    ],
    [
      'a public key',
      {
        ...base,
        clientKey: generateKeyPairSync('rsa', { modulusLength: 2048 })
          .publicKey.export({ type: 'spki', format: 'pem' })
          .toString(),
      },
      'oauth.clientKey',
    ],
    [
      'an EC key (RS256 needs RSA)',
      {
        ...base,
        clientKey: generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .privateKey.export({ type: 'pkcs8', format: 'pem' })
          .toString(),
      },
      'oauth.clientKey',
    ],
    ['an authServer that is not a URL', { ...base, authServer: 'auth server' }, 'oauth.authServer'],
    ['an ftp authServer', { ...base, authServer: 'ftp://auth.example' }, 'oauth.authServer'],
    ['an empty scope', { ...base, scope: '' }, 'oauth.scope'],
  ])('refuses %s with invalid_options', (_case, oauth, field) => {
    const error = refusal(oauth);
    expect(error).toBeInstanceOf(AnalyticsValidationError);
    expect({ code: error.code, field: error.field }).toEqual({ code: 'invalid_options', field });
  });

  it('refuses it at construction, before anything is sent', () => {
    expect(() => new Analytics({ writeKey: 'wk', oauth: { ...base, clientKey: 'nope' } })).toThrow(
      AnalyticsValidationError,
    );
  });
});
