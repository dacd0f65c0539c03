// `/v1/track` and the other single-event routes (docs/tracking-api.md §3, §4, §5.3), and the rule that a 200 means the
// message is already in the log (docs/architecture.md invariant 1).
import { randomUUID } from 'node:crypto';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  basicAuth,
  createWorkspaceAndSource,
  postTracking,
  readSourceMessages,
  RFC3339_UTC_MILLIS,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

describe('single-event routes', () => {
  let t: TributaryTestInstance;
  let source: TestSource;

  beforeAll(async () => {
    t = await startTributary();
    source = await createWorkspaceAndSource(t);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  // Each body claims a different type than its path; the path wins [decision].
  const routes = [
    { route: 'track', bodyType: 'identify', fields: { event: 'Played', properties: { song: 'x' } } },
    { route: 'identify', bodyType: 'track', fields: { traits: { email: 'a@example.com' } } },
    {
      route: 'page',
      bodyType: 'screen',
      fields: { name: 'Home', category: 'Landing', properties: { path: '/' } },
    },
    { route: 'screen', bodyType: 'page', fields: { name: 'Main', properties: { n: 1 } } },
    { route: 'group', bodyType: 'alias', fields: { groupId: 'g-1', traits: { size: 3 } } },
    { route: 'alias', bodyType: 'group', fields: { previousId: 'old-id' } },
  ] as const;

  it.each(routes)(
    'POST /v1/$route takes its type from the path (body says $bodyType) and stores the message',
    async ({ route, bodyType, fields }) => {
      const messageId = randomUUID();
      const response = await postTracking(
        t,
        `/v1/${route}`,
        JSON.stringify({ type: bodyType, userId: 'u-1', messageId, ...fields }),
        { authorization: basicAuth(source.writeKey) },
      );

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });
      const stored = (await readSourceMessages(t, source)).get(messageId);
      expect(stored?.payload).toEqual({
        type: route,
        messageId,
        userId: 'u-1',
        ...fields,
        context: {},
        integrations: {},
        timestamp: expect.stringMatching(RFC3339_UTC_MILLIS),
        receivedAt: expect.stringMatching(RFC3339_UTC_MILLIS),
      });
      // No timestamp nor sentAt sent: the event time is the server's (docs/tracking-api.md §7.2).
      expect(stored!.payload.timestamp).toBe(stored!.payload.receivedAt);
    },
  );

  it.each([
    [
      'Basic base64("WK:")',
      (writeKey: string) => ({ headers: { authorization: basicAuth(writeKey, true) }, body: {} }),
    ],
    [
      'Basic base64("WK") without the colon',
      (writeKey: string) => ({ headers: { authorization: basicAuth(writeKey, false) }, body: {} }),
    ],
    [
      'writeKey in the body, no Authorization header',
      (writeKey: string) => ({ headers: {}, body: { writeKey } }),
    ],
  ])('authenticates with %s', async (_, auth) => {
    const messageId = randomUUID();
    const { headers, body } = auth(source.writeKey);
    const response = await postTracking(
      t,
      '/v1/identify',
      JSON.stringify({ userId: 'u-2', messageId, ...body }),
      headers,
    );

    expect(response.status).toBe(200);
    const stored = (await readSourceMessages(t, source)).get(messageId);
    expect(stored?.payload).toMatchObject({ type: 'identify', userId: 'u-2' });
    expect(stored?.payload).not.toHaveProperty('writeKey'); // a credential never reaches the log
  });

  it('accepts application/json;charset=utf-8 (older legacy-Node builds) and raw UTF-8', async () => {
    const messageId = randomUUID();
    const response = await postTracking(
      t,
      '/v1/track',
      Buffer.from(
        JSON.stringify({
          anonymousId: 'a-1',
          event: 'Ordered 🍕',
          properties: { city: 'Zürich' },
          messageId,
        }),
        'utf8',
      ),
      { 'content-type': 'application/json;charset=utf-8', authorization: basicAuth(source.writeKey) },
    );

    expect(response.status).toBe(200);
    const stored = (await readSourceMessages(t, source)).get(messageId);
    expect(stored?.payload).toMatchObject({
      anonymousId: 'a-1',
      event: 'Ordered 🍕',
      properties: { city: 'Zürich' },
    });
  });

  it('corrects the clock skew with a sentAt in the single-event body', async () => {
    const messageId = randomUUID();
    const response = await postTracking(
      t,
      '/v1/track',
      JSON.stringify({
        userId: 'u-3',
        event: 'Skewed',
        messageId,
        timestamp: '2020-05-06T07:08:09.000+02:00',
        sentAt: '2020-05-06T05:08:19.500Z',
        writeKey: source.writeKey,
      }),
    );

    expect(response.status).toBe(200);
    const payload = (await readSourceMessages(t, source)).get(messageId)!.payload;
    expect(payload.originalTimestamp).toBe('2020-05-06T05:08:09.000Z');
    expect(payload.sentAt).toBe('2020-05-06T05:08:19.500Z');
    expect(Date.parse(payload.receivedAt) - Date.parse(payload.timestamp)).toBe(10_500);
  });

  it('answers 200 only once the message is durable: each one is in the log right after its 200', async () => {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const messageId = randomUUID();
      const response = await postTracking(
        t,
        '/v1/track',
        JSON.stringify({ userId: 'u-4', event: 'Durable', messageId }),
        {
          authorization: basicAuth(source.writeKey),
        },
      );
      expect(response.status).toBe(200);
      // Read by a brand-new consumer from the start of the log, with no waiting for the message to show up.
      const stored = await readSourceMessages(t, source);
      expect(stored.get(messageId)?.payload).toMatchObject({ event: 'Durable', messageId });
    }
  });

  it('answers 200 for a batch only once every message is durable, and survives a restart on the same data', async () => {
    const ids = Array.from({ length: 50 }, () => randomUUID());
    const response = await postTracking(
      t,
      '/v1/batch',
      JSON.stringify({
        batch: ids.map((messageId) => ({ type: 'track', userId: 'u-5', event: 'Bulk', messageId })),
      }),
      { authorization: basicAuth(source.writeKey) },
    );
    expect(response.status).toBe(200);
    const before = await readSourceMessages(t, source);
    for (const id of ids) expect(before.has(id)).toBe(true);

    await t.stop();
    t = await startTributary({ dataDir: t.dataDir, adminToken: t.adminToken });
    const after = await readSourceMessages(t, source);
    for (const id of ids) expect(after.get(id)?.payload.event).toBe('Bulk');
  });
});
