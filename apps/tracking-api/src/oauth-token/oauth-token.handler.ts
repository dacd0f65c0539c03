import { Inject, Injectable } from '@nestjs/common';
import {
  ACCESS_TOKEN_KEY_PURPOSE,
  assertionReplayRecord,
  issueAccessToken,
  OAuthRequestError,
  peekClientAssertion,
  SecretBox,
  TRACKING_WRITE_SCOPE,
  verifyClientAssertion,
  type VerifiedAssertion,
} from '@tributary/auth';
import { ConfigReadModel } from '@tributary/config-projections';
import { EventLogUnavailableError, SEEN_ONCE, type SeenOnce } from '@tributary/event-log';
import { addressRateKey, Environment, ENVIRONMENT, RateLimiter } from '@tributary/platform';

/** Token requests per second per OAuth client, counted once its assertion is verified, before its jti is stored. */
export const TOKEN_RATE_LIMITER = Symbol('TokenRateLimiter');
/**
 * Assertions accepted per workspace while their replay records may still hold a place in the shared
 * store (`OAUTH_ASSERTIONS_PER_WORKSPACE`): one tenant's many clients together cannot fill the store
 * and so refuse every other workspace's clients.
 */
export const TOKEN_WORKSPACE_RATE_LIMITER = Symbol('TokenWorkspaceRateLimiter');
/** Token requests per second per caller address, counted before anything is verified. */
export const TOKEN_ADDRESS_RATE_LIMITER = Symbol('TokenAddressRateLimiter');

const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

export interface TokenRequest {
  contentType?: string;
  body: unknown;
  /** The token endpoint's base URL as the client reached it: the expected `aud` unless `PUBLIC_BASE_URL` is set. */
  endpointBaseUrl: string;
  callerAddress: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** Seconds a client is asked to wait when the replay store cannot take its assertion. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * `POST /token`: the OAuth 2.0 `client_credentials` grant with a signed JWT client assertion, as
 * Segment's libraries request it (docs/tracking-api.md §11). The access token then authorizes tracking requests
 * for the sources of the application's workspace.
 *
 * Each assertion's `jti` is used once: the replay record lives in the event log (`markSeenOnce`),
 * which every tracking API process of the deployment shares and which outlives a restart.
 */
@Injectable()
export class OAuthTokenHandler {
  private readonly signingKey: Uint8Array;
  private readonly acceptedAudiences: string[];

  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(SEEN_ONCE) private readonly seenOnce: SeenOnce,
    @Inject(TOKEN_RATE_LIMITER) private readonly clientRateLimiter: RateLimiter,
    @Inject(TOKEN_ADDRESS_RATE_LIMITER) private readonly addressRateLimiter: RateLimiter,
    @Inject(TOKEN_WORKSPACE_RATE_LIMITER) private readonly workspaceRateLimiter: RateLimiter,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
    secretBox: SecretBox,
  ) {
    this.signingKey = secretBox.deriveKey(ACCESS_TOKEN_KEY_PURPOSE);
    const configured = (environment.OAUTH_AUDIENCES ?? '').split(',').map((url) => url.trim());
    this.acceptedAudiences = [environment.PUBLIC_BASE_URL, ...configured].filter((url): url is string =>
      Boolean(url),
    );
  }

  async issue(request: TokenRequest): Promise<TokenResponse> {
    if (!/^application\/x-www-form-urlencoded\b/i.test(request.contentType ?? '')) {
      throw new OAuthRequestError(
        415,
        'invalid_request',
        'send the request as application/x-www-form-urlencoded',
      );
    }
    const form = new URLSearchParams(Buffer.isBuffer(request.body) ? request.body.toString('utf8') : '');
    const grantType = form.get('grant_type');
    if (!grantType) throw new OAuthRequestError(400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') {
      throw new OAuthRequestError(400, 'unsupported_grant_type', 'only client_credentials is supported');
    }
    if (form.get('client_assertion_type') !== CLIENT_ASSERTION_TYPE) {
      throw new OAuthRequestError(
        400,
        'invalid_request',
        `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`,
      );
    }
    const assertion = form.get('client_assertion');
    if (!assertion) throw new OAuthRequestError(400, 'invalid_request', 'client_assertion is required');
    const scope = form.get('scope') || TRACKING_WRITE_SCOPE;
    if (scope.split(/\s+/).some((requested) => requested !== TRACKING_WRITE_SCOPE)) {
      throw new OAuthRequestError(400, 'invalid_scope', `the only scope is ${TRACKING_WRITE_SCOPE}`);
    }

    // Before any signature is checked, only the caller's address is known: a flood of junk
    // assertions is throttled there, and cannot throttle a real client whose id it names.
    this.throttle(this.addressRateLimiter, `address:${addressRateKey(request.callerAddress)}`);
    const { subject } = peekClientAssertion(assertion);
    const application = subject ? this.readModel.oauthApplicationByClientId(subject) : undefined;
    if (!application)
      throw new OAuthRequestError(401, 'invalid_client', 'unknown client: sub must be a client id');
    // Behind a proxy the Host header is the caller's to choose: with PUBLIC_BASE_URL set, only the
    // operator's URLs are audiences.
    const audiences = this.environment.PUBLIC_BASE_URL
      ? this.acceptedAudiences
      : [request.endpointBaseUrl, ...this.acceptedAudiences];
    const verified = await verifyClientAssertion(assertion, application, audiences);
    // Counted before its jti is stored: a client's flood of fresh assertions is stopped by its rate,
    // and cannot fill the shared replay store beyond what that rate lets through.
    this.throttle(this.clientRateLimiter, `client:${application.clientId}`);
    this.throttle(this.workspaceRateLimiter, `workspace:${application.workspaceSlug}`);
    await this.useOnce(verified);
    const accessToken = await issueAccessToken(
      {
        workspaceSlug: application.workspaceSlug,
        applicationId: application.applicationId,
        clientId: application.clientId,
        scope,
      },
      application.tokenLifetimeSeconds,
      this.signingKey,
    );
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: application.tokenLifetimeSeconds,
      scope,
    };
  }

  private async useOnce(verified: VerifiedAssertion): Promise<void> {
    const { key, ttlMs } = assertionReplayRecord(verified);
    let firstUse: boolean;
    try {
      firstUse = await this.seenOnce.markSeenOnce(key, ttlMs);
    } catch (error) {
      if (!(error instanceof EventLogUnavailableError)) throw error;
      throw Object.assign(
        new OAuthRequestError(503, 'temporarily_unavailable', 'cannot record the assertion now; retry later'),
        { retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS },
      );
    }
    if (!firstUse)
      throw new OAuthRequestError(401, 'invalid_client', 'client_assertion jti was already used');
  }

  private throttle(limiter: RateLimiter, key: string): void {
    const limit = limiter.take(key);
    if (!limit.allowed) {
      throw Object.assign(new OAuthRequestError(429, 'slow_down', 'too many token requests'), {
        retryAfterSeconds: limit.retryAfterSeconds,
      });
    }
  }
}
