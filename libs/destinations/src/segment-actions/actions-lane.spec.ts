/**
 * Actions destinations in their lane: deliveries run on worker threads whose egress guards keep the
 * policy and resolve through this thread's guard; a mapping that runs away (stored before the write-time
 * checks, or past them) costs a worker, never this thread, and its destination is suspended.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import { startFakeVendor, type FakeVendor } from '../../../../test/support/fake-vendor.kit';
import { findActionsDestination } from './actions-catalog.entries';
import { EgressGuard } from '../delivery/egress/egress-guard';
import { parseEgressPolicy } from '../delivery/egress/egress-policy';
import { ActionsLane, MAX_ACTIONS_OVERRUNS } from './actions-lane';

jest.setTimeout(120_000);

const amplitude = findActionsDestination('actions-amplitude')!;
const webhook = findActionsDestination('actions-webhook')!;
const amplitudeSettings = Object.freeze({
  apiKey: 'amp-key',
  secretKey: 'amp-secret',
  endpoint: 'north_america',
});

function track(id: string): NormalizedMessage {
  return {
    type: 'track',
    event: 'Song Played',
    userId: 'user-1',
    messageId: id,
    properties: {},
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
  } as unknown as NormalizedMessage;
}

/** The review's mapping: `n` items nested `depth` deep, n^depth leaves; the write-time checks refuse it. */
function bomb(n: number, depth: number): Record<string, unknown> {
  let shape: Record<string, unknown> = { leaf: { '@path': '$.event' } };
  for (let level = 0; level < depth; level++) {
    shape = { v: { '@arrayPath': [{ '@literal': [...Array(n).keys()] }, shape] } };
  }
  return shape;
}

const bombSettings = () =>
  Object.freeze({
    subscriptions: [
      {
        subscribe: 'type = "track"',
        partnerAction: 'send',
        mapping: { url: 'https://hooks.example.com/x', method: 'POST', data: bomb(10, 7) },
      },
    ],
  });

describe('ActionsLane', () => {
  let vendor: FakeVendor;
  let lane: ActionsLane;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    lane = new ActionsLane({
      egressGuard: vendor.egressGuard,
      ca: vendor.ca,
      portMap: vendor.portMap,
      workers: 2,
      heapMb: 96,
      requestTimeoutMs: 5_000,
      messageTimeoutMs: 5_000,
      callTimeoutMs: 6_000,
    });
  });
  afterAll(async () => {
    await lane.close();
    await vendor.close();
  });

  it("delivers on a worker, resolving through this thread's guard", async () => {
    vendor.requests.length = 0;
    const adapter = lane.deliveryAdapter(amplitude);
    const results = await adapter.deliver({
      settings: amplitudeSettings,
      sourceId: 's1',
      messages: [track('m-1'), track('m-2')],
    });
    expect(results).toEqual([
      { messageId: 'm-1', outcome: 'delivered' },
      { messageId: 'm-2', outcome: 'delivered' },
    ]);
    expect(vendor.requests.map((request) => request.host)).toEqual([
      'api2.amplitude.com',
      'api2.amplitude.com',
    ]);
  });

  it('keeps the egress policy in the workers: a refused address is never connected to', async () => {
    const refusing = new ActionsLane({
      egressGuard: new EgressGuard(parseEgressPolicy('public', ''), async () => [
        { address: '127.0.0.1', family: 4 },
      ]),
      ca: vendor.ca,
      portMap: vendor.portMap,
      workers: 1,
    });
    vendor.requests.length = 0;
    try {
      const [result] = await refusing
        .deliveryAdapter(amplitude)
        .deliver({ settings: amplitudeSettings, messages: [track('m-denied')] });
      expect(result).toMatchObject({ outcome: 'discard', cause: 'egress_denied' });
      expect(vendor.requests).toHaveLength(0);
    } finally {
      await refusing.close();
    }
  });

  it('a stored mapping bomb costs a worker, not this thread, and its destination is suspended until its settings change (regression)', async () => {
    const adapter = lane.deliveryAdapter(webhook);
    const settings = bombSettings();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let attempt = 1; attempt <= MAX_ACTIONS_OVERRUNS; attempt++) {
      const started = Date.now();
      const [result] = await adapter.deliver({
        settings,
        sourceId: 's-bomb',
        messages: [track(`b-${attempt}`)],
      });
      expect(result).toMatchObject({
        outcome: 'retry',
        reason: expect.stringMatching(/^actions lane: (no answer within 6000 ms|.*96 MiB heap)/),
      });
      expect(Date.now() - started).toBeLessThan(30_000);
    }
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(10 * 1024 * 1024);
    expect(lane.suspensionOf('s-bomb', webhook.slug)).toMatchObject({
      status: 'suspended',
      reason: expect.stringContaining(`${MAX_ACTIONS_OVERRUNS} deliveries ran past the lane's budget`),
    });
    // Suspended: answered at once, without running.
    const started = Date.now();
    const [suspended] = await adapter.deliver({ settings, sourceId: 's-bomb', messages: [track('b-next')] });
    expect(suspended).toMatchObject({
      outcome: 'retry',
      reason: expect.stringContaining('destination suspended'),
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    // Other destinations went on meanwhile.
    const [other] = await lane
      .deliveryAdapter(amplitude)
      .deliver({ settings: amplitudeSettings, sourceId: 's-bomb', messages: [track('m-other')] });
    expect(other).toMatchObject({ outcome: 'delivered' });
    // New settings (the mapping fixed): it runs again.
    const fixed = Object.freeze({
      subscriptions: [
        {
          subscribe: 'type = "track"',
          partnerAction: 'send',
          mapping: {
            url: 'https://hooks.example.com/x',
            method: 'POST',
            data: { e: { '@path': '$.event' } },
          },
        },
      ],
    });
    const [resumed] = await adapter.deliver({
      settings: fixed,
      sourceId: 's-bomb',
      messages: [track('b-fixed')],
    });
    expect(resumed).toMatchObject({ outcome: 'delivered' });
    expect(lane.suspensionOf('s-bomb', webhook.slug)).toBeUndefined();
  });

  it(':test runs in the lane', async () => {
    vendor.answer = (request) =>
      request.path.startsWith('/api/2/usersearch')
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"matches":[]}' }
        : { status: 404 };
    await expect(
      lane.testAuthentication(amplitude.slug, { apiKey: 'k', secretKey: 's', endpoint: 'north_america' }),
    ).resolves.toEqual({ status: 'OK' });
    await expect(lane.testAuthentication('webhooks', {})).resolves.toBeUndefined();
  });
});
