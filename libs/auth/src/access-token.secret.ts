import { createHash, randomBytes } from 'node:crypto';

/** 43 base64url characters, a dot, 43 more: the shape of Segment's personal access tokens. */
export function generateAccessTokenSecret(): string {
  return `${randomBytes(32).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
}

/**
 * Tokens carry 512 random bits, so a fast hash is enough: there is nothing to brute-force.
 * Only this hash is stored; the plaintext is shown once at creation.
 */
export function hashAccessToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
