// Segment Actions destinations end to end through the real HTTP APIs: analytics-node sends to the
// tracking API, destinations are created with the Config API, and the router delivers through
// Segment's own Actions Amplitude and Mixpanel (Actions) code to loopback fakes of api2.amplitude.com and
// api.mixpanel.com (TLS with a test CA; the egress guard's resolver answers loopback for every name).
import { Analytics } from '@segment/analytics-node';
import {
  ActionsLane,
  createDeliveryAdapterRegistry,
  findActionsDestination,
  type DeliveryAdapterRegistry,
} from '@tributary/destinations';
import { DestinationDeliveries } from '../../apps/router/src/destination-consumers/destination-deliveries.service';
import { DestinationsController } from '../../apps/config-api/src/destinations/destinations.controller';
import {
  startFakeVendor,
  type FakeAnswer,
  type FakeVendor,
  type RecordedRequest,
} from '../support/fake-vendor.kit';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../support/tracking-e2e.kit';
import { configApi } from '../support/config-api.client';
import {
  createDestination,
  deliveryMetrics,
  destinationName,
  POLLING_ENVIRONMENT,
  waitForSettled,
} from '../../apps/router/test/router-e2e.kit';

jest.setTimeout(90_000);

describe('Segment Actions destinations end to end', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let vendor: FakeVendor;
  let registry: DeliveryAdapterRegistry;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    t = await startTributary({ environment: { ...POLLING_ENVIRONMENT, RETRY_WINDOW: '3s' } });
    // The router's adapters, rebuilt to trust the fake vendor's CA and to reach it on loopback: the
    // only difference from production is where the vendors' names resolve and which CA signs them.
    const deliveries = t.app.get(DestinationDeliveries) as unknown as { registry: DeliveryAdapterRegistry };
    await deliveries.registry.close();
    registry = createDeliveryAdapterRegistry({
      egressGuard: vendor.egressGuard,
      segmentActions: { ca: vendor.ca, portMap: vendor.portMap, requestTimeoutMs: 2_000 },
    });
    deliveries.registry = registry;
    // The Config API's authentication tests, likewise pointed at the fake vendor.
    const controller = t.app.get(DestinationsController) as unknown as { actionsLane: ActionsLane };
    await controller.actionsLane.close();
    controller.actionsLane = new ActionsLane({
      egressGuard: vendor.egressGuard,
      ca: vendor.ca,
      portMap: vendor.portMap,
      workers: 1,
    });
    source = await createWorkspaceAndSource(t);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await vendor?.close();
  });

  const requestsTo = (host: string, messageId?: string): RecordedRequest[] =>
    vendor.requests.filter(
      (request) => request.host === host && (messageId === undefined || request.body.includes(messageId)),
    );

  async function send(calls: (analytics: Analytics) => void): Promise<void> {
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      path: '/v1/batch',
      flushAt: 10,
      flushInterval: 50,
      maxRetries: 0,
    });
    calls(analytics);
    await analytics.closeAndFlush({ timeout: 10_000 });
  }

  it('creates Actions Amplitude and Mixpanel (Actions) with the Config API, with their presets as default subscriptions', async () => {
    const amplitude = await createDestination(t, source, {
      slug: 'actions-amplitude',
      enabled: true,
      config: { apiKey: 'amp-api-key', secretKey: 'amp-secret-key' },
    });
    const config = Object.fromEntries(
      (amplitude.destination ?? amplitude).config.map((entry: any) => [
        entry.name.split('/').pop(),
        entry.value,
      ]),
    );
    expect(config.apiKey).not.toBe('amp-api-key'); // a password setting is masked
    expect(config.subscriptions).toEqual(findActionsDestination('actions-amplitude')!.presets);
    await createDestination(t, source, {
      slug: 'actions-mixpanel',
      enabled: true,
      config: { projectToken: 'mp-project-token', apiSecret: 'mp-api-secret' },
    });
  });

  it('delivers what the Amplitude and Mixpanel APIs expect', async () => {
    vendor.answer = () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"code":200,"status":1}',
    });
    await send((analytics) => {
      analytics.track({
        userId: 'user-1',
        event: 'Song Played',
        properties: { genre: 'jazz' },
        messageId: 'e2e-track-1',
      });
      analytics.identify({
        userId: 'user-1',
        traits: { email: 'ada@example.com', plan: 'pro' },
        messageId: 'e2e-identify-1',
      });
    });
    const [track] = await pollUntil('Amplitude gets the track', 30_000, async () => {
      const found = requestsTo('api2.amplitude.com', '"Song Played"');
      return found.length > 0 ? found : undefined;
    }).then((result) => result.value);
    expect(track!.path).toBe('/2/httpapi');
    const amplitudeBody = JSON.parse(track!.body);
    expect(amplitudeBody).toMatchObject({
      api_key: 'amp-api-key',
      events: [{ event_type: 'Song Played', user_id: 'user-1', event_properties: { genre: 'jazz' } }],
    });
    const identify = await pollUntil('Amplitude gets the identify', 30_000, async () => {
      const found = requestsTo('api2.amplitude.com').find((request) => request.path === '/identify');
      return found;
    }).then((result) => result.value);
    const identification = JSON.parse(new URLSearchParams(identify.body).get('identification') ?? '{}');
    expect(identification).toMatchObject({
      user_id: 'user-1',
      user_properties: { email: 'ada@example.com', plan: 'pro' },
    });

    const mixpanelTrack = await pollUntil('Mixpanel gets the track', 30_000, async () =>
      requestsTo('api.mixpanel.com', '"Song Played"').find((request) => request.path.startsWith('/import')),
    ).then((result) => result.value);
    expect(mixpanelTrack.headers['authorization']).toBe(
      `Basic ${Buffer.from('mp-api-secret:').toString('base64')}`,
    );
    const mixpanelEvents = JSON.parse(mixpanelTrack.body);
    expect(mixpanelEvents[0]).toMatchObject({
      event: 'Song Played',
      properties: {
        distinct_id: 'user-1',
        $insert_id: 'e2e-track-1',
        genre: 'jazz',
      },
    });

    const metrics = await waitForSettled(t, source, 'actions-amplitude', 2);
    expect(metrics.counts).toMatchObject({ delivered: 2, discarded: 0, dead_lettered: 0 });
  });

  it('counts a message no subscription takes as filtered', async () => {
    const before = (await deliveryMetrics(t, source, 'actions-amplitude')).counts;
    const requestsBefore = requestsTo('api2.amplitude.com').length;
    await send((analytics) =>
      analytics.alias({ userId: 'user-1', previousId: 'anon-1', messageId: 'e2e-alias-1' }),
    );
    await pollUntil('the alias is filtered', 30_000, async () => {
      const counts = (await deliveryMetrics(t, source, 'actions-amplitude')).counts;
      return counts.filtered > before.filtered ? counts : undefined;
    });
    // Amplitude's presets take no alias: nothing was sent for it.
    expect(requestsTo('api2.amplitude.com').length).toBe(requestsBefore);
  });

  it('a 503 then a 200 delivers once', async () => {
    let failures = 0;
    vendor.answer = (request): FakeAnswer => {
      if (request.host === 'api2.amplitude.com' && request.body.includes('"Retry Me"') && failures === 0) {
        failures += 1;
        return { status: 503, headers: { 'retry-after': '1' }, body: 'busy' };
      }
      return { status: 200, headers: { 'content-type': 'application/json' }, body: '{"code":200}' };
    };
    await send((analytics) =>
      analytics.track({ userId: 'user-2', event: 'Retry Me', messageId: 'e2e-retry-1' }),
    );
    await pollUntil('the retried track is delivered', 30_000, async () => {
      const answered = requestsTo('api2.amplitude.com', '"Retry Me"');
      return answered.length >= 2 ? answered : undefined;
    });
    const metrics = await deliveryMetrics(t, source, 'actions-amplitude');
    expect(metrics.counts.retried).toBeGreaterThanOrEqual(1);
    // Two attempts, one accepted: the message reached Amplitude once.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(requestsTo('api2.amplitude.com', '"Retry Me"')).toHaveLength(2);
  });

  it('a persistent 500 dead-letters after RETRY_WINDOW, and a redrive delivers it', async () => {
    vendor.answer = (request) =>
      request.body.includes('"Dead Letter Me"') && request.host === 'api2.amplitude.com'
        ? { status: 500, body: 'down' }
        : { status: 200, headers: { 'content-type': 'application/json' }, body: '{"code":200}' };
    await send((analytics) =>
      analytics.track({ userId: 'user-3', event: 'Dead Letter Me', messageId: 'e2e-dead-1' }),
    );
    const deadLettersPath = `${destinationName(source, 'actions-amplitude')}/dead-letters`;
    const letters = await pollUntil('the message is dead-lettered', 40_000, async () => {
      const response = await configApi(t, 'GET', deadLettersPath);
      return response.body.dead_letters?.length > 0 ? response.body.dead_letters : undefined;
    }).then((result) => result.value);
    expect(letters[0]).toMatchObject({
      message_id: 'e2e-dead-1',
      reason: expect.stringMatching(/^retries exhausted after \d+ attempts: HTTP 500/),
    });
    vendor.answer = () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"code":200}',
    });
    const attempts = requestsTo('api2.amplitude.com', '"Dead Letter Me"').length;
    const redrive = await configApi(t, 'POST', `${deadLettersPath}:redrive`, {});
    expect(redrive.status).toBe(200);
    await pollUntil('the redriven message reaches Amplitude', 30_000, async () =>
      requestsTo('api2.amplitude.com', '"Dead Letter Me"').length > attempts ? true : undefined,
    );
    await pollUntil('the dead letter leaves the list', 30_000, async () => {
      const response = await configApi(t, 'GET', deadLettersPath);
      return response.body.dead_letters.length === 0 ? true : undefined;
    });
  });

  it('refuses subscriptions that cannot work, and retired catalog entries, with 400 code 3', async () => {
    const bad = await configApi(t, 'PATCH', destinationName(source, 'actions-amplitude'), {
      destination: {
        config: [
          {
            name: `${destinationName(source, 'actions-amplitude')}/config/subscriptions`,
            value: [{ subscribe: 'type = ', partnerAction: 'logEventV2', mapping: {} }],
          },
        ],
      },
      update_mask: { paths: ['destination.config'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 3,
      message: expect.stringContaining('subscriptions"[0].subscribe: not valid FQL'),
    });
    const retired = await configApi(
      t,
      'POST',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
      {
        destination: { name: destinationName(source, 'amplitude'), enabled: false, config: [] },
      },
    );
    expect(retired.status).toBe(400);
    expect(retired.body).toMatchObject({
      code: 3,
      message: expect.stringContaining('use "actions-amplitude" (Actions Amplitude) instead'),
    });
  });

  it('refuses a mapping that would expand per message, naming the field, with 400 code 3', async () => {
    let shape: Record<string, unknown> = { leaf: { '@path': '$.event' } };
    for (let level = 0; level < 4; level++) {
      shape = { v: { '@arrayPath': [{ '@literal': [...Array(10).keys()] }, shape] } };
    }
    const logEvent = findActionsDestination('actions-amplitude')!.presets.find(
      (preset) => preset.partnerAction === 'logEventV2',
    )!;
    const bomb = await configApi(t, 'PATCH', destinationName(source, 'actions-amplitude'), {
      destination: {
        config: [
          {
            name: `${destinationName(source, 'actions-amplitude')}/config/subscriptions`,
            value: [{ ...logEvent, mapping: { ...logEvent.mapping, event_properties: shape } }],
          },
        ],
      },
      update_mask: { paths: ['destination.config'] },
    });
    expect(bomb.status).toBe(400);
    expect(bomb.body).toMatchObject({
      code: 3,
      message: expect.stringMatching(
        /subscriptions"\[0\]\.mapping\.event_properties\.v\.@arrayPath.*: @arrayPath nested more than 2 deep/,
      ),
    });
  });

  it("POST .../destinations/{dst}:test runs the destination's authentication test with its stored keys", async () => {
    const path = `${destinationName(source, 'actions-amplitude')}:test`;
    vendor.answer = (request) =>
      request.path.startsWith('/api/2/usersearch')
        ? { status: 200, headers: { 'content-type': 'application/json' }, body: '{"matches":[]}' }
        : { status: 404 };
    const ok = await configApi(t, 'POST', path, {});
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'OK' });
    const search = vendor.requests.filter((request) => request.path.startsWith('/api/2/usersearch')).pop()!;
    expect(search.host).toBe('amplitude.com');
    expect(Buffer.from(search.headers['authorization']!.replace(/^Basic /, ''), 'base64').toString()).toBe(
      'amp-api-key:amp-secret-key',
    );

    vendor.answer = () => ({ status: 401, body: 'amp-api-key is not a valid key' });
    const failed = await configApi(t, 'POST', path, {});
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ status: 'FAILED', message: expect.stringContaining('401') });
    expect(JSON.stringify(failed.body)).not.toContain('amp-api-key');

    // One test at a time per workspace: a second while one waits on the vendor is refused.
    vendor.answer = () => 'hang';
    const [first, second] = await Promise.all([
      configApi(t, 'POST', path, {}),
      new Promise((resolve) => setTimeout(resolve, 300)).then(() => configApi(t, 'POST', path, {})),
    ]);
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: 8, message: expect.stringContaining('under way') });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'FAILED' });

    const webhooks = await configApi(
      t,
      'POST',
      `workspaces/${source.workspaceSlug}/sources/${source.sourceSlug}/destinations`,
      {
        destination: {
          name: destinationName(source, 'webhooks'),
          config: [{ name: 'url', value: 'https://hooks.example.com/x' }],
        },
      },
    );
    expect(webhooks.status).toBe(200);
    const unsupported = await configApi(t, 'POST', `${destinationName(source, 'webhooks')}:test`, {});
    expect(unsupported.status).toBe(400);
    expect(unsupported.body).toMatchObject({
      code: 3,
      message: expect.stringContaining('no authentication test'),
    });
  });
});
