import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { createVerify, generateKeyPairSync } from 'node:crypto';
import {
  ASSERTION_BACKDATE_SECONDS,
  ASSERTION_LIFETIME_SECONDS,
  signClientAssertion,
} from './client-assertion';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();

describe('signClientAssertion', () => {
  const serverNowMs = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const assertion = signClientAssertion({
    clientId: 'client-1',
    keyId: 'key-1',
    privateKey,
    audience: 'https://auth.example',
    serverNowMs,
  });

  it('is an RS256 JWT whose signature the public key verifies (node:crypto and jose agree)', async () => {
    const [header, claims, signature] = assertion.split('.');
    expect(
      createVerify('RSA-SHA256')
        .update(`${header}.${claims}`)
        .verify(publicKey, Buffer.from(signature, 'base64url')),
    ).toBe(true);
    // jose is what the server verifies with; the claims are checked at the assertion's own time.
    const { payload, protectedHeader } = await jwtVerify(assertion, await importSPKI(publicPem, 'RS256'), {
      algorithms: ['RS256'],
      audience: 'https://auth.example',
      subject: 'client-1',
      currentDate: new Date(serverNowMs),
    });
    expect(protectedHeader).toEqual({ alg: 'RS256', typ: 'JWT', kid: 'key-1' });
    const issuedAt = Math.floor(serverNowMs / 1000) - ASSERTION_BACKDATE_SECONDS;
    expect(payload).toEqual({
      iss: 'client-1',
      sub: 'client-1',
      aud: 'https://auth.example',
      iat: issuedAt,
      exp: issuedAt + ASSERTION_LIFETIME_SECONDS,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('uses base64url without padding, and a new jti every time', () => {
    expect(assertion).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const again = signClientAssertion({
      clientId: 'client-1',
      keyId: 'key-1',
      privateKey,
      audience: 'https://auth.example',
      serverNowMs,
    });
    const jtiOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()).jti;
    expect(jtiOf(again)).not.toBe(jtiOf(assertion));
    expect(decodeProtectedHeader(again).kid).toBe('key-1');
  });

  it('is refused by a different key', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    const [header, claims, signature] = assertion.split('.');
    expect(
      createVerify('RSA-SHA256')
        .update(`${header}.${claims}`)
        .verify(other, Buffer.from(signature, 'base64url')),
    ).toBe(false);
  });
});
