// Plain HTTP calls to Tributary's Config API for test set-up, for what the third-party clients
// cannot do themselves (create a workspace, mint a token, really delete a filter).
import type { TributaryTestInstance } from '../support/tributary-test-instance';

export type ConfigApiResponse = { status: number; body: any };

export function configApiUrl(instance: TributaryTestInstance, path: string): string {
  // Built from the port rather than `baseUrl`, so it does not matter whether `baseUrl`
  // already ends in /v1beta.
  return `http://127.0.0.1:${instance.port}/v1beta/${path.replace(/^\/+/, '')}`;
}

export async function configApiRequest(
  instance: TributaryTestInstance,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  token: string,
  body?: unknown,
): Promise<ConfigApiResponse> {
  const response = await fetch(configApiUrl(instance, path), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

export type WorkspaceAccess = { slug: string; token: string; readOnlyToken: string };

/**
 * Creates `workspaces/<slug>` with the instance-admin token and mints two workspace tokens for it:
 * read-write (`workspace`) and read-only (`workspace:read`).
 */
export async function createWorkspaceWithTokens(
  instance: TributaryTestInstance,
  slug: string,
): Promise<WorkspaceAccess> {
  const workspace = await configApiRequest(instance, 'POST', 'workspaces', instance.adminToken, {
    workspace: { name: `workspaces/${slug}`, display_name: `Compat ${slug}` },
  });
  if (workspace.status !== 200) {
    throw new Error(`creating workspace ${slug}: ${workspace.status} ${JSON.stringify(workspace.body)}`);
  }
  const mint = async (scopes: 'workspace' | 'workspace:read'): Promise<string> => {
    const created = await configApiRequest(instance, 'POST', 'access-tokens', instance.adminToken, {
      access_token: {
        description: `compat ${slug} ${scopes}`,
        scopes,
        workspace_names: [`workspaces/${slug}`],
      },
    });
    if (created.status !== 200 || typeof created.body?.token !== 'string') {
      throw new Error(`minting a ${scopes} token: ${created.status} ${JSON.stringify(created.body)}`);
    }
    return created.body.token;
  };
  return { slug, token: await mint('workspace'), readOnlyToken: await mint('workspace:read') };
}

/** segment-typescript-api rejects with the raw response text; this reads the error body in it. */
export function parseRejection(rejection: unknown): { error: string; code: number } {
  if (typeof rejection !== 'string') {
    throw new Error(`expected the raw response text, got ${String(rejection)}`);
  }
  return JSON.parse(rejection);
}
