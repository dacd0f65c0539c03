// Requests built byte for byte as analytics-python 2.3.4 and analytics-ruby 2.5.0 send them (docs/tracking-api.md §4.2,
// §5.2, §6.2, §7.3), posted over loopback HTTP, then read back from the event log.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  postTracking,
  RFC3339_UTC_MILLIS,
  readSourceMessages,
  type StoredMessage,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

/**
 * `json.dumps(value)` as Python writes it: `", "` and `": "` separators, and ensure_ascii, so DEL and every
 * non-ASCII character is a lowercase `\uXXXX` escape (astral ones as a surrogate pair).
 */
function pythonJsonDumps(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean' || typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') {
    return JSON.stringify(value).replace(
      /[\u007f-\uffff]/g,
      (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  }
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([key, item]) => `${pythonJsonDumps(key)}: ${pythonJsonDumps(item)}`)
    .join(', ')}}`;
}

/** Python's `datetime.isoformat()` of an aware UTC datetime with microseconds: `…05.320123+00:00`. */
function pythonMicroseconds(epochMs: number, microseconds = '123'): string {
  return new Date(epochMs).toISOString().replace('Z', `${microseconds}+00:00`);
}

/** Python's `isoformat(timespec='milliseconds')` of an aware UTC datetime: `…05.320+00:00`. */
function pythonMilliseconds(epochMs: number): string {
  return new Date(epochMs).toISOString().replace('Z', '+00:00');
}

/** Ruby's `Time#iso8601(3)` in a zone five hours behind UTC: `…16:15:05.320-05:00`. */
function rubyIso8601(epochMs: number): string {
  return new Date(epochMs - 5 * 3600_000).toISOString().replace('Z', '-05:00');
}

function expectTimestamps(
  payload: Record<string, any>,
  sent: { originalMs: number; sentAtMs: number },
  window: { before: number; after: number },
): void {
  for (const field of ['timestamp', 'originalTimestamp', 'sentAt', 'receivedAt']) {
    expect(payload[field]).toMatch(RFC3339_UTC_MILLIS);
  }
  expect(payload.originalTimestamp).toBe(new Date(sent.originalMs).toISOString());
  expect(payload.sentAt).toBe(new Date(sent.sentAtMs).toISOString());
  const receivedAt = Date.parse(payload.receivedAt);
  expect(receivedAt).toBeGreaterThanOrEqual(window.before);
  expect(receivedAt).toBeLessThanOrEqual(window.after);
  expect(Date.parse(payload.timestamp)).toBe(receivedAt - (sent.sentAtMs - sent.originalMs));
}

