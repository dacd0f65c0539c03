// Segment's mobile libraries, as they speak on the wire (docs/browser-mobile.md §2): each test sends the
// settings request and the event post one library sends, with its exact path, headers, envelope order
// and encoding, and checks what it needs back. The libraries themselves need Xcode or Android tooling,
// so the requests are rebuilt from their sources as the spec records them.
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  readSourceMessages,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

interface WireResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/**
 * One request as a mobile library sends it. `chunked` streams the body in pieces without a
 * Content-Length, as analytics-kotlin and analytics-android do through HttpURLConnection's chunked
 * streaming mode.
 */
function send(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
  options: { chunked?: boolean } = {},
): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          ...headers,
          ...(body && !options.chunked && { 'content-length': String(body.length) }),
        },
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: text ? JSON.parse(text) : undefined,
          });
        });
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    if (body && options.chunked) {
      const middle = Math.floor(body.length / 2);
      outgoing.write(body.subarray(0, middle));
      outgoing.write(body.subarray(middle));
      outgoing.end();
    } else {
      outgoing.end(body);
    }
  });
}

const isoNow = () => new Date().toISOString();

/** The context a phone library builds (device, os, app, screen, network), different per platform. */
function mobileContext(library: { name: string; version: string }, os: 'iOS' | 'Android') {
  return {
    app: { name: 'Demo', version: '3.2.1', build: '321', namespace: 'com.example.demo' },
    device:
      os === 'iOS'
        ? {
            manufacturer: 'Apple',
            type: 'ios',
            model: 'iPhone15,2',
            name: 'iPhone',
            id: randomUUID().toUpperCase(),
          }
        : { manufacturer: 'Google', model: 'Pixel 8', name: 'husky', type: 'android', id: randomUUID() },
    os: os === 'iOS' ? { name: 'iOS', version: '17.4.1' } : { name: 'Android', version: '14' },
    screen: { width: 393, height: 852, density: 3 },
    network: { wifi: true, cellular: false, bluetooth: false },
    locale: 'fr-FR',
    timezone: 'Europe/Paris',
    library,
  };
}

function events(anonymousId: string, context: Record<string, unknown>, writeKey?: string) {
  return [
    { type: 'identify', userId: 'm-user', traits: { plan: 'pro' } },
    { type: 'track', event: 'Item Purchased', properties: { sku: 'A-1', price: 9.5 } },
    { type: 'screen', name: 'Checkout', properties: { step: 2 } },
  ].map((fields) => ({
    ...fields,
    anonymousId,
    messageId: randomUUID(),
    timestamp: isoNow(),
    integrations: {},
    context,
    ...(writeKey !== undefined && { writeKey }),
    _metadata: { bundled: [], unbundled: [], bundledIds: [] },
  }));
}

