// A DELETE_ONLY regulation forwarded to Segment Actions destinations (docs/regulations.md §4): Actions
// Amplitude, whose definition has `onDelete`, calls its vendor's deletion API (a loopback fake of
// amplitude.com, TLS with a test CA); Mixpanel (Actions), which has none, is reported not supported
// and does not fail the regulation.
import { createDeliveryAdapterRegistry, type DeliveryAdapterRegistry } from '@tributary/destinations';
import { DestinationDeliveries } from '../../apps/router/src/destination-consumers/destination-deliveries.service';
import {
  createDestination,
  destinationName,
  POLLING_ENVIRONMENT,
} from '../../apps/router/test/router-e2e.kit';
import { configApi } from '../support/config-api.client';
import { startFakeVendor, type FakeVendor } from '../support/fake-vendor.kit';
import { createWorkspaceAndSource, pollUntil, type TestSource } from '../support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';

jest.setTimeout(90_000);

describe('regulations forwarded to Segment Actions destinations', () => {
  let t: TributaryTestInstance;
  let source: TestSource;
  let vendor: FakeVendor;

  beforeAll(async () => {
    vendor = await startFakeVendor();
    t = await startTributary({ environment: POLLING_ENVIRONMENT });
    // The router's adapters, rebuilt to trust the fake vendor's CA and to reach it on loopback.
    const deliveries = t.app.get(DestinationDeliveries) as unknown as { registry: DeliveryAdapterRegistry };
    await deliveries.registry.close();
    deliveries.registry = createDeliveryAdapterRegistry({
      egressGuard: vendor.egressGuard,
      segmentActions: { ca: vendor.ca, portMap: vendor.portMap, requestTimeoutMs: 2_000 },
    });
    source = await createWorkspaceAndSource(t);
    await createDestination(t, source, {
      slug: 'actions-amplitude',
      enabled: true,
      config: { apiKey: 'amp-api-key', secretKey: 'amp-secret-key' },
    });
    await createDestination(t, source, {
      slug: 'actions-mixpanel',
      enabled: true,
      config: { projectToken: 'mp-project-token', apiSecret: 'mp-api-secret' },
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
    await vendor?.close();
  });

  async function untilFinal(name: string): Promise<any> {
    const { value } = await pollUntil('the regulation is final', 45_000, async () => {
      const response = await configApi(t, 'GET', name);
      return response.body.finished_at ? response.body : undefined;
    });
    return value;
  }

  it("calls Amplitude's deletion API with the destination's settings, once per user; Mixpanel is not supported", async () => {
    const created = await configApi(t, 'POST', `workspaces/${source.workspaceSlug}/regulations`, {
      regulation_type: 'Delete_Only',
      attributes: { name: 'userId', values: ['gone-1', 'gone-2'] },
    });
    expect(created.status).toBe(200);
    const final = await untilFinal(created.body.name);

    expect(final).toMatchObject({ status: 'finished', overall_status: 'finished' });
    const statuses = Object.fromEntries(
      final.stream_status[0].destination_status.map((entry: any) => [entry.id, entry]),
    );
    expect(statuses[destinationName(source, 'actions-amplitude')]).toMatchObject({
      status: 'finished',
      err_string: '',
    });
    expect(statuses[destinationName(source, 'actions-mixpanel')]).toMatchObject({
      status: 'not_supported',
      err_string: 'the destination has no deletion',
    });

    const deletions = vendor.requests.filter((request) => request.path.includes('deletions'));
    expect(deletions.map((request) => JSON.parse(request.body))).toEqual([
      { user_ids: ['gone-1'], requester: 'segment' },
      { user_ids: ['gone-2'], requester: 'segment' },
    ]);
    const basic = `Basic ${Buffer.from('amp-api-key:amp-secret-key').toString('base64')}`;
    for (const request of deletions) {
      expect(request).toMatchObject({ host: 'amplitude.com', method: 'POST' });
      expect(request.headers['authorization']).toBe(basic);
    }
  });

  it('retries a vendor that fails, then records the destination failed with its answer; the regulation fails', async () => {
    vendor.answer = (request) =>
      request.path.includes('deletions') ? { status: 503, body: 'down for maintenance' } : { status: 200 };
    const created = await configApi(t, 'POST', `workspaces/${source.workspaceSlug}/regulations`, {
      regulation_type: 'Delete_Only',
      attributes: { name: 'userId', values: ['gone-3'] },
    });
    const started = Date.now();
    const final = await untilFinal(created.body.name);
    // Amplitude was the only destination that could delete, and it failed: the regulation failed.
    expect(final).toMatchObject({ status: 'failed' });
    const amplitude = final.stream_status[0].destination_status.find(
      (entry: any) => entry.id === destinationName(source, 'actions-amplitude'),
    );
    expect(amplitude).toMatchObject({
      status: 'failed',
      err_string: expect.stringMatching(/after 3 attempts/),
    });
    const tries = vendor.requests.filter(
      (request) => request.path.includes('deletions') && request.body.includes('gone-3'),
    );
    // actions-core retries each call itself; three tries of Tributary's, within 30 s.
    expect(tries.length).toBeGreaterThanOrEqual(3);
    expect(Date.now() - started).toBeLessThan(40_000);
  });
});
