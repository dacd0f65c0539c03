import { startTributary, StartOptions, TributaryTestInstance } from '../../../test/support/tributary-test-instance';

export interface ApiAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A Config API caller bound to one instance and one token, over real HTTP. */
export class ConfigApiClient {
  constructor(
    readonly instance: TributaryTestInstance,
    readonly token: string,
  ) {}

  withToken(token: string): ConfigApiClient {
    return new ConfigApiClient(this.instance, token);
  }

  async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiAnswer> {
    const response = await fetch(`${this.instance.baseUrl}/v1beta/${path.replace(/^\/+/, '')}`, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed, text };
  }

  get = (path: string, headers?: Record<string, string>) => this.call('GET', path, undefined, headers);
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('POST', path, body, headers);
  patch = (path: string, body?: unknown) => this.call('PATCH', path, body);
  put = (path: string, body?: unknown) => this.call('PUT', path, body);
  delete = (path: string) => this.call('DELETE', path);

  /** Answers 200, or fails the test with what came back. */
  async ok(method: string, path: string, body?: unknown): Promise<any> {
    const answer = await this.call(method, path, body);
    if (answer.status !== 200) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body;
  }
}

export async function startConfigApi(options: StartOptions = {}) {
  const instance = await startTributary({
    ...options,
    environment: { CONFIG_API_RATE_LIMIT: '100000', ...options.environment },
  });
  return { instance, admin: new ConfigApiClient(instance, instance.adminToken) };
}

/** A workspace with a source and a webhook destination that has a secret. */
export async function createFixture(admin: ConfigApiClient, workspaceSlug = 'acme') {
  await admin.ok('POST', 'workspaces', { workspace: { name: `workspaces/${workspaceSlug}`, display_name: 'Acme' } });
  const token = await admin.ok('POST', 'access-tokens', {
    access_token: { description: 'rw', scopes: 'workspace', workspace_names: [`workspaces/${workspaceSlug}`] },
  });
  const readToken = await admin.ok('POST', 'access-tokens', {
    access_token: { description: 'ro', scopes: 'workspace:read', workspace_names: [`workspaces/${workspaceSlug}`] },
  });
  const source = await admin.ok('POST', `workspaces/${workspaceSlug}/sources`, {
    source: { name: `workspaces/${workspaceSlug}/sources/web`, catalog_name: 'catalog/sources/javascript' },
  });
  const destination = await admin.ok('POST', `workspaces/${workspaceSlug}/sources/web/destinations`, {
    destination: {
      name: `workspaces/${workspaceSlug}/sources/web/destinations/webhooks`,
      config: [
        { name: 'url', value: 'https://example.com/hook' },
        { name: 'shared_secret', value: 'first-secret' },
      ],
    },
  });
  return {
    workspaceSlug,
    writer: admin.withToken(token.token),
    reader: admin.withToken(readToken.token),
    source,
    destination,
    destinationPath: `workspaces/${workspaceSlug}/sources/web/destinations/webhooks`,
  };
}

export function expectErrorBody(answer: ApiAnswer, status: number, code: number): void {
  expect({ status: answer.status, code: answer.body?.code }).toEqual({ status, code });
  expect(typeof answer.body.error).toBe('string');
  expect(answer.body.error.length).toBeGreaterThan(0);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
}
