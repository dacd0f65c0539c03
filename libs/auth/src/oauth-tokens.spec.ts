import {
  assertionReplayRecord,
  issueAccessToken,
  MAX_ASSERTION_LIFETIME_SECONDS,
  MAX_JTI_LENGTH,
  OAuthRequestError,
  peekClientAssertion,
  readAccessToken,
  RegisteredClient,
  TRACKING_WRITE_SCOPE,
  verifyClientAssertion,
} from '@tributary/auth';
import { SignJWT, type JWTPayload } from 'jose';
import { generateKeyPairSync, KeyObject, randomBytes, randomUUID } from 'node:crypto';

// Client assertions as Segment's libraries build them (docs/tracking-api.md §11.3), checked at a fixed instant so
// every time-dependent case is exact.
const NOW = new Date('2026-03-01T12:00:00.000Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const AUTH_SERVER = 'https://tributary.example';
const CLIENT_ID = 'client-under-test';

function rsaKeyPair(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

const primary = rsaKeyPair();
const secondary = rsaKeyPair();
const stranger = rsaKeyPair();

const client: RegisteredClient = {
  clientId: CLIENT_ID,
  publicKeys: [
    { keyId: 'primary', pem: primary.publicPem },
    { keyId: 'secondary', pem: secondary.publicPem },
  ],
};

interface AssertionOptions {
  keyId?: string;
  signWith?: KeyObject | Uint8Array;
  alg?: string;
  claims?: JWTPayload;
  /** Claims to leave out of the defaults. */
  omit?: Array<keyof JWTPayload>;
}

/** Node 3.1's shape: iat 5 s in the past, exp 55 s ahead, iss = sub = client id, aud = auth server. */
async function assertion(options: AssertionOptions = {}): Promise<string> {
  const claims: JWTPayload = {
    iss: CLIENT_ID,
    sub: CLIENT_ID,
    aud: AUTH_SERVER,
    iat: NOW_SECONDS - 5,
    exp: NOW_SECONDS + 55,
    jti: randomUUID(),
    ...options.claims,
  };
  for (const name of options.omit ?? []) delete claims[name];
  return new SignJWT(claims)
    .setProtectedHeader({
      alg: options.alg ?? 'RS256',
      typ: 'JWT',
      ...(options.keyId !== '' && { kid: options.keyId ?? 'primary' }),
    })
    .sign(options.signWith ?? primary.privateKey);
}

async function refusal(promise: Promise<unknown>): Promise<OAuthRequestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof OAuthRequestError))
    throw new Error(`expected an OAuthRequestError, got ${String(error)}`);
  return error;
}

const verify = (jwt: string, audiences = [AUTH_SERVER]) => verifyClientAssertion(jwt, client, audiences, NOW);

