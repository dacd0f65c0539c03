/**
 * The delivery port's contract (`delivery-adapter.port.ts`), run against the HTTP adapters with the same
 * loopback vendor: `deliver` never rejects, answers one result per message in request order with its
 * messageId, turns a vendor failure and a misconfigured destination into outcomes, and keeps working
 * after `close()`.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import { startFakeVendor, type FakeVendor } from '../../../../test/support/fake-vendor.kit';
import { findActionsDestination } from '../catalog';
import type { DeliveryAdapter } from './delivery-adapter.port';
import {
  SegmentActionsDeliveryAdapter,
  SegmentActionsRuntime,
} from './adapters/segment-actions/segment-actions.adapter';
import { WebhooksDeliveryAdapter } from './adapters/webhooks/webhooks.adapter';

jest.setTimeout(60_000);

interface Subject {
  name: string;
  adapter: () => DeliveryAdapter;
  settings: () => Readonly<Record<string, unknown>>;
  misconfigured: Readonly<Record<string, unknown>>;
}

let vendor: FakeVendor;
let runtime: SegmentActionsRuntime;

beforeAll(async () => {
  vendor = await startFakeVendor();
  runtime = new SegmentActionsRuntime({
    egressGuard: vendor.egressGuard,
    ca: vendor.ca,
    portMap: vendor.portMap,
    requestTimeoutMs: 1_000,
    messageTimeoutMs: 2_000,
  });
});
afterAll(async () => {
  runtime.close();
  await vendor.close();
});

const subjects: Subject[] = [
  {
    name: 'webhooks',
    adapter: () => new WebhooksDeliveryAdapter({ egressGuard: vendor.egressGuard, timeoutMs: 1_000 }),
    settings: () => Object.freeze({ url: `http://127.0.0.1:${vendor.portMap[80]}/hook` }),
    misconfigured: Object.freeze({ url: 'not a url' }),
  },
  {
    name: 'segment actions (actions-amplitude)',
    adapter: () => new SegmentActionsDeliveryAdapter(findActionsDestination('actions-amplitude')!, runtime),
    settings: () => Object.freeze({ apiKey: 'k', secretKey: 's' }),
    misconfigured: Object.freeze({ secretKey: 's' }),
  },
];

function messages(prefix: string, count: number): NormalizedMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'track',
    event: `Event ${index}`,
    userId: 'user-1',
    anonymousId: 'anon-1',
    messageId: `${prefix}-${index}`,
    properties: { index },
    context: {},
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
  })) as unknown as NormalizedMessage[];
}

describe.each(subjects)('delivery port contract: $name', ({ adapter: create, settings, misconfigured }) => {
  it('answers one result per message, in order, each with its messageId', async () => {
    vendor.answer = () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
    const adapter = create();
    const sent = messages('order', 7);
    const results = await adapter.deliver({ settings: settings(), messages: sent });
    expect(results.map((result) => result.messageId)).toEqual(sent.map((message) => message.messageId));
    expect(results.every((result) => result.outcome === 'delivered')).toBe(true);
    await adapter.close();
  });

  it('never rejects: vendor failures and hangs are outcomes', async () => {
    const adapter = create();
    for (const answer of ['reset', 'hang', { status: 500 }, { status: 404 }] as const) {
      vendor.answer = () => answer;
      const results = await adapter.deliver({ settings: settings(), messages: messages('fail', 2) });
      expect(results).toHaveLength(2);
      for (const result of results) expect(['retry', 'discard']).toContain(result.outcome);
    }
    await adapter.close();
  });

  it('a misconfigured destination discards every message with a reason', async () => {
    const adapter = create();
    const results = await adapter.deliver({ settings: misconfigured, messages: messages('bad', 3) });
    expect(results.map((result) => result.outcome)).toEqual(['discard', 'discard', 'discard']);
    for (const result of results)
      expect(result).toMatchObject({ reason: expect.stringContaining('misconfigured') });
    await adapter.close();
  });

  it('answers an empty request with no results, and keeps delivering after close()', async () => {
    vendor.answer = () => ({ status: 200, body: '{}' });
    const adapter = create();
    expect(await adapter.deliver({ settings: settings(), messages: [] })).toEqual([]);
    await adapter.close();
    const [result] = await adapter.deliver({ settings: settings(), messages: messages('reopen', 1) });
    expect(result).toMatchObject({ messageId: 'reopen-0', outcome: 'delivered' });
    await adapter.close();
  });
});
