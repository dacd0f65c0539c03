import { decodeJwt, decodeProtectedHeader, errors as joseErrors, importSPKI, jwtVerify, SignJWT } from 'jose';
import { createHash, randomUUID } from 'node:crypto';

export const TRACKING_WRITE_SCOPE = 'tracking_api:write';
/** The purpose of the key, derived from the deployment key, that signs access tokens. */
export const ACCESS_TOKEN_KEY_PURPOSE = 'oauth-access-token';
const ACCESS_TOKEN_ISSUER = 'tributary';
/** Clock leeway for client assertions: clients derive their skew from our Date header, to the second. */
const CLOCK_LEEWAY_SECONDS = 5;
/**
 * The longest an assertion may live (`exp − iat`). Segment's clients sign theirs for 60 s; a longer
 * one would keep its `jti` in the replay store for as long, and let a leaked assertion be used late.
 */
export const MAX_ASSERTION_LIFETIME_SECONDS = 300;
/** A `jti` longer than this is refused: an id, not a payload. */
export const MAX_JTI_LENGTH = 256;

/** Why a token request is refused, in RFC 6749's terms (docs/tracking-api.md §11.5). */
export class OAuthRequestError extends Error {
  constructor(
    readonly status: 400 | 401 | 415 | 429 | 503,
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'slow_down'
      | 'temporarily_unavailable',
    readonly description: string,
  ) {
    super(description);
    this.name = 'OAuthRequestError';
  }
}

export interface RegisteredClient {
  clientId: string;
  publicKeys: { keyId: string; pem: string }[];
}

export interface VerifiedAssertion {
  clientId: string;
  jti: string;
  /** Seconds since the epoch; a replayed `jti` is refused until then. */
  expiresAt: number;
}

/** What a client assertion says before its signature is checked: to find the client and its key. */
export function peekClientAssertion(assertion: string): { keyId?: string; subject?: string } {
  try {
    const header = decodeProtectedHeader(assertion);
    const claims = decodeJwt(assertion);
    return { keyId: header.kid, subject: typeof claims.sub === 'string' ? claims.sub : undefined };
  } catch {
    throw new OAuthRequestError(400, 'invalid_request', 'client_assertion is not a JWT');
  }
}

/**
 * Checks a `client_credentials` client assertion as Segment's clients send it (docs/tracking-api.md §11.3): RS256
 * with a registered `kid`, `sub` = the client id, `aud` the token endpoint with or without a
 * trailing slash, fractional `iat`/`exp` accepted, `iss` optional.
 */
export async function verifyClientAssertion(
  assertion: string,
  client: RegisteredClient,
  acceptedAudiences: string[],
  now: Date = new Date(),
): Promise<VerifiedAssertion> {
  const { keyId } = peekClientAssertion(assertion);
  const key = client.publicKeys.find((candidate) => candidate.keyId === keyId);
  if (!key)
    throw new OAuthRequestError(401, 'invalid_client', `unknown key id ${JSON.stringify(keyId ?? null)}`);
  const claims = decodeJwt(assertion);
  const nowSeconds = now.getTime() / 1000;
  if (typeof claims.exp !== 'number')
    throw new OAuthRequestError(400, 'invalid_request', 'client_assertion has no exp');
  if (claims.exp <= nowSeconds - CLOCK_LEEWAY_SECONDS)
    throw new OAuthRequestError(400, 'invalid_request', 'Token is expired');
  if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat))
    throw new OAuthRequestError(400, 'invalid_request', 'client_assertion has no iat');
  if (claims.iat > nowSeconds + CLOCK_LEEWAY_SECONDS) {
    throw new OAuthRequestError(400, 'invalid_request', 'Token used before issued');
  }
  if (claims.exp - claims.iat > MAX_ASSERTION_LIFETIME_SECONDS) {
    throw new OAuthRequestError(
      400,
      'invalid_request',
      `client_assertion lives too long: exp - iat must be at most ${MAX_ASSERTION_LIFETIME_SECONDS} s`,
    );
  }
  if (typeof claims.jti !== 'string' || !claims.jti) {
    throw new OAuthRequestError(400, 'invalid_request', 'client_assertion needs a jti');
  }
  if (claims.jti.length > MAX_JTI_LENGTH) {
    throw new OAuthRequestError(
      400,
      'invalid_request',
      `client_assertion jti must be at most ${MAX_JTI_LENGTH} characters`,
    );
  }
  const audiences = acceptedAudiences.flatMap((audience) => {
    const bare = audience.replace(/(?<!\/)\/+$/, '');
    return [bare, `${bare}/`];
  });
  try {
    await jwtVerify(assertion, await importSPKI(key.pem, 'RS256'), {
      algorithms: ['RS256'],
      audience: audiences,
      subject: client.clientId,
      currentDate: now,
      clockTolerance: CLOCK_LEEWAY_SECONDS,
    });
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired)
      throw new OAuthRequestError(400, 'invalid_request', 'Token is expired');
    if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud') {
      throw new OAuthRequestError(
        401,
        'invalid_client',
        `client_assertion aud must be one of ${audiences.join(', ')}`,
      );
    }
    throw new OAuthRequestError(
      401,
      'invalid_client',
      `client_assertion rejected: ${(error as Error).message}`,
    );
  }
  return { clientId: client.clientId, jti: claims.jti, expiresAt: claims.exp };
}

/**
 * What the replay store keeps of a verified assertion, so no `jti` is used twice: a fixed-size key
 * (a hash of client id and jti: a tenant's jti never sets its size) and how long to keep it, until
 * the assertion has expired for good (its `exp` plus the clock leeway), at most a few minutes.
 */
export function assertionReplayRecord(
  assertion: VerifiedAssertion,
  now: Date = new Date(),
): { key: string; ttlMs: number } {
  const key = createHash('sha256')
    .update(assertion.clientId)
    .update('\0')
    .update(assertion.jti)
    .digest('hex');
  const ttlMs = Math.ceil((assertion.expiresAt + CLOCK_LEEWAY_SECONDS) * 1000 - now.getTime());
  return { key: `jti_${key}`, ttlMs: Math.max(1, ttlMs) };
}

export interface AccessTokenClaims {
  workspaceSlug: string;
  applicationId: string;
  clientId: string;
  scope: string;
}

/**
 * Access tokens are JWTs signed with a key derived from the deployment key (HS256): any tracking
 * API process of the deployment can check one without shared state, and restarts keep them valid.
 */
export async function issueAccessToken(
  claims: AccessTokenClaims,
  lifetimeSeconds: number,
  signingKey: Uint8Array,
  now: Date = new Date(),
): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1000);
  return new SignJWT({ ws: claims.workspaceSlug, app: claims.applicationId, scope: claims.scope })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ACCESS_TOKEN_ISSUER)
    .setSubject(claims.clientId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + lifetimeSeconds)
    .setJti(randomUUID())
    .sign(signingKey);
}

/** The claims of a valid, unexpired access token, or undefined. */
export async function readAccessToken(
  token: string,
  signingKey: Uint8Array,
  now: Date = new Date(),
): Promise<AccessTokenClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, signingKey, {
      algorithms: ['HS256'],
      issuer: ACCESS_TOKEN_ISSUER,
      currentDate: now,
    });
    if (typeof payload.ws !== 'string' || typeof payload.app !== 'string' || typeof payload.sub !== 'string')
      return undefined;
    return {
      workspaceSlug: payload.ws,
      applicationId: payload.app,
      clientId: payload.sub,
      scope: typeof payload.scope === 'string' ? payload.scope : '',
    };
  } catch {
    return undefined;
  }
}
