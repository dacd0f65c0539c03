/**
 * The Segment Actions adapter through Actions Amplitude against a loopback fake of Amplitude's API
 * (TLS with a CA made for the test, api2.amplitude.com resolved to loopback by the egress guard): what
 * each answer of the vendor becomes, and the adapter's own guarantees.
 */
import { createServer, type AddressInfo } from 'node:net';
import type { NormalizedMessage } from '@tributary/contracts';
import { startFakeVendor, type FakeVendor } from '../../../../test/support/fake-vendor.kit';
import { findActionsDestination } from './actions-catalog.entries';
import { EgressGuard } from '../delivery/egress/egress-guard';
import { parseEgressPolicy } from '../delivery/egress/egress-policy';
import { SegmentActionsDeliveryAdapter, SegmentActionsRuntime } from './segment-actions.adapter';

jest.setTimeout(60_000);

const amplitude = findActionsDestination('actions-amplitude')!;
const settings = Object.freeze({ apiKey: 'amp-key', secretKey: 'amp-secret', endpoint: 'north_america' });

function track(id: string, event = 'Song Played'): NormalizedMessage {
  return {
    type: 'track',
    event,
    userId: 'user-1',
    anonymousId: 'anon-1',
    messageId: id,
    properties: { plays: 1 },
    context: { library: { name: 'test', version: '1' } },
    timestamp: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:00.000Z',
    sentAt: '2026-01-01T00:00:00.000Z',
  } as unknown as NormalizedMessage;
}

