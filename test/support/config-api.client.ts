// The one HTTP client of the Config API (`/v1beta`) that test suites and the bench use: any
// method, any header, raw bodies, and the response's status, headers, text and parsed JSON. Works
// against an instance started in this process or as a child process (it needs only its base URL).
import { workspaceName, type AccessTokenResource, type WorkspaceResource } from '@tributary/contracts';
import { request as httpRequest } from 'node:http';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/** What the client needs of a running Tributary. */
export interface ConfigApiTarget {
  /** `http://127.0.0.1:<port>`, without `/v1beta`. */
  baseUrl: string;
  /** An instance-admin token: the client's token unless told otherwise. */
  adminToken: string;
}

export interface ConfigApiResponse<Body = any> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; `undefined` when the body is empty or not JSON. */
  body: Body;
}

export interface RequestOptions {
  /** A value to send as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Bytes or text sent as they are; no Content-Type is added for bytes. */
  rawBody?: string | Uint8Array;
  /** Bearer token; `null` sends no Authorization header. Defaults to the client's token. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** Calls `/v1beta/<path>` of one instance with one token unless told otherwise. */
export class ConfigApiClient {
  constructor(
    readonly instance: ConfigApiTarget,
    readonly token: string | null = instance.adminToken,
  ) {}

  /** The same instance, called with another token (`null`: none). */
  as(token: string | null): ConfigApiClient {
    return new ConfigApiClient(this.instance, token);
  }

  /** `path` is taken as it is after `/v1beta/`, so tests can send `//` and trailing slashes. */
  url(path: string): string {
    return `${this.instance.baseUrl}/v1beta/${path}`;
  }

  async request<Body = any>(
    method: HttpMethod,
    path: string,
    options: RequestOptions = {},
  ): Promise<ConfigApiResponse<Body>> {
    const token = options.token === undefined ? this.token : options.token;
    const headers: Record<string, string> = {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    };
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.rawBody;
    const response = await fetch(this.url(path), { method, headers, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: parseJson(text) as Body };
  }

  get = <Body = any>(path: string, options?: RequestOptions) => this.request<Body>('GET', path, options);
  delete = <Body = any>(path: string, options?: RequestOptions) =>
    this.request<Body>('DELETE', path, options);
  post = <Body = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<Body>('POST', path, { ...options, json });
  patch = <Body = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<Body>('PATCH', path, { ...options, json });
  put = <Body = any>(path: string, json?: unknown, options?: RequestOptions) =>
    this.request<Body>('PUT', path, { ...options, json });

  /** Like `request`, but fails the test with the response when the status is not 200. */
  async ok<Body = any>(method: HttpMethod, path: string, json?: unknown): Promise<Body> {
    const response = await this.request<Body>(method, path, { json });
    if (response.status !== 200) {
      throw new Error(`${method} ${path}: expected 200, got ${response.status} ${response.text}`);
    }
    return response.body;
  }
}

/**
 * `request` in one call for set-up code that has only an instance: with the admin token, or the
 * one given, and `body` sent as JSON when present.
 */
export function configApi<Body = any>(
  instance: ConfigApiTarget,
  method: HttpMethod,
  path: string,
  body?: unknown,
  token?: string,
): Promise<ConfigApiResponse<Body>> {
  return new ConfigApiClient(instance, token).request<Body>(method, path, { json: body });
}

/**
 * A request with a body on GET or DELETE, which `fetch` refuses to send: clients do send them
 * (C6 sends "{}" on every call, the metrics methods read a GET body). Uses node:http instead.
 */
export function requestWithAnyBody(
  client: ConfigApiClient,
  method: HttpMethod,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<ConfigApiResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      client.url(path),
      {
        method,
        headers: {
          ...(client.token === null ? {} : { authorization: `Bearer ${client.token}` }),
          'content-length': String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (value !== undefined)
              responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({
            status: incoming.statusCode ?? 0,
            headers: responseHeaders,
            text,
            body: parseJson(text),
          });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Asserts the error shape of docs/config-api.md §4: the status, `{error: string, code: number}`, JSON. */
export function expectConfigApiError(response: ConfigApiResponse, status: number, code: number): void {
  const summary = { status: response.status, body: response.body ?? response.text };
  expect(summary).toMatchObject({ status, body: { code } });
  expect(typeof response.body.error).toBe('string');
  expect(response.body.error.length).toBeGreaterThan(0);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
}

/** Asserts a success of docs/config-api.md §5.1: 200 with a JSON body. */
export function expectJsonSuccess(response: ConfigApiResponse): any {
  expect({ status: response.status, body: response.body ?? response.text }).toMatchObject({ status: 200 });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toBeDefined();
  return response.body;
}

export function basicAuthorization(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
}

export interface WorkspaceAccess {
  slug: string;
  workspace: WorkspaceResource;
  /** Clients of the workspace with a read-write (`workspace`) and a read-only (`workspace:read`) token. */
  writer: ConfigApiClient;
  reader: ConfigApiClient;
  writerToken: string;
  readerToken: string;
}

/** Creates `workspaces/<slug>` with the admin token and mints a read-write and a read-only token for it. */
export async function createWorkspaceWithTokens(
  admin: ConfigApiClient,
  slug: string,
  displayName = `E2E ${slug}`,
): Promise<WorkspaceAccess> {
  const workspace = await admin.ok<WorkspaceResource>('POST', 'workspaces', {
    workspace: { name: workspaceName(slug), display_name: displayName },
  });
  const mint = async (scopes: 'workspace' | 'workspace:read') =>
    (
      await admin.ok<AccessTokenResource>('POST', 'access-tokens', {
        access_token: {
          description: `e2e ${slug} ${scopes}`,
          scopes,
          workspace_names: [workspaceName(slug)],
        },
      })
    ).token as string;
  const writerToken = await mint('workspace');
  const readerToken = await mint('workspace:read');
  return {
    slug,
    workspace,
    writer: admin.as(writerToken),
    reader: admin.as(readerToken),
    writerToken,
    readerToken,
  };
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