describe('verifyClientAssertion (docs/tracking-api.md §11.3)', () => {
  it('accepts the assertion Node 3.1 sends and reports its client, jti and expiry', async () => {
    const jti = randomUUID();
    await expect(verify(await assertion({ claims: { jti } }))).resolves.toEqual({
      clientId: CLIENT_ID,
      jti,
      expiresAt: NOW_SECONDS + 55,
    });
  });

  it('verifies with whichever registered key the kid names', async () => {
    const verified = await verify(await assertion({ keyId: 'secondary', signWith: secondary.privateKey }));
    expect(verified.clientId).toBe(CLIENT_ID);
  });

  it('accepts fractional iat and exp, as Node derives its skew with sub-second precision', async () => {
    const verified = await verify(
      await assertion({ claims: { iat: NOW_SECONDS - 5.373, exp: NOW_SECONDS + 54.627 } }),
    );
    expect(verified.expiresAt).toBeCloseTo(NOW_SECONDS + 54.627, 6);
  });

  it('accepts a 60 s lifetime, which the docs call "under a minute" but the clients send', async () => {
    await expect(
      verify(await assertion({ claims: { iat: NOW_SECONDS, exp: NOW_SECONDS + 60 } })),
    ).resolves.toBeDefined();
  });

  it.each([
    ['the auth server exactly', AUTH_SERVER, AUTH_SERVER],
    ['the auth server with a trailing slash (Node keeps it)', `${AUTH_SERVER}/`, AUTH_SERVER],
    ['the auth server without the slash the endpoint was configured with', AUTH_SERVER, `${AUTH_SERVER}/`],
    ['an array holding the auth server', [`${AUTH_SERVER}/`, 'https://elsewhere.example'], AUTH_SERVER],
  ])('accepts aud = %s', async (_label, aud, accepted) => {
    await expect(verify(await assertion({ claims: { aud } }), [accepted])).resolves.toBeDefined();
  });

  it('accepts any of several configured audiences', async () => {
    const jwt = await assertion({ claims: { aud: 'https://oauth2.segment.io' } });
    await expect(verify(jwt, [AUTH_SERVER, 'https://oauth2.segment.io/'])).resolves.toBeDefined();
  });

  it.each([
    ['the client id', { iss: CLIENT_ID }],
    ['the auth-server URL', { iss: AUTH_SERVER }],
  ])('accepts iss = %s', async (_label, claims) => {
    await expect(verify(await assertion({ claims }))).resolves.toBeDefined();
  });

  it('accepts an assertion without iss', async () => {
    await expect(verify(await assertion({ omit: ['iss'] }))).resolves.toBeDefined();
  });

  it('refuses an expired assertion with 400 invalid_request "Token is expired", the text Python retries on', async () => {
    const error = await refusal(
      verify(await assertion({ claims: { iat: NOW_SECONDS - 120, exp: NOW_SECONDS - 60 } })),
    );
    expect({ status: error.status, error: error.error, description: error.description }).toEqual({
      status: 400,
      error: 'invalid_request',
      description: 'Token is expired',
    });
  });

  it('tolerates an exp a few seconds past, within the clock leeway', async () => {
    await expect(
      verify(await assertion({ claims: { iat: NOW_SECONDS - 62, exp: NOW_SECONDS - 2 } })),
    ).resolves.toBeDefined();
  });

  it('refuses an iat in the future with 400 invalid_request "Token used before issued"', async () => {
    const error = await refusal(
      verify(await assertion({ claims: { iat: NOW_SECONDS + 30, exp: NOW_SECONDS + 90 } })),
    );
    expect({ status: error.status, error: error.error, description: error.description }).toEqual({
      status: 400,
      error: 'invalid_request',
      description: 'Token used before issued',
    });
  });

  it('tolerates an iat a few seconds ahead, within the clock leeway', async () => {
    await expect(verify(await assertion({ claims: { iat: NOW_SECONDS + 2 } }))).resolves.toBeDefined();
  });

  it.each<[string, () => Promise<string>]>([
    ['an unknown kid', () => assertion({ keyId: 'retired' })],
    ['no kid at all', () => assertion({ keyId: '' })],
    ['a signature by a key that is not registered', () => assertion({ signWith: stranger.privateKey })],
    [
      'a signature by the other registered key than the kid names',
      () => assertion({ keyId: 'primary', signWith: secondary.privateKey }),
    ],
    ['a sub other than the client id', () => assertion({ claims: { sub: 'someone-else' } })],
    ['no sub', () => assertion({ omit: ['sub'] })],
    ['an aud of another server', () => assertion({ claims: { aud: 'https://oauth2.segment.io' } })],
    ['no aud', () => assertion({ omit: ['aud'] })],
    [
      'HS256 signed with a public key as the secret',
      () => assertion({ alg: 'HS256', signWith: Buffer.from(primary.publicPem) }),
    ],
    ['RS512 instead of RS256', () => assertion({ alg: 'RS512' })],
  ])('refuses %s with 401 invalid_client', async (_label, build) => {
    const error = await refusal(verify(await build()));
    expect({ status: error.status, error: error.error }).toEqual({ status: 401, error: 'invalid_client' });
    expect(error.description.length).toBeGreaterThan(0);
  });

  it('refuses a tampered payload with 401 invalid_client', async () => {
    const [header, , signature] = (await assertion()).split('.');
    const forgedClaims = {
      sub: CLIENT_ID,
      aud: AUTH_SERVER,
      iat: NOW_SECONDS,
      exp: NOW_SECONDS + 300,
      jti: randomUUID(),
    };
    const forged = `${header}.${Buffer.from(JSON.stringify(forgedClaims)).toString('base64url')}.${signature}`;
    const error = await refusal(verify(forged));
    expect({ status: error.status, error: error.error }).toEqual({ status: 401, error: 'invalid_client' });
  });

  it.each<[string, AssertionOptions]>([
    ['no exp', { omit: ['exp'] }],
    ['no jti', { omit: ['jti'] }],
    ['an empty jti', { claims: { jti: '' } }],
    ['no iat', { omit: ['iat'] }],
    ['a string iat', { claims: { iat: String(NOW_SECONDS) as unknown as number } }],
    ['a lifetime of 301 s (exp - iat)', { claims: { iat: NOW_SECONDS - 1, exp: NOW_SECONDS + 300 } }],
    ['a lifetime of an hour', { claims: { iat: NOW_SECONDS, exp: NOW_SECONDS + 3600 } }],
    ['a jti of 257 characters', { claims: { jti: 'j'.repeat(MAX_JTI_LENGTH + 1) } }],
    ['a jti of a megabyte', { claims: { jti: 'j'.repeat(1024 * 1024) } }],
  ])('refuses an assertion with %s as 400 invalid_request', async (_label, options) => {
    const error = await refusal(verify(await assertion(options)));
    expect({ status: error.status, error: error.error }).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('accepts a lifetime of exactly 300 s and a jti of exactly 256 characters', async () => {
    expect(MAX_ASSERTION_LIFETIME_SECONDS).toBe(300);
    const jti = 'j'.repeat(MAX_JTI_LENGTH);
    await expect(
      verify(await assertion({ claims: { iat: NOW_SECONDS - 10, exp: NOW_SECONDS + 290, jti } })),
    ).resolves.toMatchObject({ jti });
  });

  it('names the rule a too-long assertion breaks', async () => {
    const error = await refusal(
      verify(await assertion({ claims: { iat: NOW_SECONDS, exp: NOW_SECONDS + 301 } })),
    );
    expect(error.description).toMatch(/exp - iat must be at most 300 s/);
  });

  it.each(['', 'not-a-jwt', 'a.b.c', 'eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.sig'])(
    'refuses %j, which is not a JWT, as 400 invalid_request',
    async (garbage) => {
      const error = await refusal(verify(garbage));
      expect({ status: error.status, error: error.error }).toEqual({ status: 400, error: 'invalid_request' });
    },
  );
});

describe('peekClientAssertion', () => {
  it('reads kid and sub without checking the signature, to find the client and its key', async () => {
    expect(
      peekClientAssertion(await assertion({ keyId: 'secondary', signWith: stranger.privateKey })),
    ).toEqual({
      keyId: 'secondary',
      subject: CLIENT_ID,
    });
  });

  it('reports a non-string sub as absent', async () => {
    const jwt = await new SignJWT({ sub: 42 } as unknown as JWTPayload)
      .setProtectedHeader({ alg: 'RS256', kid: 'primary' })
      .sign(primary.privateKey);
    expect(peekClientAssertion(jwt)).toEqual({ keyId: 'primary', subject: undefined });
  });

  it('refuses what is not a JWT with 400 invalid_request', () => {
    expect(() => peekClientAssertion('nope')).toThrow(OAuthRequestError);
    try {
      peekClientAssertion('nope');
    } catch (error) {
      expect((error as OAuthRequestError).status).toBe(400);
      expect((error as OAuthRequestError).error).toBe('invalid_request');
    }
  });
});

describe('assertionReplayRecord', () => {
  const verified = { clientId: CLIENT_ID, jti: 'jti-1', expiresAt: NOW_SECONDS + 55 };

  it('keys a jti by a fixed-size hash of client and jti, whatever the jti', () => {
    const { key } = assertionReplayRecord(verified, NOW);
    expect(key).toMatch(/^jti_[0-9a-f]{64}$/);
    expect(assertionReplayRecord({ ...verified, jti: 'j'.repeat(MAX_JTI_LENGTH) }, NOW).key).toHaveLength(
      key.length,
    );
    expect(assertionReplayRecord(verified, NOW).key).toBe(key);
  });

  it('keeps the jti of different clients apart, and cannot be confused by a shifted separator', () => {
    const { key } = assertionReplayRecord(verified, NOW);
    expect(assertionReplayRecord({ ...verified, clientId: 'other-client' }, NOW).key).not.toBe(key);
    expect(assertionReplayRecord({ ...verified, clientId: 'ab', jti: 'c' }, NOW).key).not.toBe(
      assertionReplayRecord({ ...verified, clientId: 'a', jti: 'bc' }, NOW).key,
    );
  });

  it('keeps the jti until the assertion expires for good: exp plus the clock leeway', () => {
    expect(assertionReplayRecord(verified, NOW).ttlMs).toBe(60_000);
    expect(assertionReplayRecord({ ...verified, expiresAt: NOW_SECONDS + 54.5 }, NOW).ttlMs).toBe(59_500);
    // An assertion accepted within the leeway after its exp is still kept a moment.
    expect(assertionReplayRecord({ ...verified, expiresAt: NOW_SECONDS - 5 }, NOW).ttlMs).toBe(1);
  });
});

describe('access tokens', () => {
  const signingKey = new Uint8Array(randomBytes(32));
  const claims = {
    workspaceSlug: 'acme',
    applicationId: 'oa_1',
    clientId: CLIENT_ID,
    scope: TRACKING_WRITE_SCOPE,
  };

  it('round-trips the claims of a token within its lifetime', async () => {
    const token = await issueAccessToken(claims, 3600, signingKey, NOW);
    expect(token.split('.')).toHaveLength(3);
    await expect(readAccessToken(token, signingKey, NOW)).resolves.toEqual(claims);
    await expect(readAccessToken(token, signingKey, new Date(NOW.getTime() + 3_599_000))).resolves.toEqual(
      claims,
    );
  });

  it('gives each token its own jti, so two issued in the same second differ', async () => {
    const first = await issueAccessToken(claims, 3600, signingKey, NOW);
    const second = await issueAccessToken(claims, 3600, signingKey, NOW);
    expect(first).not.toBe(second);
  });

  it('reads nothing from an expired token', async () => {
    const token = await issueAccessToken(claims, 60, signingKey, NOW);
    await expect(
      readAccessToken(token, signingKey, new Date(NOW.getTime() + 61_000)),
    ).resolves.toBeUndefined();
  });

  it('reads nothing from a token signed with another deployment key', async () => {
    const token = await issueAccessToken(claims, 3600, new Uint8Array(randomBytes(32)), NOW);
    await expect(readAccessToken(token, signingKey, NOW)).resolves.toBeUndefined();
  });

  it('reads nothing from a token whose claims were altered', async () => {
    const [header, payload, signature] = (await issueAccessToken(claims, 3600, signingKey, NOW)).split('.');
    const altered = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), ws: 'another-workspace' };
    const forged = `${header}.${Buffer.from(JSON.stringify(altered)).toString('base64url')}.${signature}`;
    await expect(readAccessToken(forged, signingKey, NOW)).resolves.toBeUndefined();
  });

  it('reads nothing from a client assertion or other JWT presented as an access token', async () => {
    await expect(readAccessToken(await assertion(), signingKey, NOW)).resolves.toBeUndefined();
    const wrongIssuer = await new SignJWT({ ws: 'acme', app: 'oa_1', scope: TRACKING_WRITE_SCOPE })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('someone-else')
      .setSubject(CLIENT_ID)
      .setExpirationTime(NOW_SECONDS + 3600)
      .sign(signingKey);
    await expect(readAccessToken(wrongIssuer, signingKey, NOW)).resolves.toBeUndefined();
    const missingApplication = await new SignJWT({ ws: 'acme', scope: TRACKING_WRITE_SCOPE })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('tributary')
      .setSubject(CLIENT_ID)
      .setExpirationTime(NOW_SECONDS + 3600)
      .sign(signingKey);
    await expect(readAccessToken(missingApplication, signingKey, NOW)).resolves.toBeUndefined();
  });

  it('reads nothing from garbage', async () => {
    await expect(readAccessToken('garbage', signingKey, NOW)).resolves.toBeUndefined();
    await expect(readAccessToken('', signingKey, NOW)).resolves.toBeUndefined();
  });

  it('reports a token without scope as having the empty scope', async () => {
    const unscoped = await new SignJWT({ ws: 'acme', app: 'oa_1' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('tributary')
      .setSubject(CLIENT_ID)
      .setExpirationTime(NOW_SECONDS + 3600)
      .sign(signingKey);
    await expect(readAccessToken(unscoped, signingKey, NOW)).resolves.toEqual({ ...claims, scope: '' });
  });
});
