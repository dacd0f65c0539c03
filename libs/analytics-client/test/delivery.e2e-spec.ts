// The client against the real tracking API, started in this process: each message is read back from the
// instance's event log and checked field by field.
import { randomUUID } from 'node:crypto';
import {
  basicAuth,
  createWorkspaceAndSource,
  readSourceMessages,
  RFC3339_UTC_MILLIS,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { Analytics, AnalyticsDeliveryError, LIBRARY_NAME, VERSION } from '../src';
import { errorRecorder, FAST, startRecordingProxy, UUID_V4 } from './client-e2e.kit';

const library = { name: LIBRARY_NAME, version: VERSION };

describe('analytics-client against the real tracking API', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  describe('the six calls, every field stored', () => {
    let source: TestSource;
    let stored: Awaited<ReturnType<typeof readSourceMessages>>;
    const ids = Object.fromEntries(
      ['identify', 'track', 'page', 'screen', 'group', 'alias'].map((type) => [
        type,
        `${type}-${randomUUID()}`,
      ]),
    );
    const eventTime = new Date(Date.now() - 60_000);
    const sent: Record<string, string> = {};
    let generatedId: string;
    let before: number;
    let after: number;

    beforeAll(async () => {
      source = await createWorkspaceAndSource(t);
      const { reports, onError } = errorRecorder();
      const analytics = new Analytics({ writeKey: source.writeKey, host: t.baseUrl, ...FAST, onError });
      const common = {
        context: { ip: '203.0.113.7', locale: 'fr-FR' },
        integrations: { All: false, Webhooks: true },
        timestamp: eventTime,
      };
      before = Date.now();
      for (const result of await Promise.all([
        analytics.identify({
          userId: 'user-1',
          traits: { email: 'a@example.com', plan: 'pro', nested: { n: null } },
          messageId: ids.identify,
          ...common,
        }),
        analytics.track({
          userId: 'user-1',
          anonymousId: 'anon-1',
          event: 'Order Completed',
          properties: { total: 12.5, items: ['a', 'b'] },
          messageId: ids.track,
          ...common,
        }),
        analytics.page({
          anonymousId: 'anon-1',
          name: 'Pricing',
          category: 'Marketing',
          properties: { path: '/pricing' },
          messageId: ids.page,
          ...common,
        }),
        analytics.screen({
          userId: 42,
          name: 'Home',
          properties: { tab: 1 },
          messageId: ids.screen,
          ...common,
        }),
        analytics.group({
          userId: 'user-1',
          groupId: 'org-9',
          traits: { employees: 30 },
          messageId: ids.group,
          ...common,
        }),
        analytics.alias({ userId: 'user-1', previousId: 'anon-1', messageId: ids.alias, ...common }),
      ])) {
        sent[result.message.type] = result.messageId;
        expect(result.status).toBe('queued');
      }
      const minimal = await analytics.track({ userId: 'user-2', event: 'Minimal' });
      generatedId = minimal.messageId;
      await analytics.close();
      after = Date.now();
      expect(reports).toEqual([]);
      stored = await readSourceMessages(t, source);
    });

    it('stores all seven under the right workspace and source, with the caller messageIds', () => {
      expect(sent).toEqual(ids);
      expect([...stored.keys()].sort()).toEqual([...Object.values(ids), generatedId].sort());
      for (const message of stored.values()) {
        expect({ workspaceId: message.workspaceId, sourceId: message.sourceId }).toEqual({
          workspaceId: source.workspaceId,
          sourceId: source.sourceId,
        });
      }
    });

    it('stores each type with its fields, context (with the library), integrations and timestamps', () => {
      const common = {
        context: { ip: '203.0.113.7', locale: 'fr-FR', library },
        integrations: { All: false, Webhooks: true },
        originalTimestamp: eventTime.toISOString(),
      };
      expect(stored.get(ids.identify)!.payload).toMatchObject({
        type: 'identify',
        messageId: ids.identify,
        userId: 'user-1',
        traits: { email: 'a@example.com', plan: 'pro', nested: { n: null } },
        ...common,
      });
      expect(stored.get(ids.track)!.payload).toMatchObject({
        type: 'track',
        userId: 'user-1',
        anonymousId: 'anon-1',
        event: 'Order Completed',
        properties: { total: 12.5, items: ['a', 'b'] },
        ...common,
      });
      expect(stored.get(ids.page)!.payload).toMatchObject({
        type: 'page',
        anonymousId: 'anon-1',
        name: 'Pricing',
        category: 'Marketing',
        properties: { path: '/pricing' },
        ...common,
      });
      expect(stored.get(ids.page)!.payload).not.toHaveProperty('userId');
      expect(stored.get(ids.screen)!.payload).toMatchObject({
        type: 'screen',
        userId: '42',
        name: 'Home',
        properties: { tab: 1 },
        ...common,
      });
      expect(stored.get(ids.group)!.payload).toMatchObject({
        type: 'group',
        userId: 'user-1',
        groupId: 'org-9',
        traits: { employees: 30 },
        ...common,
      });
      expect(stored.get(ids.alias)!.payload).toMatchObject({
        type: 'alias',
        userId: 'user-1',
        previousId: 'anon-1',
        ...common,
      });
    });

    it('gives a UUIDv4 messageId and the call time as timestamp when none is passed', () => {
      expect(generatedId).toMatch(UUID_V4);
      const payload = stored.get(generatedId)!.payload;
      expect(payload).toMatchObject({
        type: 'track',
        event: 'Minimal',
        userId: 'user-2',
        properties: {},
        integrations: {},
        context: { library },
      });
      const original = Date.parse(payload.originalTimestamp);
      expect(original).toBeGreaterThanOrEqual(before);
      expect(original).toBeLessThanOrEqual(after);
    });

    it('sends sentAt, so the server computes timestamp = receivedAt − (sentAt − originalTimestamp)', () => {
      for (const { payload } of stored.values()) {
        for (const field of ['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt'])
          expect(payload[field]).toMatch(RFC3339_UTC_MILLIS);
        const sentAt = Date.parse(payload.sentAt);
        expect(sentAt).toBeGreaterThanOrEqual(before);
        expect(sentAt).toBeLessThanOrEqual(after);
        expect(Date.parse(payload.timestamp)).toBe(
          Date.parse(payload.receivedAt) - (sentAt - Date.parse(payload.originalTimestamp)),
        );
      }
    });
  });

  it('sends timestamps with offsets as written; the server reads the same instant', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST });
    const cases = {
      minusFive: '2026-01-02T03:04:05.678-05:00',
      plusFiveThirty: '2026-01-02T03:04:05.678+05:30',
      utcOffset: '2026-01-02T03:04:05+00:00',
      zulu: '2026-01-02T03:04:05.678Z',
    };
    const sentIds: Record<string, string> = {};
    for (const [name, timestamp] of Object.entries(cases)) {
      sentIds[name] = (await analytics.track({ userId: 'u', event: name, timestamp })).messageId;
    }
    await analytics.close();
    await proxy.close();
    const onTheWire = proxy.bodies().flatMap((body) => body.batch);
    expect(Object.fromEntries(onTheWire.map((message) => [message.event, message.timestamp]))).toEqual(cases);
    const stored = await readSourceMessages(t, source);
    for (const [name, timestamp] of Object.entries(cases)) {
      expect(stored.get(sentIds[name])!.payload.originalTimestamp).toBe(new Date(timestamp).toISOString());
    }
    expect(stored.get(sentIds.minusFive)!.payload.originalTimestamp).toBe('2026-01-02T08:04:05.678Z');
  });

  it('authenticates twice: Basic writeKey: header and writeKey in the {batch, sentAt, writeKey} body', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST });
    await analytics.track({ userId: 'u', event: 'auth' });
    await analytics.close();
    await proxy.close();
    expect(proxy.requests).toHaveLength(1);
    const [request] = proxy.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/v1/batch', status: 200 });
    expect(request.headers.authorization).toBe(basicAuth(source.writeKey));
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe(`tributary-analytics-client/${VERSION}`);
    const body = JSON.parse(request.jsonBody);
    expect(Object.keys(body)).toEqual(['batch', 'sentAt', 'writeKey']);
    expect(body.writeKey).toBe(source.writeKey);
    expect(body.sentAt).toMatch(RFC3339_UTC_MILLIS);
    expect((await readSourceMessages(t, source)).size).toBe(1);
  });

  it('sends on its own after flushInterval, without flush()', async () => {
    const source = await createWorkspaceAndSource(t);
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      ...FAST,
      flushInterval: 50,
    });
    const { messageId } = await analytics.track({ userId: 'u', event: 'timer' });
    const deadline = Date.now() + 5000;
    let stored = await readSourceMessages(t, source);
    while (!stored.has(messageId) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stored = await readSourceMessages(t, source);
    }
    expect(stored.has(messageId)).toBe(true);
    expect(analytics.queueLength).toBe(0);
    await analytics.close();
  });

  it('gzip: the body goes compressed and the server stores the messages intact', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST, gzip: true });
    const text = 'Grüße, 東京 🚀 '.repeat(200);
    const ids = [];
    for (let index = 0; index < 20; index += 1)
      ids.push(
        (await analytics.track({ userId: `u${index}`, event: 'Zipped', properties: { text, index } }))
          .messageId,
      );
    await analytics.close();
    await proxy.close();
    expect(proxy.requests.length).toBeGreaterThanOrEqual(1);
    for (const request of proxy.requests) {
      expect(request.headers['content-encoding']).toBe('gzip');
      expect(request.rawBody.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      expect(request.rawBody.length).toBeLessThan(Buffer.byteLength(request.jsonBody) / 5);
      expect(request.status).toBe(200);
    }
    const stored = await readSourceMessages(t, source);
    expect(ids.map((id) => stored.get(id)?.payload.properties)).toEqual(
      ids.map((_, index) => ({ text, index })),
    );
  });

  it('syncMode: each call resolves after the server stored its message; a failure rejects the call', async () => {
    const source = await createWorkspaceAndSource(t);
    const analytics = new Analytics({ writeKey: source.writeKey, host: t.baseUrl, ...FAST, syncMode: true });
    const result = await analytics.identify({ userId: 'sync-user', traits: { a: 1 } });
    expect(result.status).toBe('delivered');
    // No flush, no wait: the 200 came after the log acknowledged the message.
    const stored = await readSourceMessages(t, source);
    expect(stored.get(result.messageId)?.payload).toMatchObject({
      type: 'identify',
      userId: 'sync-user',
      traits: { a: 1 },
    });
    expect(analytics.queueLength).toBe(0);

    const wrongKey = new Analytics({ writeKey: 'no-such-key', host: t.baseUrl, ...FAST, syncMode: true });
    const failure = await wrongKey.track({ userId: 'u', event: 'e' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(AnalyticsDeliveryError);
    expect(failure).toMatchObject({
      status: 401,
      attempts: 1,
      details: { serverCode: 'invalid_write_key', failure: 'http_status' },
    });
    await analytics.close();
    await wrongKey.close();
  });

  it('an unknown write key: 401, not retried, the batch goes to onError', async () => {
    const proxy = await startRecordingProxy(t.baseUrl);
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({ writeKey: 'unknown-key', host: proxy.url, ...FAST, onError });
    await analytics.track({ userId: 'u', event: 'lost' });
    await analytics.close();
    await proxy.close();
    expect(proxy.requests.map((request) => request.status)).toEqual([401]);
    expect(reports).toHaveLength(1);
    expect(reports[0].error).toMatchObject({
      code: 'delivery_failed',
      status: 401,
      attempts: 1,
      details: { serverCode: 'invalid_write_key' },
    });
    expect(reports[0].batch.map((message) => message.event)).toEqual(['lost']);
  });

  it('two clients with different write keys coexist, each message stored under its own source', async () => {
    const first = await createWorkspaceAndSource(t);
    const second = await createWorkspaceAndSource(t);
    const a = new Analytics({ writeKey: first.writeKey, host: t.baseUrl, ...FAST });
    const b = new Analytics({ writeKey: second.writeKey, host: t.baseUrl, ...FAST, gzip: true });
    const sentA: string[] = [];
    const sentB: string[] = [];
    for (let index = 0; index < 30; index += 1) {
      sentA.push((await a.track({ userId: 'a', event: `a${index}` })).messageId);
      sentB.push((await b.track({ userId: 'b', event: `b${index}` })).messageId);
    }
    await Promise.all([a.close(), b.close()]);
    const storedA = await readSourceMessages(t, first);
    const storedB = await readSourceMessages(t, second);
    expect([...storedA.keys()].sort()).toEqual([...sentA].sort());
    expect([...storedB.keys()].sort()).toEqual([...sentB].sort());
    expect(
      [...storedA.values()].every(
        (message) => message.payload.userId === 'a' && message.workspaceId === first.workspaceId,
      ),
    ).toBe(true);
    expect(
      [...storedB.values()].every(
        (message) => message.payload.userId === 'b' && message.workspaceId === second.workspaceId,
      ),
    ).toBe(true);
  });

  it('a message over 32 KB is refused at the call, before anything is sent', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST });
    expect(() =>
      analytics.track({ userId: 'u', event: 'huge', properties: { blob: 'é'.repeat(16_400) } }),
    ).toThrow(
      expect.objectContaining({
        name: 'AnalyticsValidationError',
        code: 'message_too_large',
        message: expect.stringMatching(/track: the message is 3\d{4} bytes/),
      }),
    );
    await analytics.track({ userId: 'u', event: 'small' });
    await analytics.close();
    await proxy.close();
    expect(proxy.bodies().flatMap((body) => body.batch.map((message: any) => message.event))).toEqual([
      'small',
    ]);
  });
});
