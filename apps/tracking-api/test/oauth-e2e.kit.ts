// Shared set-up for the OAuth suites: RSA key pairs, OAuth applications made through the Config API,
// client assertions signed as Segment's clients sign them (docs/tracking-api.md §11.3), and raw calls to POST /token.
import { workspaceName } from '@tributary/contracts';
import { SignJWT, type JWTPayload } from 'jose';
import { generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { ConfigApiClient, type ConfigApiResponse } from '../../../test/support/config-api.client';
import type { TributaryTestInstance } from '../../../test/support/tributary-test-instance';

export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
export const TRACKING_SCOPE = 'tracking_api:write';

export interface RsaKeyPair {
  keyId: string;
  privateKey: KeyObject;
  /** SPKI PEM, what the Config API registers. */
  publicPem: string;
  /** PKCS8 PEM, what analytics-node takes as `clientKey`. */
  privatePem: string;
}

export function rsaKeyPair(keyId = `key-${randomUUID()}`): RsaKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    keyId,
    privateKey,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

export interface TestOAuthApplication {
  workspaceSlug: string;
  applicationId: string;
  clientId: string;
  key: RsaKeyPair;
}

/** Creates an OAuth application holding the given keys (the first is the one tests sign with). */
export async function createOAuthApplication(
  t: TributaryTestInstance,
  workspaceSlug: string,
  keys: RsaKeyPair[] = [rsaKeyPair()],
  tokenLifetimeSeconds = 3600,
): Promise<TestOAuthApplication> {
  const response = await new ConfigApiClient(t).request(
    'POST',
    `${workspaceName(workspaceSlug)}/oauth-applications`,
    {
      json: {
        oauth_application: {
          display_name: `OAuth app of ${workspaceSlug}`,
          public_keys: keys.map((key) => ({ key_id: key.keyId, pem: key.publicPem })),
          token_lifetime_seconds: tokenLifetimeSeconds,
        },
      },
    },
  );
  if (response.status !== 200)
    throw new Error(`creating an OAuth application: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    workspaceSlug,
    applicationId: response.body.name.split('/').pop(),
    clientId: response.body.client_id,
    key: keys[0],
  };
}

export function setOAuthRequired(
  t: TributaryTestInstance,
  workspaceSlug: string,
  required: boolean,
): Promise<ConfigApiResponse> {
  return new ConfigApiClient(t).request('PATCH', workspaceName(workspaceSlug), {
    json: {
      workspace: { oauth_required: required },
      update_mask: { paths: ['workspace.oauth_required'] },
    },
  });
}

export interface AssertionOptions {
  clientId: string;
  key: Pick<RsaKeyPair, 'keyId' | 'privateKey'>;
  aud: string;
  /** Claims replacing the defaults; a claim set to undefined is left out. */
  claims?: Record<string, unknown>;
}

/** The assertion analytics-node 3.1 builds: iat 5 s ago, exp 55 s ahead, iss = sub = client id. */
export function signAssertion(options: AssertionOptions): Promise<string> {
  const nowSeconds = Date.now() / 1000;
  const claims: Record<string, unknown> = {
    iss: options.clientId,
    sub: options.clientId,
    aud: options.aud,
    iat: Math.round(nowSeconds - 5),
    exp: Math.round(nowSeconds + 55),
    jti: randomUUID(),
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: options.key.keyId })
    .sign(options.key.privateKey);
}

export function tokenForm(assertion: string, overrides: Record<string, string | undefined> = {}): string {
  const fields: Record<string, string | undefined> = {
    grant_type: 'client_credentials',
    client_assertion_type: CLIENT_ASSERTION_TYPE,
    client_assertion: assertion,
    scope: TRACKING_SCOPE,
    ...overrides,
  };
  // Like the clients: values joined without percent-encoding, so the colons stay literal (docs/tracking-api.md §11.2).
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

export interface TokenResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export async function postToken(
  t: Pick<TributaryTestInstance, 'baseUrl'>,
  form: string,
  options: { path?: string; contentType?: string | null } = {},
): Promise<TokenResponse> {
  const contentType =
    options.contentType === undefined ? 'application/x-www-form-urlencoded' : options.contentType;
  const response = await fetch(`${t.baseUrl}${options.path ?? '/token'}`, {
    method: 'POST',
    headers: contentType === null ? {} : { 'content-type': contentType },
    body: form,
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** A fresh access token for the application, or a thrown error saying why not. */
export async function accessTokenFor(
  t: TributaryTestInstance,
  application: TestOAuthApplication,
): Promise<string> {
  const assertion = await signAssertion({
    clientId: application.clientId,
    key: application.key,
    aud: t.baseUrl,
  });
  const response = await postToken(t, tokenForm(assertion));
  if (response.status !== 200) throw new Error(`token request: ${response.status} ${response.text}`);
  return response.body.access_token;
}
