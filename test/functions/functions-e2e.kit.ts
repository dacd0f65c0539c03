// Shared set-up for the functions end-to-end suites: functions and their instances made through the
// Config API, and a loopback receiver that functions call with `fetch`.
import { sourceName, workspaceName } from '@tributary/contracts';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configApi } from '../support/config-api.client';
import type { ApiEndpoint, TestSource } from '../support/tracking-e2e.kit';
import { destinationName } from '../../apps/router/test/router-e2e.kit';

export type FunctionType = 'SOURCE' | 'DESTINATION' | 'INSERT_DESTINATION';

export interface SettingDeclaration {
  name: string;
  type?: 'string' | 'boolean' | 'array' | 'text-map';
  required?: boolean;
  sensitive?: boolean;
}

/**
 * Short limits for the suites: a 3 s wall time (a memory bomb needs a moment of garbage collection
 * before its isolate gives up) and 32 MB isolates, so the busy loop and the memory bomb end quickly. Loopback egress is open by default
 * (`TRIBUTARY_EGRESS=open`), which is how the functions reach the test's receiver.
 */
export const FUNCTION_ENVIRONMENT = {
  FUNCTION_TIMEOUT: '3s',
  FUNCTION_MEMORY_MB: '32',
  CONFIG_API_RATE_LIMIT: '100000',
};

/** Creates a function through the Config API; returns its id. Fails unless it answers 200. */
export async function createFunction(
  t: ApiEndpoint,
  workspaceSlug: string,
  type: FunctionType,
  code: string,
  settings: SettingDeclaration[] = [],
): Promise<string> {
  const response = await configApi(t, 'POST', `${workspaceName(workspaceSlug)}/functions?type=${type}`, {
    function: {
      display_name: `E2E ${type.toLowerCase()} ${Date.now()}`,
      code,
      buildpack: 'boreal',
      settings: settings.map((setting) => ({
        name: setting.name,
        label: setting.name,
        type: setting.type ?? 'string',
        description: '',
        required: setting.required ?? false,
        sensitive: setting.sensitive ?? false,
      })),
    },
  });
  if (response.status !== 200)
    throw new Error(`creating a ${type} function: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id;
}

/** An instance of a destination function on the source: a destination whose slug is the function id. */
export async function createFunctionDestination(
  t: ApiEndpoint,
  source: TestSource,
  functionId: string,
  config: Record<string, unknown> = {},
): Promise<any> {
  const name = destinationName(source, functionId);
  const response = await configApi(t, 'POST', `${sourceName(source)}/destinations`, {
    destination: {
      name,
      enabled: true,
      connection_mode: 'CLOUD',
      config: Object.entries(config).map(([key, value]) => ({ name: `${name}/config/${key}`, value })),
    },
  });
  if (response.status !== 200)
    throw new Error(
      `creating destination ${functionId}: ${response.status} ${JSON.stringify(response.body)}`,
    );
  return response.body;
}

/** Puts an insert function in front of a destination. */
export async function createInsertFunction(
  t: ApiEndpoint,
  source: TestSource,
  destinationSlug: string,
  functionId: string,
  options: { enabled?: boolean; config?: Record<string, unknown> } = {},
): Promise<any> {
  const response = await configApi(
    t,
    'POST',
    `${destinationName(source, destinationSlug)}/insert-functions`,
    {
      insert_function: {
        function_id: functionId,
        enabled: options.enabled ?? true,
        config: Object.entries(options.config ?? {}).map(([name, value]) => ({ name, value })),
      },
    },
  );
  if (response.status !== 200)
    throw new Error(
      `creating insert function on ${destinationSlug}: ${response.status} ${JSON.stringify(response.body)}`,
    );
  return response.body;
}

/** A source running a source function; returns it with its webhook URL. */
export async function createFunctionSource(
  t: ApiEndpoint,
  workspace: { slug: string; id: string },
  functionId: string,
  functionConfig: Record<string, unknown> = {},
): Promise<TestSource & { webhookUrl: string }> {
  const sourceSlug = `fn-src-${process.pid}-${Date.now().toString(36)}`;
  const response = await configApi(t, 'POST', `${workspaceName(workspace.slug)}/sources`, {
    source: {
      name: sourceName({ workspaceSlug: workspace.slug, sourceSlug }),
      // The bare id: the Config API does not yet read `catalog/sources/sfn_…` (its catalog-name
      // pattern takes lower-case slugs only).
      catalog_name: functionId,
      function_config: Object.entries(functionConfig).map(([name, value]) => ({ name, value })),
    },
  });
  if (response.status !== 200)
    throw new Error(`creating a function source: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    workspaceSlug: workspace.slug,
    workspaceId: workspace.id,
    sourceSlug,
    sourceId: response.body.id,
    writeKey: response.body.write_keys[0],
    webhookUrl: response.body.webhook_url,
  };
}

export interface ReceivedCall {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  arrivedAt: number;
}

/** What functions `fetch` in the suites: records every call and answers `answer(call)` (200 by default). */
export class FetchReceiver {
  readonly calls: ReceivedCall[] = [];
  answer: (call: ReceivedCall) => number = () => 200;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<FetchReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new FetchReceiver(server, `http://127.0.0.1:${port}`);
    server.on(
      'request',
      (request: IncomingMessage, response: ServerResponse) => void receiver.handle(request, response),
    );
    return receiver;
  }

  callsTo(path: string): ReceivedCall[] {
    return this.calls.filter((call) => call.path === path);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    const call = { path: request.url ?? '', headers: request.headers, body, arrivedAt: Date.now() };
    this.calls.push(call);
    const status = this.answer(call);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status }));
  }
}

export interface MessageOutcome {
  outcome: string;
  detail?: string;
}

/** The latest outcome of each message for one destination, as the router's message-deliveries route tells it. */
export async function outcomesOf(
  t: ApiEndpoint,
  source: TestSource,
  destinationSlug: string,
  messageIds: readonly string[],
): Promise<Map<string, MessageOutcome>> {
  const query = messageIds.map((id) => `message_id=${encodeURIComponent(id)}`).join('&');
  const response = await configApi(t, 'GET', `${sourceName(source)}/message-deliveries?${query}`);
  if (response.status !== 200)
    throw new Error(`reading message deliveries: ${response.status} ${JSON.stringify(response.body)}`);
  const name = destinationName(source, destinationSlug);
  const outcomes = new Map<string, MessageOutcome>();
  for (const entry of response.body.message_deliveries) {
    const found = entry.destinations.find((destination: any) => destination.destination_name === name);
    if (found) outcomes.set(entry.message_id, { outcome: found.outcome, detail: found.detail });
  }
  return outcomes;
}

/** A handler body that allocates until its isolate runs out of memory. */
export const MEMORY_BOMB = "const kept = []; for (;;) kept.push('x'.repeat(1 << 20) + kept.length);";
