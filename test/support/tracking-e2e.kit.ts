// Shared set-up for the tracking API end-to-end suites: sources made through the Config API, raw
// HTTP calls on loopback, and a reader that takes messages back out of the instance's own event log.
import { sourceName, workspaceName } from '@tributary/contracts';
import { EVENT_LOG, type Delivery, type EventLog } from '@tributary/event-log';
import { randomUUID } from 'node:crypto';
import { configApi } from './config-api.client';
import type { TributaryTestInstance } from './tributary-test-instance';

/** RFC 3339 in UTC with exactly three fraction digits and `Z` (docs/tracking-api.md §7.2, output format). */
export const RFC3339_UTC_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What the HTTP helpers need of an instance: one started in this process or as a child process. */
export type ApiEndpoint = Pick<TributaryTestInstance, 'baseUrl' | 'adminToken'>;

export interface TestSource {
  workspaceSlug: string;
  workspaceId: string;
  sourceSlug: string;
  sourceId: string;
  writeKey: string;
}

let slugCounter = 0;
function uniqueSlug(prefix: string): string {
  slugCounter += 1;
  return `${prefix}-${process.pid}-${slugCounter}`;
}

/** Creates a workspace (`region` optional) through the Config API; returns its slug and id. */
export async function createWorkspace(
  t: ApiEndpoint,
  options: { region?: 'us' | 'eu' } = {},
): Promise<{ slug: string; id: string; response: { status: number; body: any } }> {
  const slug = uniqueSlug('ws');
  const response = await configApi(t, 'POST', 'workspaces', {
    workspace: {
      name: workspaceName(slug),
      display_name: `E2E ${slug}`,
      ...(options.region && { region: options.region }),
    },
  });
  if (response.status !== 200)
    throw new Error(`creating workspace: ${response.status} ${JSON.stringify(response.body)}`);
  return { slug, id: response.body.id, response };
}

/** Creates a source in a workspace through the Config API and returns its write key. */
export async function createSource(
  t: ApiEndpoint,
  workspace: { slug: string; id: string },
  catalog = 'node',
): Promise<TestSource> {
  const sourceSlug = uniqueSlug('src');
  const response = await configApi(t, 'POST', `${workspaceName(workspace.slug)}/sources`, {
    source: {
      name: sourceName({ workspaceSlug: workspace.slug, sourceSlug }),
      catalog_name: `catalog/sources/${catalog}`,
    },
  });
  if (response.status !== 200)
    throw new Error(`creating source: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    workspaceSlug: workspace.slug,
    workspaceId: workspace.id,
    sourceSlug,
    sourceId: response.body.id,
    writeKey: response.body.write_keys[0],
  };
}

export async function createWorkspaceAndSource(
  t: ApiEndpoint,
  options: { region?: 'us' | 'eu'; catalog?: string } = {},
): Promise<TestSource> {
  return createSource(t, await createWorkspace(t, options), options.catalog);
}

export async function deleteSource(t: ApiEndpoint, source: TestSource): Promise<void> {
  const response = await configApi(t, 'DELETE', sourceName(source));
  if (response.status !== 200)
    throw new Error(`deleting source: ${response.status} ${JSON.stringify(response.body)}`);
}

export function basicAuth(writeKey: string, withColon = true): string {
  return `Basic ${Buffer.from(withColon ? `${writeKey}:` : writeKey).toString('base64')}`;
}

export interface TrackingResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any;
}

/** A raw POST to the tracking API: the body is sent byte for byte as given. */
export async function postTracking(
  t: ApiEndpoint,
  path: string,
  body: string | Buffer | Uint8Array,
  headers: Record<string, string> = {},
): Promise<TrackingResponse> {
  const response = await fetch(`${t.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}

/** `POST <path>` with a JSON body and Basic auth for the source's write key. */
export function postJson(
  t: ApiEndpoint,
  path: string,
  body: unknown,
  writeKey?: string,
  headers: Record<string, string> = {},
): Promise<TrackingResponse> {
  return postTracking(t, path, JSON.stringify(body), {
    ...(writeKey !== undefined && { authorization: basicAuth(writeKey) }),
    ...headers,
  });
}

/** The error body every tracking API failure carries (docs/tracking-api.md §9.2). */
export function expectErrorBody(response: TrackingResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toEqual({
    success: false,
    code,
    message: expect.any(String),
    error: expect.any(String),
  });
  expect(response.body.message.length).toBeGreaterThan(0);
}

export function eventLogOf(t: TributaryTestInstance): EventLog {
  return t.app.get<symbol, EventLog>(EVENT_LOG);
}

export interface StoredMessage {
  workspaceId: string;
  sourceId: string;
  messageId: string;
  payload: Record<string, any>;
  sequence: number;
}

/**
 * Everything the log holds right now (optionally of one source), read by a fresh durable consumer from
 * the start of the log: it collects and acks deliveries until the consumer has nothing left, then is
 * deleted. Bounded by `timeoutMs`.
 */
export async function readLog(
  t: TributaryTestInstance | EventLog,
  options: { sourceId?: string; timeoutMs?: number } = {},
): Promise<StoredMessage[]> {
  const eventLog = 'publishBatch' in t ? t : eventLogOf(t);
  const consumerName = `test-reader-${randomUUID()}`;
  const stored = new Map<number, StoredMessage>();
  const subscription = await eventLog.consume(
    consumerName,
    { sourceId: options.sourceId, deliverFrom: new Date(0), ackWaitMs: 30_000, maxInFlight: 1000 },
    async (delivery: Delivery) => {
      stored.set(delivery.sequence, {
        workspaceId: delivery.workspaceId,
        sourceId: delivery.sourceId,
        messageId: delivery.messageId,
        payload: delivery.payload,
        sequence: delivery.sequence,
      });
      await delivery.ack();
    },
  );
  try {
    const deadline = Date.now() + (options.timeoutMs ?? 10_000);
    for (;;) {
      const lag = await eventLog.consumerLag(consumerName);
      if (lag.undelivered === 0 && lag.unacknowledged === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `reading the log timed out with ${JSON.stringify(lag)} after ${stored.size} messages`,
        );
      }
      await sleep(25);
    }
  } finally {
    await subscription.stop();
    await eventLog.deleteConsumer(consumerName);
  }
  return [...stored.values()].sort((a, b) => a.sequence - b.sequence);
}

/** The stored messages of a source, by messageId; fails when one messageId is stored twice. */
export async function readSourceMessages(
  t: TributaryTestInstance | EventLog,
  source: TestSource,
): Promise<Map<string, StoredMessage>> {
  const messages = await readLog(t, { sourceId: source.sourceId });
  const byId = new Map<string, StoredMessage>();
  for (const message of messages) {
    if (byId.has(message.messageId)) throw new Error(`messageId ${message.messageId} is stored twice`);
    byId.set(message.messageId, message);
  }
  return byId;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Calls `attempt` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function pollUntil<T>(
  what: string,
  timeoutMs: number,
  attempt: () => Promise<T | undefined>,
  intervalMs = 50,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return { value, elapsedMs: Date.now() - started };
    } catch (error) {
      last = error;
    }
    if (Date.now() - started > timeoutMs) {
      throw new Error(
        `${what}: not reached within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}
