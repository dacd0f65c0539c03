/**
 * OAuth 2.0 `client_credentials` with a signed JWT assertion (docs/tracking-api.md §11): fetches an access token from
 * `<authServer>/token`, caches it, refreshes it at half its lifetime, and drops it when the tracking API
 * refuses a request that carried it. One token request at a time, however many sends are waiting.
 */
import type { RequestAuthorization } from './request-authorization';
import { signClientAssertion } from './client-assertion';
import type { LeveledLogger } from './leveled-logger';
import type { ResolvedOAuthOptions, RetryBackoffOptions } from './options';
import { backoffDelayMs, parseRetryAfterMs } from './retry-policy';
import { VERSION } from './version';

const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The wait after a 429 without a usable `Retry-After`, as Segment's Node client does (docs/tracking-api.md §11.5). */
const DEFAULT_THROTTLE_WAIT_MS = 5_000;
/** The descriptions of a 400 that a fresh assertion, signed with the newly learned skew, can fix (docs/tracking-api.md §11.5). */
const CLOCK_SKEW_DESCRIPTIONS = new Set(['Token is expired', 'Token used before issued']);

/** The two clocks the token logic reads; injectable so that tests can move time. */
export interface OAuthClock {
  /** Wall-clock epoch milliseconds: assertion times, compared with the server's `Date` header. */
  wallMs(): number;
  /** A monotonic millisecond counter: token ages, which a wall-clock jump must not distort. */
  elapsedMs(): number;
}

export const SYSTEM_CLOCK: OAuthClock = {
  wallMs: () => Date.now(),
  elapsedMs: () => performance.now(),
};

/** No access token could be had; the batch that needed it is given up. */
export class OAuthTokenError extends Error {
  override readonly name = 'OAuthTokenError';
  constructor(
    message: string,
    readonly details: {
      attempts: number;
      status?: number;
      oauthError?: string;
      oauthErrorDescription?: string;
      responseBody?: string;
      cause?: unknown;
    },
  ) {
    super(message);
  }
}

export interface OAuthSettings {
  timeout: number;
  maxRetries: number;
  retryBackoff: Required<RetryBackoffOptions>;
}

interface CachedToken {
  header: string;
  /** On the monotonic clock: from then on, the next send fetches a new token. */
  refreshAtMs: number;
}

type TokenAttempt =
  | { kind: 'token'; accessToken: string; expiresInSeconds: number }
  /** A 400 that a fresh assertion may fix (clock skew). */
  | { kind: 'skew'; failure: OAuthTokenError }
  | { kind: 'throttled'; failure: OAuthTokenError; waitMs: number }
  /** 5xx, network error, timeout: worth asking again after a backoff. */
  | { kind: 'transient'; failure: OAuthTokenError }
  | { kind: 'refused'; failure: OAuthTokenError };

export class OAuthAuthorization implements RequestAuthorization {
  private token: CachedToken | undefined;
  private pending: Promise<CachedToken> | undefined;
  /** Local wall clock minus the server's, learned from every token response's `Date` header. */
  private skewMs = 0;

  constructor(
    private readonly oauth: ResolvedOAuthOptions,
    private readonly settings: OAuthSettings,
    private readonly log?: LeveledLogger,
    private readonly clock: OAuthClock = SYSTEM_CLOCK,
  ) {}

  /** The clock skew learned so far, in milliseconds (local minus server). */
  get clockSkewMs(): number {
    return this.skewMs;
  }

  /** `Bearer <token>`; fetches a token first when none is cached or the cached one is half-way through its life. */
  async authorizationHeader(): Promise<string> {
    const cached = this.token;
    if (cached !== undefined && this.clock.elapsedMs() < cached.refreshAtMs) return cached.header;
    this.pending ??= this.fetchToken().finally(() => {
      this.pending = undefined;
    });
    const fresh = await this.pending;
    return fresh.header;
  }

  /**
   * The tracking API answered 400, 401 or 403: the token may be revoked or stale, so the next send fetches
   * a new one (docs/tracking-api.md §11.6). Only the token that was refused is dropped, not a newer one.
   */
  requestRefused(_status: number, sentHeader: string | undefined): void {
    if (this.token !== undefined && this.token.header === sentHeader) this.token = undefined;
  }

