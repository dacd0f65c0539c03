/**
 * The contract of every Actions entry of the catalog: one message of each type (track, identify, page,
 * screen, group, alias) through the destination's default subscriptions (its presets), against a
 * loopback fake of its vendor over TLS with a CA made for this test; the destination's real host names
 * resolve to loopback through the egress guard's resolver. The requests (host, method, path, headers
 * with secrets redacted, body) and the outcomes are snapshotted; a message no default subscription takes
 * must be `filtered`, with nothing sent.
 *
 * One file iterates the catalog: one fake vendor and one runtime for all, each destination loaded once.
 */
import { FIXTURE_MESSAGES, fixtureSecrets, fixtureSettings } from '../../../../test/support/actions-fixtures';
import {
  startFakeVendor,
  type FakeVendor,
  type RecordedRequest,
} from '../../../../test/support/fake-vendor.kit';
import { listActionsDestinations } from './actions-catalog.entries';
import type { ActionsDestinationData } from './actions-catalog.types';
import { parseSubscriptionFql, subscriptionMatches } from './actions-subscriptions';
import { SegmentActionsDeliveryAdapter, SegmentActionsRuntime } from './segment-actions.adapter';

jest.setTimeout(120_000);

/** Headers that vary with the connection rather than with what the destination sends. */
const UNSTABLE_HEADERS = new Set(['content-length', 'connection', 'host', 'transfer-encoding']);

let vendor: FakeVendor;
let runtime: SegmentActionsRuntime;

beforeAll(async () => {
  // Only the clock is fixed (signatures and request times stay the same from run to run); timers run.
  jest.useFakeTimers({
    now: new Date('2026-03-01T12:00:05.000Z'),
    doNotFake: [
      'setTimeout',
      'clearTimeout',
      'setInterval',
      'clearInterval',
      'setImmediate',
      'clearImmediate',
      'nextTick',
      'queueMicrotask',
      'hrtime',
      'performance',
    ],
  });
  vendor = await startFakeVendor();
  runtime = new SegmentActionsRuntime({
    egressGuard: vendor.egressGuard,
    ca: vendor.ca,
    portMap: vendor.portMap,
    requestTimeoutMs: 5_000,
    messageTimeoutMs: 10_000,
  });
});

afterAll(async () => {
  jest.useRealTimers();
  runtime?.close();
  await vendor?.close();
});

const destinations = listActionsDestinations();

it('covers every Actions entry of the catalog', () => {
  expect(destinations.length).toBeGreaterThan(130);
});

describe.each(destinations.map((destination) => [destination.slug, destination] as const))(
  '%s',
  (_slug, destination) => {
    it('sends what its default subscriptions map, and filters the rest', async () => {
      vendor.requests.length = 0;
      vendor.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"status":"ok","code":200,"success":true}',
      });
      const adapter = new SegmentActionsDeliveryAdapter(destination, runtime);
      const results = await adapter.deliver({
        settings: fixtureSettings(destination),
        messages: FIXTURE_MESSAGES,
      });

      expect(results.map((result) => result.messageId)).toEqual(
        FIXTURE_MESSAGES.map((message) => message.messageId),
      );
      const taken = FIXTURE_MESSAGES.map((message) => presetsTaking(destination, message) > 0);
      results.forEach((result, index) => {
        if (!taken[index]) expect(result.outcome).toBe('filtered');
        else expect(result.outcome).not.toBe('filtered');
      });
      if (!taken.some(Boolean)) expect(vendor.requests).toHaveLength(0);

      const secrets = fixtureSecrets(destination);
      expect({
        outcomes: Object.fromEntries(
          results.map((result) => [
            result.messageId,
            result.outcome === 'delivered'
              ? 'delivered'
              : `${result.outcome}: ${redact(result.reason, secrets)}`,
          ]),
        ),
        requests: [...vendor.requests].sort(byRequestOrder).map((request) => recorded(request, secrets)),
      }).toMatchSnapshot();
    });
  },
);

function presetsTaking(destination: ActionsDestinationData, message: unknown): number {
  return destination.presets.filter((preset) => {
    const parsed = parseSubscriptionFql(preset.subscribe);
    return typeof parsed !== 'string' && subscriptionMatches(parsed, message);
  }).length;
}

/** Subscriptions run concurrently; the snapshot orders their requests by what they are. */
function byRequestOrder(a: RecordedRequest, b: RecordedRequest): number {
  return `${a.host}${a.path}${a.body}`.localeCompare(`${b.host}${b.path}${b.body}`);
}

function recorded(request: RecordedRequest, secrets: readonly string[]) {
  const headers = Object.fromEntries(
    Object.entries(request.headers)
      .filter(([name]) => !UNSTABLE_HEADERS.has(name))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, value]) => [name, redactHeader(name, value, secrets)]),
  );
  return {
    host: request.host,
    method: request.method,
    path: redact(request.path, secrets),
    headers,
    body: parsedBody(redact(request.body, secrets)),
  };
}

function redactHeader(name: string, value: string, secrets: readonly string[]): string {
  if (name === 'authorization' && /^basic /i.test(value)) {
    const decoded = Buffer.from(value.slice(6).trim(), 'base64').toString('utf8');
    return `Basic base64(${redact(decoded, secrets)})`;
  }
  return redact(value, secrets);
}

function redact(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
      result = result.split(form).join('<secret>');
    }
  }
  return result;
}

function parsedBody(body: string): unknown {
  if (body === '') return '';
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
