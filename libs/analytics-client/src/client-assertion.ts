/**
 * The RS256 client-assertion JWT of the `client_credentials` grant (docs/tracking-api.md §11.3), signed with
 * `node:crypto` alone so that the package keeps no dependencies.
 */
import { createSign, randomUUID, type KeyObject } from 'node:crypto';

/** How long an assertion lives. The server accepts 60 s (docs/tracking-api.md §11.3). */
export const ASSERTION_LIFETIME_SECONDS = 60;
/**
 * `iat` is set this far in the past: the skew learned from a `Date` header is only accurate to the
 * second, and an `iat` a moment ahead of the server's clock is refused as "used before issued".
 */
export const ASSERTION_BACKDATE_SECONDS = 5;

export interface ClientAssertionInput {
  clientId: string;
  keyId: string;
  privateKey: KeyObject;
  /** The auth server's base URL: the `aud`. */
  audience: string;
  /** The server's idea of now, in epoch milliseconds (the local clock corrected by the learned skew). */
  serverNowMs: number;
  jti?: string;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

export function signClientAssertion(input: ClientAssertionInput): string {
  const issuedAt = Math.floor(input.serverNowMs / 1000) - ASSERTION_BACKDATE_SECONDS;
  const header = { alg: 'RS256', typ: 'JWT', kid: input.keyId };
  const claims = {
    iss: input.clientId,
    sub: input.clientId,
    aud: input.audience,
    iat: issuedAt,
    exp: issuedAt + ASSERTION_LIFETIME_SECONDS,
    jti: input.jti ?? randomUUID(),
  };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(input.privateKey);
  return `${signingInput}.${base64url(signature)}`;
}
