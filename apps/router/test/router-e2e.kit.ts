// Shared set-up for the router end-to-end suites: webhook receivers on loopback that check the
// signature of what they get, destinations and filters made through the Config API, delivery metrics,
// the audit trail, and a PostgreSQL schema of its own per run.
import { destinationName as destinationNameOf, sourceName, workspaceName } from '@tributary/contracts';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import {
  pollUntil,
  postJson,
  type ApiEndpoint,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../test/support/config-api.client';

export interface WebhookRequest {
  /** The parsed body; `messageId` read from it. */
  body: any;
  messageId: string;
  rawBody: Buffer;
  signature: string | undefined;
  /** `X-Signature` is the hex HMAC-SHA1 of the exact body bytes, keyed with the receiver's secret. */
  signatureValid: boolean;
  /** `Date.now()` when the whole body had arrived. */
  arrivedAt: number;
  /** What this receiver answered. */
  status: number;
}

export interface WebhookReceiverOptions {
  /** The destination's shared secret, to check signatures with. */
  secret?: string;
  /** How long each answer is held back, to make the receiver slow. */
  delayMs?: number;
}

/**
 * A webhook endpoint on 127.0.0.1 that records every request. `answer` decides the status of each
 * (200 by default); change it while a test runs to make the receiver fail or recover.
 */
export class WebhookReceiver {
  readonly requests: WebhookRequest[] = [];
  answer: (body: any) => number = () => 200;
  delayMs: number;
  /** The most requests this receiver had under way at once. */
  mostAtOnce = 0;
  private atOnce = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly secret: string | undefined,
    delayMs: number,
  ) {
    this.delayMs = delayMs;
  }

  static async start(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new WebhookReceiver(
      server,
      `http://127.0.0.1:${port}/hook`,
      options.secret,
      options.delayMs ?? 0,
    );
    server.on(
      'request',
      (request: IncomingMessage, response: ServerResponse) => void receiver.handle(request, response),
    );
    return receiver;
  }

  /** Requests answered with a 2xx: the messages this destination accepted, in arrival order. */
  accepted(): WebhookRequest[] {
    return this.requests.filter((request) => request.status >= 200 && request.status < 300);
  }

  acceptedIds(): string[] {
    return this.accepted().map((request) => request.messageId);
  }

  /** The accepted request of one message; fails when it was accepted more than once. */
  acceptedOnce(messageId: string): WebhookRequest | undefined {
    const matches = this.accepted().filter((request) => request.messageId === messageId);
    if (matches.length > 1) throw new Error(`message ${messageId} was accepted ${matches.length} times`);
    return matches[0];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    this.atOnce += 1;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.atOnce);
    response.once('close', () => (this.atOnce -= 1));
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks);
    const arrivedAt = Date.now();
    let body: any;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch {
      body = undefined;
    }
    const signature = request.headers['x-signature'] as string | undefined;
    const expected =
      this.secret === undefined ? undefined : createHmac('sha1', this.secret).update(rawBody).digest('hex');
    const status = body === undefined ? 400 : this.answer(body);
    this.requests.push({
      body,
      messageId: body?.messageId,
      rawBody,
      signature,
      signatureValid: expected !== undefined && signature === expected,
      arrivedAt,
      status,
    });
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(status < 300 ? '{"ok":true}' : `{"error":"answered ${status} on purpose"}`);
  }
}

/**
 * The tests poll the Config API (metrics, dead letters, replays) every 50 ms, far above the default
 * per-token rate limit meant for clients; these suites lift it.
 */
export const POLLING_ENVIRONMENT = { CONFIG_API_RATE_LIMIT: '100000' };

/** `workspaces/<ws>/sources/<src>/destinations/<slug>`: the destination's resource name. */
export function destinationName(source: TestSource, destinationSlug: string): string {
  return destinationNameOf({ ...source, destinationSlug });
}

