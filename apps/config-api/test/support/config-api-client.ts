// Plain HTTP over loopback to a running Tributary, as the end-to-end suites of the Config API need
// it: any method, any header, raw bodies, and the response's status, headers and parsed JSON.
import { EVENT_STORE, EventStore, RecordedEvent } from '@tributary/event-store';
import { request as httpRequest } from 'node:http';
import type { TributaryTestInstance } from '../../../../test/support/tributary-test-instance';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; `undefined` when the body is empty or not JSON. */
  body: any;
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

export const RFC3339_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
export const WRITE_KEY = /^[A-Za-z0-9]{32}$/;
export const ACCESS_TOKEN = /^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/;
export const KSUID = /^[0-9A-Za-z]{27}$/;

/** Calls `/v1beta/<path>` of one instance with one token unless told otherwise. */
export class ConfigApiClient {
  constructor(
    readonly instance: TributaryTestInstance,
    readonly token: string | null = instance.adminToken,
  ) {}

  as(token: string | null): ConfigApiClient {
    return new ConfigApiClient(this.instance, token);
  }

  /** `path` is taken as it is after `/v1beta/`, so tests can send `//` and trailing slashes. */
  url(path: string): string {
    return `http://127.0.0.1:${this.instance.port}/v1beta/${path}`;
  }

  async request(method: HttpMethod, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const token = options.token === undefined ? this.token : options.token;
    const headers: Record<string, string> = {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.json === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    };
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.rawBody;
    const response = await fetch(this.url(path), { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  get = (path: string, options?: RequestOptions) => this.request('GET', path, options);
  delete = (path: string, options?: RequestOptions) => this.request('DELETE', path, options);
  post = (path: string, json?: unknown, options?: RequestOptions) =>
    this.request('POST', path, { ...options, json });
  patch = (path: string, json?: unknown, options?: RequestOptions) =>
    this.request('PATCH', path, { ...options, json });
  put = (path: string, json?: unknown, options?: RequestOptions) =>
    this.request('PUT', path, { ...options, json });

  /** Like `request`, but fails the test with the response when the status is not 200. */
  async ok(method: HttpMethod, path: string, json?: unknown): Promise<any> {
    const response = await this.request(method, path, { json });
    if (response.status !== 200) {
      throw new Error(`${method} ${path}: expected 200, got ${response.status} ${response.text}`);
    }
    return response.body;
  }
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
): Promise<ApiResponse> {
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
          let parsed: unknown;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: incoming.statusCode ?? 0, headers: responseHeaders, text, body: parsed });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Asserts the error shape of docs/config-api.md §4: the status, `{error: string, code: number}`, JSON. */
export function expectConfigApiError(response: ApiResponse, status: number, code: number): void {
  const summary = { status: response.status, body: response.body ?? response.text };
  expect(summary).toMatchObject({ status, body: { code } });
  expect(typeof response.body.error).toBe('string');
  expect(response.body.error.length).toBeGreaterThan(0);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
}

/** Asserts a success of docs/config-api.md §5.1: 200 with a JSON body. */
export function expectJsonSuccess(response: ApiResponse): any {
  expect({ status: response.status, body: response.body ?? response.text }).toMatchObject({ status: 200 });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toBeDefined();
  return response.body;
}

export function basicAuthorization(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
}

export function eventStoreOf(instance: TributaryTestInstance): EventStore {
  return instance.app.get<EventStore>(EVENT_STORE);
}

/** Every event in the store, in position order: a catch-up subscription stopped once caught up. */
export async function readAllEvents(store: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let subscription: { stop(): Promise<void> } | undefined;
  await new Promise<void>((resolve, reject) => {
    subscription = store.subscribeToAll((event) => void events.push(event), {
      onCaughtUp: resolve,
      onError: reject,
    });
  });
  await subscription?.stop();
  return events;
}

/** Creates a workspace with the admin token and mints a read-write and a read-only token for it. */
export async function createWorkspaceWithTokens(
  admin: ConfigApiClient,
  slug: string,
): Promise<{
  slug: string;
  writer: ConfigApiClient;
  reader: ConfigApiClient;
  writerToken: string;
  readerToken: string;
}> {
  await admin.ok('POST', 'workspaces', {
    workspace: { name: `workspaces/${slug}`, display_name: `E2E ${slug}` },
  });
  const mint = async (scopes: 'workspace' | 'workspace:read') =>
    (
      await admin.ok('POST', 'access-tokens', {
        access_token: {
          description: `e2e ${slug} ${scopes}`,
          scopes,
          workspace_names: [`workspaces/${slug}`],
        },
      })
    ).token as string;
  const writerToken = await mint('workspace');
  const readerToken = await mint('workspace:read');
  return { slug, writer: admin.as(writerToken), reader: admin.as(readerToken), writerToken, readerToken };
}
