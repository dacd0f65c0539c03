// How the client cuts its queue into requests, measured on the wire by a forwarding proxy in front of the
// real tracking API, and checked again in the event log.
import { createWorkspaceAndSource, readSourceMessages } from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { Analytics, MAX_BATCH_BYTES } from '../src';
import { errorRecorder, FAST, startRecordingProxy } from './client-e2e.kit';

async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('analytics-client batching', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('sends a batch as soon as batchSize messages wait, and the rest on flush()', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: proxy.url,
      ...FAST,
      batchSize: 100,
      flushInterval: 60_000,
    });
    const ids: string[] = [];
    for (let index = 0; index < 250; index += 1)
      ids.push((await analytics.track({ userId: 'u', event: 'bulk', properties: { index } })).messageId);
    await waitFor(
      'two full batches',
      () => proxy.requests.filter((request) => request.status === 200).length === 2,
    );
    // The interval is a minute away: the last 50 wait for it, or for flush().
    expect(analytics.queueLength).toBe(50);
    await analytics.flush();
    expect(analytics.queueLength).toBe(0);
    expect(proxy.bodies().map((body) => body.batch.length)).toEqual([100, 100, 50]);
    // In order, each message once.
    expect(
      proxy.bodies().flatMap((body) => body.batch.map((message: any) => message.properties.index)),
    ).toEqual(ids.map((_, index) => index));
    const stored = await readSourceMessages(t, source);
    expect(new Set(stored.keys())).toEqual(new Set(ids));
    await analytics.close();
    await proxy.close();
  });

  it('splits by bytes: 200 messages of ~4 KB go in several requests, none over 500 KB', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl);
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: proxy.url,
      ...FAST,
      batchSize: 2500,
      flushInterval: 60_000,
    });
    // Two-byte characters: a character count would see ~2 KB per message and put all 200 in one request.
    const filler = 'ß'.repeat(2000);
    const ids: string[] = [];
    for (let index = 0; index < 200; index += 1) {
      const result = await analytics.track({ userId: 'u', event: 'heavy', properties: { index, filler } });
      ids.push(result.messageId);
    }
    await analytics.flush();
    const sizes = proxy.requests.map((request) => Buffer.byteLength(request.jsonBody));
    expect(sizes.length).toBeGreaterThanOrEqual(2);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    // Each request but the last was filled: the next message would not have fitted.
    const largest = Math.max(
      ...proxy
        .bodies()
        .flatMap((body) => body.batch.map((message: unknown) => Buffer.byteLength(JSON.stringify(message)))),
    );
    for (const size of sizes.slice(0, -1)) expect(size + 1 + largest).toBeGreaterThan(MAX_BATCH_BYTES);
    expect(proxy.requests.map((request) => request.status)).toEqual(sizes.map(() => 200));
    expect(proxy.bodies().reduce((sum, body) => sum + body.batch.length, 0)).toBe(200);
    const stored = await readSourceMessages(t, source);
    expect(stored.size).toBe(200);
    expect(
      ids.every(
        (id, index) =>
          stored.get(id)?.payload.properties.index === index &&
          stored.get(id)?.payload.properties.filler === filler,
      ),
    ).toBe(true);
    await analytics.close();
    await proxy.close();
  });

  it('one request at a time; flush() with a request in flight resolves only when everything is sent', async () => {
    const source = await createWorkspaceAndSource(t);
    // Each answer is held 150 ms, so requests would overlap if the client allowed it.
    const proxy = await startRecordingProxy(t.baseUrl, () => ({ forward: true, delayMs: 150 }));
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: proxy.url,
      ...FAST,
      batchSize: 10,
      flushInterval: 60_000,
    });
    const ids: string[] = [];
    for (let index = 0; index < 35; index += 1)
      ids.push((await analytics.track({ userId: 'u', event: 'inflight', properties: { index } })).messageId);
    await waitFor('the first request', () => proxy.requests.length === 1);
    expect(proxy.requests[0].finishedAt).toBeUndefined();
    const flushed = analytics.flush();
    await flushed;
    expect(
      proxy.requests.map((request) => [request.status, JSON.parse(request.jsonBody).batch.length]),
    ).toEqual([
      [200, 10],
      [200, 10],
      [200, 10],
      [200, 5],
    ]);
    expect(proxy.maxConcurrent).toBe(1);
    for (let index = 1; index < proxy.requests.length; index += 1) {
      expect(proxy.requests[index].startedAt).toBeGreaterThanOrEqual(proxy.requests[index - 1].finishedAt!);
    }
    expect(analytics.queueLength).toBe(0);
    const stored = await readSourceMessages(t, source);
    expect(new Set(stored.keys())).toEqual(new Set(ids));
    // With nothing queued and nothing in flight, flush() resolves at once.
    const started = Date.now();
    await analytics.flush();
    expect(Date.now() - started).toBeLessThan(50);
    await analytics.close();
    await proxy.close();
  });

  it('a full queue refuses and reports further calls, keeps the rest, and nothing crashes', async () => {
    const source = await createWorkspaceAndSource(t);
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: t.baseUrl,
      ...FAST,
      maxQueueSize: 5,
      flushInterval: 60_000,
      onError,
    });
    const results = [];
    for (let index = 0; index < 8; index += 1)
      results.push(await analytics.track({ userId: 'u', event: `e${index}` }));
    expect(results.map((result) => result.status)).toEqual([
      'queued',
      'queued',
      'queued',
      'queued',
      'queued',
      'refused',
      'refused',
      'refused',
    ]);
    expect(
      reports.map((report) => [report.error.code, report.batch.map((message) => message.event)]),
    ).toEqual([
      ['queue_full', ['e5']],
      ['queue_full', ['e6']],
      ['queue_full', ['e7']],
    ]);
    await analytics.close();
    const stored = await readSourceMessages(t, source);
    expect([...stored.values()].map((message) => message.payload.event).sort()).toEqual([
      'e0',
      'e1',
      'e2',
      'e3',
      'e4',
    ]);
  });

  it('send: false (and stub: true): calls succeed and no request leaves the process', async () => {
    const proxy = await startRecordingProxy(undefined, () => ({ status: 500 }));
    const { reports, onError } = errorRecorder();
    const clients = [
      new Analytics({ writeKey: 'wk', host: proxy.url, ...FAST, send: false, onError }),
      new Analytics({ writeKey: 'wk', host: proxy.url, ...FAST, stub: true, batchSize: 2, onError }),
      new Analytics({ writeKey: 'wk', host: proxy.url, ...FAST, send: false, syncMode: true, onError }),
    ];
    for (const analytics of clients) {
      for (let index = 0; index < 5; index += 1) {
        const result = await analytics.page({ anonymousId: 'a', name: `p${index}` });
        expect(['queued', 'delivered']).toContain(result.status);
      }
      await analytics.flush();
      expect(analytics.queueLength).toBe(0);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await Promise.all(clients.map((analytics) => analytics.close()));
    await proxy.close();
    expect(proxy.requests).toEqual([]);
    expect(reports).toEqual([]);
  });
});