  private async fetchToken(): Promise<CachedToken> {
    const { maxRetries, retryBackoff } = this.settings;
    let skewRetried = false;
    let retries = 0;
    for (let attempts = 1; ; attempts += 1) {
      const startedAtMs = this.clock.elapsedMs();
      const attempt = await this.requestToken(attempts);
      if (attempt.kind === 'token') {
        const token = {
          header: `Bearer ${attempt.accessToken}`,
          // Measured from the request's start, so network time only makes the refresh come earlier.
          refreshAtMs: startedAtMs + (attempt.expiresInSeconds * 1000) / 2,
        };
        this.token = token;
        this.log?.debug(`OAuth: got an access token valid for ${attempt.expiresInSeconds} s`);
        return token;
      }
      if (attempt.kind === 'refused') throw attempt.failure;
      if (attempt.kind === 'skew') {
        // The skew was just re-learned from this answer's Date header: one fresh assertion, at once.
        if (skewRetried) throw attempt.failure;
        skewRetried = true;
        this.log?.info(`OAuth: ${attempt.failure.message}; asking again with the corrected clock`);
        continue;
      }
      if (retries >= maxRetries) {
        throw new OAuthTokenError(
          `gave up after ${attempts} attempt(s): ${attempt.failure.message}`,
          attempt.failure.details,
        );
      }
      const delay = attempt.kind === 'throttled' ? attempt.waitMs : backoffDelayMs(retries, retryBackoff);
      retries += 1;
      this.log?.info(`OAuth: ${attempt.failure.message}; asking again in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  private async requestToken(attempts: number): Promise<TokenAttempt> {
    const { tokenUrl } = this.oauth;
    const assertion = signClientAssertion({
      clientId: this.oauth.clientId,
      keyId: this.oauth.keyId,
      privateKey: this.oauth.privateKey,
      audience: this.oauth.authServer,
      serverNowMs: this.clock.wallMs() - this.skewMs,
    });
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: CLIENT_ASSERTION_TYPE,
      client_assertion: assertion,
      scope: this.oauth.scope,
    });
    const signal = AbortSignal.timeout(this.settings.timeout);
    let response: Response;
    let text: string;
    try {
      response = await fetch(tokenUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'user-agent': `tributary-analytics-client/${VERSION}`,
        },
        body: form.toString(),
        signal,
      });
      this.learnSkew(response.headers.get('date'));
      text = await response.text();
    } catch (error) {
      const what = signal.aborted
        ? `no answer from ${tokenUrl} within ${this.settings.timeout} ms`
        : `OAuth token request to ${tokenUrl} failed: ${describe(error)}`;
      return { kind: 'transient', failure: new OAuthTokenError(what, { attempts, cause: error }) };
    }
    const { status } = response;
    const body = readJson(text);
    if (status === 200) return this.readToken(body, text, attempts);
    const oauthError = typeof body?.error === 'string' ? body.error : undefined;
    const description = typeof body?.error_description === 'string' ? body.error_description : undefined;
    const explanation =
      oauthError !== undefined ? ` ${oauthError}${description ? ` (${description})` : ''}` : '';
    const failure = new OAuthTokenError(`OAuth token endpoint ${tokenUrl} answered ${status}${explanation}`, {
      attempts,
      status,
      oauthError,
      oauthErrorDescription: description,
      responseBody: text.slice(0, 1000),
    });
    if (status === 429) {
      const waitMs =
        parseRetryAfterMs(response.headers.get('retry-after'), this.settings.retryBackoff.maxRetryAfterMs) ??
        Math.min(DEFAULT_THROTTLE_WAIT_MS, this.settings.retryBackoff.maxRetryAfterMs);
      return { kind: 'throttled', failure, waitMs };
    }
    if (status >= 500) return { kind: 'transient', failure };
    if (
      status === 400 &&
      oauthError === 'invalid_request' &&
      CLOCK_SKEW_DESCRIPTIONS.has(description ?? '')
    ) {
      return { kind: 'skew', failure };
    }
    return { kind: 'refused', failure };
  }

  /** A 200 must carry a token and a numeric `expires_in` (docs/tracking-api.md §11.4); anything else is unusable. */
  private readToken(body: Record<string, unknown> | undefined, text: string, attempts: number): TokenAttempt {
    const accessToken = body?.access_token;
    const expiresIn = body?.expires_in;
    const tokenType = body?.token_type;
    let problem: string | undefined;
    if (typeof accessToken !== 'string' || accessToken === '') problem = 'has no access_token';
    else if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0)
      problem = 'has no positive numeric expires_in';
    else if (tokenType !== undefined && String(tokenType).toLowerCase() !== 'bearer')
      problem = `has token_type ${JSON.stringify(tokenType)}, not Bearer`;
    if (problem !== undefined) {
      return {
        kind: 'refused',
        failure: new OAuthTokenError(`the OAuth token response from ${this.oauth.tokenUrl} ${problem}`, {
          attempts,
          status: 200,
          responseBody: text.slice(0, 1000),
        }),
      };
    }
    return { kind: 'token', accessToken: accessToken as string, expiresInSeconds: expiresIn as number };
  }

  /**
   * The `Date` header has whole seconds, so the server's clock was somewhere in the following second:
   * its middle is the best guess.
   */
  private learnSkew(dateHeader: string | null): void {
    if (dateHeader === null) return;
    const serverMs = Date.parse(dateHeader);
    if (Number.isNaN(serverMs)) return;
    this.skewMs = this.clock.wallMs() - (serverMs + 500);
  }
}

function readJson(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
