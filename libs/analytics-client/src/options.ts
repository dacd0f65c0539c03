import { createPrivateKey, type KeyObject } from 'node:crypto';
import { AnalyticsValidationError, type AnalyticsError } from './errors';
import type { AnalyticsMessage } from './message-builder';

/**
 * Default tracking addresses of the two regions. These are PLACEHOLDERS for a hosted Tributary: a
 * self-hosted deployment passes its own address as `host` (any `http://` or `https://` URL).
 */
export const REGION_HOSTS = Object.freeze({
  us: 'https://api.tributary.dev',
  eu: 'https://eu.api.tributary.dev',
});
export type Region = keyof typeof REGION_HOSTS;

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';

/** Where log lines go; `console` by default. */
export interface AnalyticsLogger {
  error(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  debug(message: string, ...details: unknown[]): void;
}

/** Called when messages are given up: a batch that failed for good, a refused call, server rejections. */
export type ErrorHandler = (error: AnalyticsError, batch: readonly AnalyticsMessage[]) => void;

export interface RetryBackoffOptions {
  /** The cap of the first retry's delay; each retry doubles it. Default 200 ms. */
  initialDelayMs?: number;
  /** No computed delay exceeds this. Default 30,000 ms. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this is cut to it. Default 300,000 ms (5 minutes). */
  maxRetryAfterMs?: number;
}

/**
 * OAuth 2.0 `client_credentials` with a signed JWT client assertion (docs/tracking-api.md §11). Every request then carries
 * `Authorization: Bearer <access token>` as well as the write key in the body.
 */
export interface OAuthOptions {
  /** The OAuth application's client id (`client_id` from the Config API). */
  clientId: string;
  /** The application's RSA private key as PEM (PKCS #8 `BEGIN PRIVATE KEY`; PKCS #1 is accepted too). */
  clientKey: string;
  /** The `key_id` under which the matching public key was registered with the application. */
  keyId: string;
  /** The base URL of the token endpoint (`<authServer>/token`). Default: the tracking `host`. */
  authServer?: string;
  /** Default `tracking_api:write`. */
  scope?: string;
}

export interface AnalyticsOptions {
  /** The source's write key. Required. */
  writeKey: string;
  /** `'us'` (default), `'eu'`, or the base URL of a Tributary tracking API, path prefix included. */
  host?: Region | string;
  /** Appended to `host`. Default `/v1/batch`. */
  path?: string;
  /** Messages per request, at most. Default 100; between 1 and 2,500. */
  batchSize?: number;
  /** Milliseconds a queued message waits for a batch to fill before it is sent anyway. Default 500. */
  flushInterval?: number;
  /** Messages the queue holds; further calls are refused until it drains. Default 10,000. */
  maxQueueSize?: number;
  /** Retries of one batch after a 429, 5xx, network error or timeout. Default 10. */
  maxRetries?: number;
  /** Backoff between retries (exponential with jitter). */
  retryBackoff?: RetryBackoffOptions;
  /** Milliseconds one request may take. Default 10,000. */
  timeout?: number;
  /** Compress request bodies with gzip (`Content-Encoding: gzip`). Default false. */
  gzip?: boolean;
  /** Each call sends its message at once; its promise settles with the server's answer. Default false. */
  syncMode?: boolean;
  /** When false, nothing leaves the process and every send counts as a success. Default true. */
  send?: boolean;
  /** Ruby's name for `send: false`: `stub: true` does the same. */
  stub?: boolean;
  /** Default `'warn'`. */
  logLevel?: LogLevel;
  logger?: AnalyticsLogger;
  /** Told about every message that is given up; see the README. Without it, the error is logged. */
  onError?: ErrorHandler;
  /** Authorize with OAuth access tokens; see the README. Without it, requests use the write key alone. */
  oauth?: OAuthOptions;
}

export interface ResolvedOAuthOptions {
  clientId: string;
  keyId: string;
  privateKey: KeyObject;
  /** The configured auth server without trailing slashes: the assertion's `aud`. */
  authServer: string;
  /** `<authServer>/token`. */
  tokenUrl: string;
  scope: string;
}

export interface ResolvedOptions {
  writeKey: string;
  url: string;
  batchSize: number;
  flushInterval: number;
  maxQueueSize: number;
  maxRetries: number;
  retryBackoff: Required<RetryBackoffOptions>;
  timeout: number;
  gzip: boolean;
  syncMode: boolean;
  send: boolean;
  logLevel: LogLevel;
  logger: AnalyticsLogger;
  onError?: ErrorHandler;
  oauth?: ResolvedOAuthOptions;
}

/** The tracking API keeps only the first 2,500 messages of a batch (docs/tracking-api.md §8.3). */
export const MAX_BATCH_SIZE = 2500;

const LOG_LEVELS: readonly LogLevel[] = ['silent', 'error', 'warn', 'info', 'debug'];

function invalid(field: string, text: string): never {
  throw new AnalyticsValidationError('invalid_options', `Option "${field}" ${text}`, field);
}

function integerOption(
  options: object,
  field: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const value = (options as Record<string, unknown>)[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    invalid(field, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function booleanOption(options: object, field: string, fallback: boolean): boolean {
  const value = (options as Record<string, unknown>)[field];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') invalid(field, `must be a boolean, got ${typeof value}`);
  return value;
}

/**
 * The request URL: `path` appended to `host`, keeping any path prefix of the host, so a Tributary mounted
 * under `/tracking` works with `host: 'https://example.com/tracking'` (docs/tracking-api.md §3).
 */
export function resolveUrl(host: string | undefined, path: string | undefined): string {
  const base = resolveHost(host);
  if (path !== undefined && (typeof path !== 'string' || path.trim() === '')) {
    invalid('path', `must be a non-empty string, got ${JSON.stringify(path)}`);
  }
  const suffix = (path ?? '/v1/batch').replace(/^\/+/, '');
  return `${base}/${suffix}`;
}

/** The tracking base URL named by `host` (a region or a URL), without trailing slashes. */
function resolveHost(host: string | undefined): string {
  const base =
    host === undefined ? REGION_HOSTS.us : ((REGION_HOSTS as Record<string, string>)[host] ?? host);
  if (!isHttpUrl(base)) invalid('host', `must be 'us', 'eu' or an http(s) URL, got ${JSON.stringify(host)}`);
  return base.replace(/(?<!\/)\/+$/, '');
}

function isHttpUrl(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function requiredText(options: object, field: string): string {
  const value = (options as Record<string, unknown>)[field];
  if (typeof value !== 'string' || value.trim() === '')
    invalid(`oauth.${field}`, 'is required and must be a non-empty string');
  return value;
}

/**
 * Checks the OAuth options up front, the key above all: a key that cannot sign would otherwise surface
 * only at the first send, in the background.
 */
export function resolveOAuthOptions(oauth: unknown, trackingBase: string): ResolvedOAuthOptions {
  if (oauth === null || typeof oauth !== 'object')
    invalid('oauth', 'must be an object with clientId, clientKey and keyId');
  const clientId = requiredText(oauth, 'clientId');
  const keyId = requiredText(oauth, 'keyId');
  const clientKey = requiredText(oauth, 'clientKey');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: clientKey, format: 'pem' });
  } catch {
    invalid('oauth.clientKey', 'must be an RSA private key in PEM form (PKCS #8 "BEGIN PRIVATE KEY")');
  }
  if (privateKey.asymmetricKeyType !== 'rsa') {
    invalid(
      'oauth.clientKey',
      `must be an RSA key (RS256), got a ${String(privateKey.asymmetricKeyType)} key`,
    );
  }
  const { authServer: configuredServer, scope } = oauth as OAuthOptions;
  if (configuredServer !== undefined && !isHttpUrl(configuredServer)) {
    invalid('oauth.authServer', `must be an http or https URL, got ${JSON.stringify(configuredServer)}`);
  }
  if (scope !== undefined && (typeof scope !== 'string' || scope.trim() === '')) {
    invalid('oauth.scope', 'must be a non-empty string');
  }
  // Python strips the trailing slash and Node keeps it (docs/tracking-api.md §11.1); one slash before /token is the tidy form.
  const authServer = (configuredServer ?? trackingBase).replace(/(?<!\/)\/+$/, '');
  return {
    clientId,
    keyId,
    privateKey,
    authServer,
    tokenUrl: `${authServer}/token`,
    scope: scope ?? 'tracking_api:write',
  };
}

export function resolveOptions(options: AnalyticsOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new AnalyticsValidationError(
      'invalid_options',
      'The client needs an options object with a writeKey',
    );
  }
  if (typeof options.writeKey !== 'string' || options.writeKey.trim() === '') {
    invalid('writeKey', 'is required and must be a non-empty string');
  }
  const logLevel = options.logLevel ?? 'warn';
  if (!LOG_LEVELS.includes(logLevel)) invalid('logLevel', `must be one of ${LOG_LEVELS.join(', ')}`);
  if (options.onError !== undefined && typeof options.onError !== 'function')
    invalid('onError', 'must be a function');
  const backoff = options.retryBackoff ?? {};
  const retryBackoff = {
    initialDelayMs: integerOption(backoff, 'initialDelayMs', 200, 0),
    maxDelayMs: integerOption(backoff, 'maxDelayMs', 30_000, 0),
    maxRetryAfterMs: integerOption(backoff, 'maxRetryAfterMs', 300_000, 0),
  };
  const stub = booleanOption(options, 'stub', false);
  return {
    writeKey: options.writeKey,
    url: resolveUrl(options.host, options.path),
    batchSize: integerOption(options, 'batchSize', 100, 1, MAX_BATCH_SIZE),
    flushInterval: integerOption(options, 'flushInterval', 500, 0),
    maxQueueSize: integerOption(options, 'maxQueueSize', 10_000, 1),
    maxRetries: integerOption(options, 'maxRetries', 10, 0),
    retryBackoff,
    timeout: integerOption(options, 'timeout', 10_000, 1),
    gzip: booleanOption(options, 'gzip', false),
    syncMode: booleanOption(options, 'syncMode', false),
    send: booleanOption(options, 'send', true) && !stub,
    logLevel,
    logger: options.logger ?? console,
    onError: options.onError,
    oauth:
      options.oauth === undefined ? undefined : resolveOAuthOptions(options.oauth, resolveHost(options.host)),
  };
}