describe('wire shapes of analytics-python 2.3.4 and analytics-ruby 2.5.0', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  describe('analytics-python 2.3.4: writeKey in the body, no auth header, gzip, Python JSON', () => {
    let source: TestSource;
    let stored: Map<string, StoredMessage>;
    let response: Awaited<ReturnType<typeof postTracking>>;
    let before: number;
    let after: number;
    // The client clock runs 7 minutes behind the server; events happened 1.5 s and 0.25 s before sending.
    const clientSentAtMs = Date.now() - 7 * 60_000;
    const sentAt = pythonMicroseconds(clientSentAtMs, '123');
    const trackMs = clientSentAtMs - 1500;
    const otherMs = clientSentAtMs - 250;
    const library = { name: 'analytics-python', version: '2.3.4' };
    const ids = {
      identify: randomUUID(),
      track: randomUUID(),
      page: randomUUID(),
      screen: randomUUID(),
      group: randomUUID(),
      alias: randomUUID(),
    };
    const common = (type: string, timestampMs: number) => ({
      integrations: {},
      timestamp: pythonMilliseconds(timestampMs),
      context: { library },
      type,
      messageId: ids[type as keyof typeof ids],
    });
    // Key order and the nulls as the client's `client.py` builds each message.
    const batch = [
      {
        ...common('identify', otherMs),
        anonymousId: null,
        userId: 'py-user',
        traits: { name: 'Zoë', emoji: '😀', age: 36 },
      },
      {
        ...common('track', trackMs),
        anonymousId: null,
        properties: { title: 'Café', nested: { n: null } },
        userId: 'py-user',
        event: 'Article Read',
      },
      {
        ...common('page', otherMs),
        anonymousId: 'py-anon',
        name: null,
        category: null,
        properties: {},
        userId: null,
      },
      {
        ...common('screen', otherMs),
        anonymousId: null,
        name: 'Settings',
        category: null,
        properties: { tab: 2 },
        userId: 'py-user',
      },
      { ...common('group', otherMs), anonymousId: null, groupId: 'py-group', traits: {}, userId: 'py-user' },
      // Python's alias carries no anonymousId at all.
      { ...common('alias', otherMs), previousId: 'py-anon', userId: 'py-user' },
    ];

    beforeAll(async () => {
      source = await createWorkspaceAndSource(t, { catalog: 'python' });
      // request.py: {"batch": [...]} then sentAt, then writeKey; json.dumps; gzip with Content-Encoding.
      const json = pythonJsonDumps({ batch, sentAt, writeKey: source.writeKey });
      expect(json).toContain('"name": "Zo\\u00eb"');
      expect(json).toContain('"emoji": "\\ud83d\\ude00"');
      expect(json).toContain('"anonymousId": null, ');
      before = Date.now();
      response = await postTracking(t, '/v1/batch', gzipSync(Buffer.from(json, 'utf8')), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'user-agent': 'analytics-python/2.3.4',
      });
      after = Date.now();
      stored = await readSourceMessages(t, source);
    });

    it('answers exactly 200 with {"success":true}', () => {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.body).toEqual({ success: true });
    });

    it('stores all six messages once, under their own messageIds, in the sending source', () => {
      expect([...stored.keys()].sort()).toEqual(Object.values(ids).sort());
      for (const message of stored.values()) {
        expect(message.sourceId).toBe(source.sourceId);
        expect(message.workspaceId).toBe(source.workspaceId);
        expect(message.payload.context).toEqual({ library });
        expect(message.payload.integrations).toEqual({});
        expect(message.payload).not.toHaveProperty('writeKey');
      }
    });

    it('treats null as absent: no anonymousId, userId, name or category keys holding null', () => {
      for (const message of stored.values()) {
        for (const [key, value] of Object.entries(message.payload))
          expect({ key, value }).not.toEqual({ key, value: null });
      }
      expect(stored.get(ids.identify)!.payload).not.toHaveProperty('anonymousId');
      const page = stored.get(ids.page)!.payload;
      expect(page).toEqual({
        type: 'page',
        messageId: ids.page,
        anonymousId: 'py-anon',
        properties: {},
        context: { library },
        integrations: {},
        timestamp: expect.any(String),
        originalTimestamp: expect.any(String),
        sentAt: expect.any(String),
        receivedAt: expect.any(String),
      });
      expect(stored.get(ids.screen)!.payload).not.toHaveProperty('category');
    });

    it('decodes the \\uXXXX escapes and keeps nulls inside properties as data', () => {
      expect(stored.get(ids.identify)!.payload).toMatchObject({
        userId: 'py-user',
        traits: { name: 'Zoë', emoji: '😀', age: 36 },
      });
      expect(stored.get(ids.track)!.payload).toMatchObject({
        userId: 'py-user',
        event: 'Article Read',
        properties: { title: 'Café', nested: { n: null } },
      });
      expect(stored.get(ids.screen)!.payload).toMatchObject({
        userId: 'py-user',
        name: 'Settings',
        properties: { tab: 2 },
      });
      expect(stored.get(ids.group)!.payload).toMatchObject({
        userId: 'py-user',
        groupId: 'py-group',
        traits: {},
      });
      expect(stored.get(ids.alias)!.payload).toMatchObject({ userId: 'py-user', previousId: 'py-anon' });
    });

    it('normalizes +00:00 and microsecond times to UTC milliseconds and corrects the client clock skew', () => {
      for (const [type, id] of Object.entries(ids)) {
        expectTimestamps(
          stored.get(id)!.payload,
          { originalMs: type === 'track' ? trackMs : otherMs, sentAtMs: clientSentAtMs },
          { before, after },
        );
      }
      // The event happened 1.5 s before the request by the client's own clock, whatever that clock says.
      const track = stored.get(ids.track)!.payload;
      expect(Date.parse(track.receivedAt) - Date.parse(track.timestamp)).toBe(1500);
      expect(track.sentAt).toBe(new Date(clientSentAtMs).toISOString()); // microseconds truncated, not rounded
    });
  });

  describe('legacy analytics-node ≤ 6 envelope and batch-level context and integrations', () => {
    it('ignores a top-level timestamp and merges batch context and integrations under each item, the item winning', async () => {
      const source = await createWorkspaceAndSource(t);
      const [first, second] = [randomUUID(), randomUUID()];
      const response = await postTracking(
        t,
        '/v1/batch',
        JSON.stringify({
          batch: [
            {
              type: 'track',
              userId: 'u',
              event: 'A',
              messageId: first,
              context: { library: { name: 'analytics-node' } },
              _metadata: { nodeVersion: '8.0.0' },
            },
            {
              type: 'identify',
              userId: 'u',
              messageId: second,
              context: { ip: '192.0.2.1' },
              integrations: { Mixpanel: false },
            },
          ],
          timestamp: '2026-11-25T21:15:05.320Z',
          sentAt: '2026-11-25T21:15:05.320Z',
          context: { ip: '203.0.113.1', locale: 'de-DE' },
          integrations: { All: false, Mixpanel: true },
        }),
        { authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}` },
      );

      expect(response.status).toBe(200);
      const stored = await readSourceMessages(t, source);
      expect(stored.get(first)!.payload).toMatchObject({
        context: { ip: '203.0.113.1', locale: 'de-DE', library: { name: 'analytics-node' } },
        integrations: { All: false, Mixpanel: true },
        sentAt: '2026-11-25T21:15:05.320Z',
      });
      expect(stored.get(first)!.payload).not.toHaveProperty('_metadata');
      expect(stored.get(second)!.payload).toMatchObject({
        context: { ip: '192.0.2.1', locale: 'de-DE' },
        integrations: { All: false, Mixpanel: false },
      });
      // No message timestamp: the event time is the server's, the envelope's timestamp is not used.
      expect(stored.get(second)!.payload.timestamp).toBe(stored.get(second)!.payload.receivedAt);
      expect(stored.get(second)!.payload).not.toHaveProperty('originalTimestamp');
    });
  });

  describe('analytics-ruby 2.5.0: /v1/import, Basic "WK:", no writeKey in the body, offsets', () => {
    let source: TestSource;
    let stored: Map<string, StoredMessage>;
    let response: Awaited<ReturnType<typeof postTracking>>;
    let before: number;
    let after: number;
    // The client clock runs 90 s ahead of the server.
    const clientSentAtMs = Date.now() + 90_000;
    const eventMs = clientSentAtMs - 2_345;
    const library = { name: 'analytics-ruby', version: '2.5.0' };
    const ids = {
      identify: randomUUID(),
      track: randomUUID(),
      page: randomUUID(),
      screen: randomUUID(),
      group: randomUUID(),
      alias: randomUUID(),
    };
    const common = (type: keyof typeof ids) => ({
      context: { library },
      messageId: ids[type],
      timestamp: rubyIso8601(eventMs),
      userId: 'rb-user',
    });
    // field_parser.rb: unset fields omitted, properties default {}, page name default "", options kept.
    const batch = [
      { ...common('identify'), traits: { plan: 'pro', city: 'Kraków' }, type: 'identify' },
      {
        ...common('track'),
        options: { ip: '198.51.100.4' },
        event: 'Signed Up',
        properties: {},
        type: 'track',
      },
      { ...common('page'), name: '', properties: { url: 'https://example.com/' }, type: 'page' },
      { ...common('screen'), name: 'Dashboard', properties: {}, type: 'screen' },
      {
        ...common('group'),
        integrations: { All: true, Salesforce: false },
        groupId: 'rb-group',
        traits: { employees: 12 },
        type: 'group',
      },
      { ...common('alias'), previousId: 'rb-old', type: 'alias' },
    ];

    beforeAll(async () => {
      source = await createWorkspaceAndSource(t, { catalog: 'ruby' });
      // transport.rb: JSON.generate(sentAt:, batch:), compact with raw UTF-8; basic_auth(write_key, nil).
      const json = JSON.stringify({ sentAt: rubyIso8601(clientSentAtMs), batch });
      expect(json.startsWith('{"sentAt":"')).toBe(true);
      expect(json).toContain('Kraków');
      before = Date.now();
      response = await postTracking(t, '/v1/import', Buffer.from(json, 'utf8'), {
        'content-type': 'application/json',
        accept: 'application/json',
        'user-agent': 'analytics-ruby/2.5.0',
        authorization: `Basic ${Buffer.from(`${source.writeKey}:`).toString('base64')}`,
      });
      after = Date.now();
      stored = await readSourceMessages(t, source);
    });

    it('answers 200 with a JSON object body (Ruby parses every body)', () => {
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true });
      expect(response.body).not.toHaveProperty('error');
    });

    it('stores all six messages with their fields, the legacy options field kept', () => {
      expect([...stored.keys()].sort()).toEqual(Object.values(ids).sort());
      for (const message of stored.values()) {
        expect(message.sourceId).toBe(source.sourceId);
        expect(message.payload.userId).toBe('rb-user');
        expect(message.payload).not.toHaveProperty('anonymousId');
        expect(message.payload.context).toEqual({ library });
      }
      expect(stored.get(ids.identify)!.payload).toMatchObject({
        type: 'identify',
        traits: { plan: 'pro', city: 'Kraków' },
        integrations: {},
      });
      expect(stored.get(ids.track)!.payload).toMatchObject({
        type: 'track',
        event: 'Signed Up',
        properties: {},
        options: { ip: '198.51.100.4' },
      });
      expect(stored.get(ids.page)!.payload).toMatchObject({
        type: 'page',
        name: '',
        properties: { url: 'https://example.com/' },
      });
      expect(stored.get(ids.page)!.payload).not.toHaveProperty('category');
      expect(stored.get(ids.screen)!.payload).toMatchObject({
        type: 'screen',
        name: 'Dashboard',
        properties: {},
      });
      expect(stored.get(ids.group)!.payload).toMatchObject({
        type: 'group',
        groupId: 'rb-group',
        traits: { employees: 12 },
        integrations: { All: true, Salesforce: false },
      });
      expect(stored.get(ids.alias)!.payload).toMatchObject({
        type: 'alias',
        previousId: 'rb-old',
        integrations: {},
      });
    });

    it('normalizes -05:00 offsets to UTC and sets timestamp = receivedAt − (sentAt − originalTimestamp)', () => {
      for (const message of stored.values()) {
        expectTimestamps(
          message.payload,
          { originalMs: eventMs, sentAtMs: clientSentAtMs },
          { before, after },
        );
        // A clock 90 s fast does not put the event in the future.
        expect(Date.parse(message.payload.timestamp)).toBeLessThanOrEqual(after);
      }
    });
  });
});