export interface DestinationInput {
  /** The destination's slug; its catalog entry too unless `catalogSlug` is given. */
  slug: string;
  catalogSlug?: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

/** Creates a destination through the Config API; fails unless it answers 200. */
export async function createDestination(
  t: ApiEndpoint,
  source: TestSource,
  input: DestinationInput,
): Promise<any> {
  const response = await configApi(t, 'POST', `${sourceName(source)}/destinations`, {
    destination: {
      name: destinationName(source, input.slug),
      ...(input.catalogSlug && { catalog_name: `catalog/destinations/${input.catalogSlug}` }),
      enabled: input.enabled,
      config: Object.entries(input.config).map(([key, value]) => ({
        name: `${destinationName(source, input.slug)}/config/${key}`,
        value,
      })),
    },
  });
  if (response.status !== 200)
    throw new Error(
      `creating destination ${input.slug}: ${response.status} ${JSON.stringify(response.body)}`,
    );
  return response.body;
}

export function createWebhookDestination(
  t: ApiEndpoint,
  source: TestSource,
  slug: string,
  receiver: WebhookReceiver,
  secret: string,
  options: { enabled?: boolean } = {},
): Promise<any> {
  return createDestination(t, source, {
    slug,
    catalogSlug: slug === 'webhooks' ? undefined : 'webhooks',
    enabled: options.enabled ?? true,
    config: { url: receiver.url, shared_secret: secret },
  });
}

export async function deleteDestination(t: ApiEndpoint, source: TestSource, slug: string): Promise<void> {
  const response = await configApi(t, 'DELETE', `${destinationName(source, slug)}`);
  if (response.status !== 200)
    throw new Error(`deleting destination ${slug}: ${response.status} ${JSON.stringify(response.body)}`);
}

export async function createFilter(
  t: ApiEndpoint,
  source: TestSource,
  slug: string,
  filter: Record<string, unknown>,
): Promise<any> {
  const response = await configApi(t, 'POST', `${destinationName(source, slug)}/filters`, { filter });
  if (response.status !== 200)
    throw new Error(`creating filter on ${slug}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

export interface DeliveryMetricsBody {
  counts: Record<'delivered' | 'discarded' | 'retried' | 'filtered' | 'skipped' | 'dead_lettered', number>;
  latency_ms: Record<string, { p50: number | null; p95: number | null; samples: number }>;
  recent_discards: { message_id: string; reason: string; time: string }[];
}

export async function deliveryMetrics(
  t: ApiEndpoint,
  source: TestSource,
  slug: string,
): Promise<DeliveryMetricsBody> {
  const response = await configApi(t, 'GET', `${destinationName(source, slug)}/metrics`);
  if (response.status !== 200)
    throw new Error(`reading metrics of ${slug}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Messages whose outcome for the destination is final: every count but `retried`. */
export function settledCount(metrics: DeliveryMetricsBody): number {
  const { delivered, discarded, filtered, skipped, dead_lettered } = metrics.counts;
  return delivered + discarded + filtered + skipped + dead_lettered;
}

/** Waits until the destination has settled `expected` messages (a steady state), then returns its metrics. */
export async function waitForSettled(
  t: ApiEndpoint,
  source: TestSource,
  slug: string,
  expected: number,
  timeoutMs = 10_000,
): Promise<DeliveryMetricsBody> {
  const { value } = await pollUntil(`${slug} settles ${expected} messages`, timeoutMs, async () => {
    const metrics = await deliveryMetrics(t, source, slug);
    return settledCount(metrics) >= expected ? metrics : undefined;
  });
  return value;
}

export async function auditEvents(
  t: ApiEndpoint,
  source: TestSource,
  resourceNamePrefix: string,
): Promise<any[]> {
  const response = await configApi(
    t,
    'GET',
    `${workspaceName(source.workspaceSlug)}/audit-events?page_size=200&resource_name_prefix=${encodeURIComponent(resourceNamePrefix)}`,
  );
  if (response.status !== 200)
    throw new Error(`reading the audit trail: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.audit_events;
}

/** A track message with a fresh messageId; `fields` override or add. */
export function trackMessage(fields: Record<string, unknown> = {}): Record<string, any> {
  return {
    type: 'track',
    messageId: `e2e-${randomUUID()}`,
    userId: 'user-1',
    event: 'Order Completed',
    properties: { revenue: 1 },
    ...fields,
  };
}

/** Sends messages in one `/v1/batch` request; fails unless the tracking API answers 200. */
export async function sendBatch(
  t: ApiEndpoint,
  source: TestSource,
  batch: Record<string, unknown>[],
): Promise<number> {
  const sentAt = Date.now();
  const response = await postJson(t, '/v1/batch', { batch }, source.writeKey);
  if (response.status !== 200) throw new Error(`sending a batch: ${response.status} ${response.text}`);
  return sentAt;
}

/** Waits until the receiver has accepted every one of `messageIds`. */
export async function waitForAccepted(
  receiver: WebhookReceiver,
  messageIds: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const { elapsedMs } = await pollUntil(
    `${messageIds.length} messages accepted at ${receiver.url}`,
    timeoutMs,
    async () => {
      const accepted = new Set(receiver.acceptedIds());
      return messageIds.every((id) => accepted.has(id)) ? true : undefined;
    },
  );
  return elapsedMs;
}

/** The median of some numbers (the lower middle of an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export const TEST_DATABASE_URL =
  process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A schema of its own on the test PostgreSQL (`TEST_DATABASE_URL`), dropped by `drop()`. An
 * unreachable server fails the suite with a message saying how to provide one: CI starts it.
 */
export async function openTestSchema(): Promise<{ client: Client; schema: string; drop(): Promise<void> }> {
  const schema = `tributary_router_e2e_${process.pid}_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_DATABASE_URL.replace(/:[^:@/]*@/, ':***@')} (${(error as Error).message}). ` +
        'Start it (CI does) or point TEST_DATABASE_URL at a server where this user may create schemas.',
    );
  }
  return {
    client,
    schema,
    async drop() {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await client.end().catch(() => undefined);
    },
  };
}