describe('Segment Actions adapter (Actions Amplitude)', () => {
  let vendor: FakeVendor;
  let runtime: SegmentActionsRuntime;
  let adapter: SegmentActionsDeliveryAdapter;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    runtime = new SegmentActionsRuntime({
      egressGuard: vendor.egressGuard,
      ca: vendor.ca,
      portMap: vendor.portMap,
      // Short enough for the hanging vendor's case, long enough for twenty TLS requests on a loaded
      // machine (a full CI run shares two cores with everything else).
      requestTimeoutMs: 3_000,
      messageTimeoutMs: 6_000,
    });
    adapter = new SegmentActionsDeliveryAdapter(amplitude, runtime);
  });
  afterAll(async () => {
    runtime.close();
    await vendor.close();
  });
  beforeEach(() => {
    vendor.requests.length = 0;
  });

  it('delivers a track through the default subscription to api2.amplitude.com over TLS', async () => {
    vendor.answer = () => ({ status: 200, body: '{"code":200}' });
    const [result] = await adapter.deliver({ settings, messages: [track('m-ok')] });
    expect(result).toEqual({ messageId: 'm-ok', outcome: 'delivered' });
    expect(vendor.requests).toHaveLength(1);
    const [request] = vendor.requests;
    expect(request!.host).toBe('api2.amplitude.com');
    expect(request!.path).toBe('/2/httpapi');
    const body = JSON.parse(request!.body);
    expect(body.api_key).toBe('amp-key');
    expect(body.events[0]).toMatchObject({
      event_type: 'Song Played',
      user_id: 'user-1',
      device_id: 'anon-1',
    });
  });

  const matrix: {
    answer: Parameters<FakeVendor['answer']> extends never[] ? never : ReturnType<FakeVendor['answer']>;
    expected: object;
    name: string;
  }[] = [
    { name: '202', answer: { status: 202, body: '{}' }, expected: { outcome: 'delivered' } },
    {
      name: '400',
      answer: { status: 400, body: '{"error":"bad"}' },
      expected: { outcome: 'discard', status: 400 },
    },
    {
      name: '401',
      answer: { status: 401 },
      expected: { outcome: 'retry', status: 401, reason: expect.stringContaining('authentication') },
    },
    { name: '404', answer: { status: 404 }, expected: { outcome: 'discard', status: 404 } },
    { name: '408', answer: { status: 408 }, expected: { outcome: 'retry', status: 408 } },
    {
      name: '429 with Retry-After',
      answer: { status: 429, headers: { 'retry-after': '7' } },
      expected: { outcome: 'retry', status: 429, retryAfterMs: 7_000 },
    },
    { name: '500', answer: { status: 500 }, expected: { outcome: 'retry', status: 500 } },
    { name: '501', answer: { status: 501 }, expected: { outcome: 'retry', status: 501 } },
    {
      name: '503 with Retry-After',
      answer: { status: 503, headers: { 'retry-after': '2' } },
      expected: { outcome: 'retry', status: 503, retryAfterMs: 2_000 },
    },
    {
      name: '301 (not followed)',
      answer: { status: 301, headers: { location: 'https://elsewhere.example/' } },
      expected: {
        outcome: 'discard',
        status: 301,
        reason: expect.stringContaining('redirects are not followed'),
      },
    },
    {
      name: 'connection reset',
      answer: 'reset',
      expected: {
        outcome: 'retry',
        reason: expect.stringMatching(/connection error|socket hang up|ECONNRESET/),
      },
    },
    {
      name: 'hang',
      answer: 'hang',
      expected: { outcome: 'retry', reason: expect.stringMatching(/tim(e|ed) ?out/i) },
    },
  ];

  it.each(matrix)('$name', async ({ answer, expected }) => {
    vendor.answer = () => answer;
    const [result] = await adapter.deliver({ settings, messages: [track('m-matrix')] });
    expect(result).toMatchObject({ messageId: 'm-matrix', ...expected });
    expect(vendor.requests.length).toBeGreaterThanOrEqual(1);
    // A redirect is reported, never followed to its target.
    expect(vendor.requests.every((request) => request.host === 'api2.amplitude.com')).toBe(true);
  });

  it('a refused connection is a retry', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refusedRuntime = new SegmentActionsRuntime({
      egressGuard: vendor.egressGuard,
      ca: vendor.ca,
      portMap: { 443: closedPort },
      requestTimeoutMs: 1_000,
    });
    try {
      const [result] = await new SegmentActionsDeliveryAdapter(amplitude, refusedRuntime).deliver({
        settings,
        messages: [track('m-refused')],
      });
      expect(result).toMatchObject({ outcome: 'retry', reason: expect.stringContaining('ECONNREFUSED') });
    } finally {
      refusedRuntime.close();
    }
  });

  it('refuses a target the egress policy denies, without connecting', async () => {
    const denying = new SegmentActionsRuntime({
      egressGuard: new EgressGuard(parseEgressPolicy('public', ''), async () => [
        { address: '127.0.0.1', family: 4 },
      ]),
      ca: vendor.ca,
      portMap: vendor.portMap,
    });
    try {
      const [result] = await new SegmentActionsDeliveryAdapter(amplitude, denying).deliver({
        settings,
        messages: [track('m-denied')],
      });
      expect(result).toMatchObject({ outcome: 'discard', cause: 'egress_denied' });
      expect(vendor.requests).toHaveLength(0);
    } finally {
      denying.close();
    }
  });

  it('filters what no subscription takes, sending nothing', async () => {
    const onlyIdentify = Object.freeze({
      ...settings,
      subscriptions: [
        {
          subscribe: 'type = "identify"',
          partnerAction: 'identifyUser',
          mapping: amplitude.presets.find((preset) => preset.partnerAction === 'identifyUser')!.mapping,
        },
      ],
    });
    const [result] = await adapter.deliver({ settings: onlyIdentify, messages: [track('m-filtered')] });
    expect(result).toMatchObject({ messageId: 'm-filtered', outcome: 'filtered' });
    expect(vendor.requests).toHaveLength(0);
  });

  it('discards every message of a misconfigured destination with the reason, never quoting secrets', async () => {
    const results = await adapter.deliver({
      settings: Object.freeze({
        apiKey: 'k',
        secretKey: 's',
        subscriptions: [{ subscribe: 'type = "track" and (', partnerAction: 'logEventV2', mapping: {} }],
      }),
      messages: [track('a'), track('b')],
    });
    expect(results.map((result) => result.outcome)).toEqual(['discard', 'discard']);
    expect(results[0]).toMatchObject({ reason: expect.stringContaining('subscriptions[0].subscribe') });
    const missing = await adapter.deliver({
      settings: Object.freeze({ secretKey: 'top-secret' }),
      messages: [track('c')],
    });
    expect(missing[0]).toMatchObject({
      outcome: 'discard',
      reason: expect.stringContaining('settings refused'),
    });
    expect(JSON.stringify(missing)).not.toContain('top-secret');
  });

  it('keeps one result per message, in order, and does not grow the action response lists', async () => {
    vendor.answer = () => ({ status: 200, body: '{}' });
    const messages = Array.from({ length: 20 }, (_, index) => track(`order-${index}`));
    const results = await adapter.deliver({ settings, messages });
    expect(results.map((result) => result.messageId)).toEqual(messages.map((message) => message.messageId));
    expect(results.every((result) => result.outcome === 'delivered')).toBe(true);
    const destination = runtime.destination(amplitude) as unknown as { responses: unknown[] };
    expect(destination.responses).toHaveLength(0);
  });

  describe('onBatch (Mixpanel (Actions) trackEvent, enable_batching)', () => {
    const mixpanel = findActionsDestination('actions-mixpanel')!;
    const mixpanelSettings = Object.freeze({ projectToken: 'mp-token', apiSecret: 'mp-secret' });

    it('sends the messages a batching subscription takes in one request, with an outcome per message', async () => {
      vendor.answer = () => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"code":200,"num_records_imported":3,"status":"OK"}',
      });
      const batchAdapter = new SegmentActionsDeliveryAdapter(mixpanel, runtime);
      const messages = [track('b-1'), track('b-2'), track('b-3')];
      const results = await batchAdapter.deliver({ settings: mixpanelSettings, messages });
      expect(results).toEqual(
        messages.map((message) => ({ messageId: message.messageId, outcome: 'delivered' })),
      );
      const imports = vendor.requests.filter((request) => request.path.startsWith('/import'));
      expect(imports).toHaveLength(1);
      expect(
        JSON.parse(imports[0]!.body).map(
          (event: { properties: { $insert_id: string } }) => event.properties.$insert_id,
        ),
      ).toEqual(['b-1', 'b-2', 'b-3']);
    });

    it('a failed batch request gives every message of it the failure', async () => {
      vendor.answer = () => ({ status: 503, headers: { 'retry-after': '3' }, body: 'busy' });
      const batchAdapter = new SegmentActionsDeliveryAdapter(mixpanel, runtime);
      const results = await batchAdapter.deliver({
        settings: mixpanelSettings,
        messages: [track('c-1'), track('c-2')],
      });
      expect(results.map((result) => [result.messageId, result.outcome])).toEqual([
        ['c-1', 'retry'],
        ['c-2', 'retry'],
      ]);
    });
  });
});
