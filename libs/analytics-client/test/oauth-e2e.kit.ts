// OAuth set-up for the client's end-to-end suites: a workspace that requires OAuth, an OAuth application
// registered through the real Config API, and a small fake token endpoint for the situations the real
// server will not produce on demand (clock skew, 5xx, 429, malformed answers).
import { workspaceName } from '@tributary/contracts';
import { createPublicKey, createVerify, generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createSource,
  createWorkspace,
  type ApiEndpoint,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';

export interface ClientKeyPair {
  /** PKCS #8 PEM: what the client is given. */
  privatePem: string;
  /** SPKI PEM: what the OAuth application registers. */
  publicPem: string;
}

export function generateClientKey(): ClientKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export interface OAuthTestSetup {
  source: TestSource;
  clientId: string;
  keyId: string;
  key: ClientKeyPair;
  /** The application's id (last segment of its name), for updates and deletion. */
  applicationId: string;
}

/** A workspace with `oauth_required` (so only OAuth can succeed), a source, and an OAuth application. */
export async function createOAuthWorkspace(
  t: ApiEndpoint,
  options: { tokenLifetimeSeconds?: number; oauthRequired?: boolean } = {},
): Promise<OAuthTestSetup> {
  const workspace = await createWorkspace(t);
  const source = await createSource(t, workspace);
  if (options.oauthRequired ?? true) {
    const patched = await configApi(t, 'PATCH', workspaceName(workspace.slug), {
      workspace: { oauth_required: true },
      update_mask: { paths: ['workspace.oauth_required'] },
    });
    if (patched.status !== 200 || patched.body.oauth_required !== true) {
      throw new Error(`requiring OAuth: ${patched.status} ${JSON.stringify(patched.body)}`);
    }
  }
  const key = generateClientKey();
  const keyId = 'key-1';
  const created = await configApi(t, 'POST', `${workspaceName(workspace.slug)}/oauth-applications`, {
    oauth_application: {
      display_name: 'client e2e',
      public_keys: [{ key_id: keyId, pem: key.publicPem }],
      ...(options.tokenLifetimeSeconds !== undefined && {
        token_lifetime_seconds: options.tokenLifetimeSeconds,
      }),
    },
  });
  if (created.status !== 200) {
    throw new Error(`creating the OAuth application: ${created.status} ${JSON.stringify(created.body)}`);
  }
  return {
    source,
    clientId: created.body.client_id,
    keyId,
    key,
    applicationId: String(created.body.name).split('/').pop()!,
  };
}

export interface FakeTokenRequest {
  index: number;
  url: string;
  contentType?: string;
  form: URLSearchParams;
  assertionHeader: Record<string, unknown>;
  assertionClaims: Record<string, any>;
  /** The assertion's signature checks out against the registered public key. */
  signatureValid: boolean;
  /** The fake server's clock (its own time plus the configured skew), epoch ms, when the request came. */
  serverNowMs: number;
  receivedAt: number;
}

export interface FakeTokenAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeTokenEndpoint {
  url: string;
  requests: FakeTokenRequest[];
  close(): Promise<void>;
}

/**
 * A token endpoint whose clock runs `skewMs` ahead of the local one: its `Date` header says so, as a real
 * server with a different clock would. `answer` decides each reply; the `Date` header is added unless the
 * answer sets one.
 */
export async function startFakeTokenEndpoint(
  publicPem: string,
  answer: (request: FakeTokenRequest) => FakeTokenAnswer,
  options: { skewMs?: number } = {},
): Promise<FakeTokenEndpoint> {
  const publicKey = createPublicKey(publicPem);
  const requests: FakeTokenRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const [header = '', claims = '', signature = ''] = (form.get('client_assertion') ?? '').split('.');
      const decode = (part: string) => {
        try {
          return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
        } catch {
          return {};
        }
      };
      const serverNowMs = Date.now() + (options.skewMs ?? 0);
      const record: FakeTokenRequest = {
        index: requests.length,
        url: request.url ?? '',
        contentType: request.headers['content-type'],
        form,
        assertionHeader: decode(header),
        assertionClaims: decode(claims),
        signatureValid: createVerify('RSA-SHA256')
          .update(`${header}.${claims}`)
          .verify(publicKey, Buffer.from(signature, 'base64url')),
        serverNowMs,
        receivedAt: Date.now(),
      };
      requests.push(record);
      const reply = answer(record);
      response
        .writeHead(reply.status, {
          'content-type': 'application/json',
          date: new Date(serverNowMs).toUTCString(),
          ...reply.headers,
        })
        .end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A token answer as the real endpoint gives it (docs/tracking-api.md §11.4). */
export function tokenGranted(accessToken: string, expiresIn = 3600): FakeTokenAnswer {
  return {
    status: 200,
    body: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: expiresIn,
      scope: 'tracking_api:write',
    },
  };
}

export function tokenError(
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
) {
  return { status, body: { error, error_description: description }, headers };
}
