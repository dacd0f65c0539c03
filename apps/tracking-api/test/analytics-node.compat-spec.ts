// Drives the real @segment/analytics-node 3.1, unchanged, against the tracking API over loopback HTTP,
// then reads what it sent back out of the event log (docs/tracking-api.md §4.2, §6.2, §7).
import { Analytics } from '@segment/analytics-node';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  RFC3339_UTC_MILLIS,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

const NODE_LIBRARY = { name: '@segment/analytics-node', version: '3.1.0' };

describe('@segment/analytics-node 3.1 against the tracking API', () => {
  let t: TributaryTestInstance;
  let source: TestSource;

  beforeAll(async () => {
    t = await startTributary();
    source = await createWorkspaceAndSource(t, { catalog: 'node' });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('sends all six types with Basic auth to /v1/batch; each is stored with every field as the spec says', async () => {
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      path: '/v1/batch',
      flushAt: 3,
      maxEventsInBatch: 3,
      flushInterval: 200,
      maxRetries: 0,
      httpRequestTimeout: 10_000,
    });
    const requests: Array<{ url: string; headers: Record<string, string>; body: any }> = [];
    const statuses: number[] = [];
    const errors: unknown[] = [];
    analytics.on('http_request', (request) =>
      requests.push({ url: request.url, headers: request.headers, body: JSON.parse(request.body) }),
    );
    analytics.on('http_response', (response) => statuses.push(response.status));
    analytics.on('error', (error) => errors.push(error));

    const pastTimestamp = new Date('2026-01-02T03:04:05.678Z');
    analytics.identify({
      userId: 'user-1',
      traits: { email: 'ada@example.com', plan: null },
      messageId: 'node-identify-1',
    });
    analytics.track({
      anonymousId: 'anon-1',
      event: 'Order Completed',
      properties: { revenue: 42.5, items: [{ sku: 'a' }] },
      integrations: { All: false, Mixpanel: true },
      context: { ip: '203.0.113.9' },
      timestamp: pastTimestamp,
      messageId: 'node-track-1',
    });
    analytics.page({
      userId: 'user-1',
      category: 'Docs',
      name: 'Getting Started',
      properties: { path: '/docs' },
      messageId: 'node-page-1',
    });
    analytics.screen({
      userId: 'user-1',
      name: 'Home',
      properties: { variant: 'b' },
      messageId: 'node-screen-1',
    });
    analytics.group({
      userId: 'user-1',
      groupId: 'group-1',
      traits: { name: 'Acme' },
      messageId: 'node-group-1',
    });
    analytics.alias({ userId: 'user-1', previousId: 'anon-1' });
    const before = Date.now();
    await analytics.closeAndFlush({ timeout: 15_000 });
    const after = Date.now();

    expect(errors).toEqual([]);
    expect(requests.length).toBeGreaterThanOrEqual(2); // flushAt 3: six events need at least two batches
    expect(statuses).toEqual(requests.map(() => 200));
    for (const request of requests) {
      expect(request.url).toBe(`${t.baseUrl}/v1/batch`);
      expect(request.headers.Authorization).toBe(
        `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
      );
      expect(request.body.writeKey).toBe(source.writeKey);
    }
    const sent = new Map<string, { event: any; sentAt: string }>();
    for (const request of requests) {
      for (const event of request.body.batch)
        sent.set(event.messageId, { event, sentAt: request.body.sentAt });
    }
    expect(sent.size).toBe(6);
    const aliasSent = [...sent.values()].find(({ event }) => event.type === 'alias')!;
    expect(aliasSent.event.messageId).toMatch(/^node-next-\d+-[0-9a-f-]{36}$/);
    expect(aliasSent.event._metadata).toBeDefined(); // the client sends it; the log must not keep it

    const stored = await readSourceMessages(t, source);
    expect([...stored.keys()].sort()).toEqual([...sent.keys()].sort());

    for (const [messageId, { event, sentAt }] of sent) {
      const message = stored.get(messageId)!;
      expect(message.sourceId).toBe(source.sourceId);
      expect(message.workspaceId).toBe(source.workspaceId);
      const payload = message.payload;
      expect(payload.type).toBe(event.type);
      expect(payload.messageId).toBe(messageId);
      expect(payload.context.library).toEqual(NODE_LIBRARY);
      expect(payload).not.toHaveProperty('_metadata');
      expect(payload).not.toHaveProperty('writeKey');
      for (const field of ['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt']) {
        expect(payload[field]).toMatch(RFC3339_UTC_MILLIS);
      }
      expect(payload.originalTimestamp).toBe(new Date(event.timestamp).toISOString());
      expect(payload.sentAt).toBe(new Date(sentAt).toISOString());
      const receivedAt = Date.parse(payload.receivedAt);
      expect(receivedAt).toBeGreaterThanOrEqual(before - 1000);
      expect(receivedAt).toBeLessThanOrEqual(after);
      // timestamp = receivedAt − (sentAt − originalTimestamp) (docs/tracking-api.md §7.2)
      expect(Date.parse(payload.timestamp)).toBe(
        receivedAt - (Date.parse(payload.sentAt) - Date.parse(payload.originalTimestamp)),
      );
    }

    const byType = (type: string) =>
      [...stored.values()].find((message) => message.payload.type === type)!.payload;
    expect(byType('identify')).toMatchObject({
      userId: 'user-1',
      traits: { email: 'ada@example.com', plan: null },
      integrations: {},
    });
    expect(byType('identify')).not.toHaveProperty('anonymousId');

    const track = byType('track');
    expect(track).toMatchObject({
      anonymousId: 'anon-1',
      event: 'Order Completed',
      properties: { revenue: 42.5, items: [{ sku: 'a' }] },
      integrations: { All: false, Mixpanel: true },
      context: { ip: '203.0.113.9', library: NODE_LIBRARY },
      originalTimestamp: '2026-01-02T03:04:05.678Z',
    });
    expect(track).not.toHaveProperty('userId');
    // A past event time stays in the past after the skew correction: it moves by the transit time only.
    expect(Date.parse(track.timestamp) - pastTimestamp.getTime()).toBeGreaterThanOrEqual(0);
    expect(Date.parse(track.timestamp) - pastTimestamp.getTime()).toBeLessThan(after - before + 1000);

    // Node copies the page category into properties.category (docs/tracking-api.md §6.2); both are kept.
    expect(byType('page')).toMatchObject({
      userId: 'user-1',
      name: 'Getting Started',
      category: 'Docs',
      properties: { path: '/docs', category: 'Docs' },
    });
    expect(byType('screen')).toMatchObject({ userId: 'user-1', name: 'Home', properties: { variant: 'b' } });
    expect(byType('group')).toMatchObject({ userId: 'user-1', groupId: 'group-1', traits: { name: 'Acme' } });
    expect(byType('alias')).toMatchObject({ userId: 'user-1', previousId: 'anon-1' });
  });
});