describe('mobile libraries', () => {
  let t: TributaryTestInstance;
  let source: TestSource;

  beforeAll(async () => {
    t = await startTributary();
    source = await createWorkspaceAndSource(t, { catalog: 'ios' });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  /** The settings every library needs: `Segment.io` with its apiKey and this deployment's apiHost. */
  async function expectSettings(headers: Record<string, string>): Promise<void> {
    const response = await send(t.port, 'GET', `/v1/projects/${source.writeKey}/settings`, headers);
    expect(response.status).toBe(200); // Kotlin and legacy Android accept exactly 200
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.integrations['Segment.io']).toMatchObject({
      apiKey: source.writeKey,
      apiHost: `127.0.0.1:${t.port}/v1`,
    });
    expect(response.body.integrations['Segment.io'].apiHost).not.toContain('segment.io');
    expect(response.body.metrics).toEqual({ sampleRate: 0 }); // telemetry stays off
    for (const key of [
      'integrations',
      'plan',
      'edgeFunction',
      'middlewareSettings',
      'consentSettings',
      'metrics',
    ]) {
      expect(response.body[key]).toEqual(expect.any(Object)); // present and never null (Kotlin)
    }
  }

  /** Every message of `sent` stored as sent, with `context.ip` filled from the phone's address. */
  async function expectStored(sent: Array<Record<string, any>>): Promise<void> {
    const stored = await readSourceMessages(t, source);
    for (const message of sent) {
      const { writeKey: _writeKey, _metadata: _dropped, timestamp: _resolved, ...kept } = message;
      expect(stored.get(message.messageId)?.payload).toMatchObject({
        ...kept,
        context: { ...message.context, ip: '127.0.0.1' },
        originalTimestamp: message.timestamp,
      });
    }
  }

  it('analytics-swift: settings from cdnHost, then /b in JSON with no Authorization', async () => {
    await expectSettings({
      'user-agent': 'analytics-ios/1.9.4',
      accept: '*/*',
      'accept-encoding': 'gzip, deflate, br',
    });
    const batch = events(
      randomUUID().toUpperCase(),
      mobileContext({ name: 'analytics-swift', version: '1.9.4' }, 'iOS'),
    );
    // DirectoryStore writes `{ "batch": [` then the events, then `],"sentAt":"…","writeKey":"…"}`.
    const body = `{ "batch": [${batch.map((event) => JSON.stringify(event)).join(',')}],"sentAt":"${isoNow()}","writeKey":"${source.writeKey}"}`;
    const response = await send(
      t.port,
      'POST',
      '/v1/b',
      {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'analytics-ios/1.9.4',
        'accept-encoding': 'gzip',
      },
      Buffer.from(body),
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    await expectStored(batch);
  });

  it('analytics-kotlin: /b as gzipped text/plain, chunked, with no Authorization', async () => {
    await expectSettings({ 'user-agent': 'analytics-kotlin/1.24.1' });
    const batch = events(
      randomUUID(),
      mobileContext({ name: 'analytics-kotlin', version: '1.24.1' }, 'Android'),
    );
    const body = gzipSync(
      `{"batch":[${batch.map((event) => JSON.stringify(event)).join(',')}],"sentAt":"${isoNow()}","writeKey":"${source.writeKey}"}`,
    );
    const response = await send(
      t.port,
      'POST',
      '/v1/b',
      { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'user-agent': 'analytics-kotlin/1.24.1' },
      body,
      { chunked: true },
    );
    expect(response.status).toBe(200);
    await expectStored(batch);
  });

  it('analytics-react-native: settings with Cache-Control: no-cache, /b in JSON, a retry with X-Retry-Count stored once', async () => {
    await expectSettings({ 'cache-control': 'no-cache' });
    const batch = events(randomUUID(), {
      ...mobileContext({ name: '@segment/analytics-react-native', version: '2.21.4' }, 'iOS'),
    });
    const body = Buffer.from(JSON.stringify({ batch, sentAt: isoNow(), writeKey: source.writeKey }));
    const headers = { 'content-type': 'application/json; charset=utf-8' };
    expect((await send(t.port, 'POST', '/v1/b', headers, body)).status).toBe(200);
    // The app went to the background before it read the answer: the same batch again.
    const retried = await send(t.port, 'POST', '/v1/b', { ...headers, 'x-retry-count': '1' }, body);
    expect(retried.status).toBe(200);
    await expectStored(batch); // readSourceMessages fails on a messageId stored twice
  });

  it('legacy analytics-ios: /batch as gzipped JSON, envelope {sentAt, writeKey, batch}', async () => {
    await expectSettings({ 'user-agent': 'analytics-ios/4.1.8', 'accept-encoding': 'gzip' });
    const batch = events(
      randomUUID().toUpperCase(),
      mobileContext({ name: 'analytics-ios', version: '4.1.8' }, 'iOS'),
    );
    const body = gzipSync(JSON.stringify({ sentAt: isoNow(), writeKey: source.writeKey, batch }));
    const response = await send(
      t.port,
      'POST',
      '/v1/batch',
      { 'content-type': 'application/json', 'content-encoding': 'gzip', 'user-agent': 'analytics-ios/4.1.8' },
      body,
    );
    expect(response.status).toBe(200);
    await expectStored(batch);
  });

  it('legacy analytics-android: /import as gzipped JSON, chunked, every event carrying writeKey', async () => {
    await expectSettings({ 'user-agent': 'analytics-android/4.11.3' });
    const batch = events(
      randomUUID(),
      mobileContext({ name: 'analytics-android', version: '4.11.3' }, 'Android'),
      source.writeKey,
    );
    const body = gzipSync(JSON.stringify({ batch, sentAt: isoNow(), writeKey: source.writeKey }));
    const response = await send(
      t.port,
      'POST',
      '/v1/import',
      {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'user-agent': 'analytics-android/4.11.3',
      },
      body,
      { chunked: true },
    );
    expect(response.status).toBe(200);
    await expectStored(batch);
  });

  it('answers an unknown write key 404 on settings and 401 on events, so the app can tell', async () => {
    const settings = await send(t.port, 'GET', '/v1/projects/unknown-key/settings', {
      'user-agent': 'analytics-kotlin/1.24.1',
    });
    expect(settings.status).toBe(404);
    const post = await send(
      t.port,
      'POST',
      '/v1/b',
      { 'content-type': 'text/plain' },
      Buffer.from(JSON.stringify({ batch: events('a', {}), writeKey: 'unknown-key' })),
    );
    expect(post.status).toBe(401);
    expect(post.body).toMatchObject({ success: false, code: 'invalid_write_key' });
  });
});
