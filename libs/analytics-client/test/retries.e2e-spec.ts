// Failures and retries. A proxy in front of the real tracking API injects the failures the real server
// will not produce on demand (503, 429 with Retry-After, 400, a hang); the messages that get through are
// read back from the event log.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWorkspaceAndSource, readSourceMessages } from '../../../test/support/tracking-e2e.kit';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { Analytics, AnalyticsDeliveryError, AnalyticsRejectedError } from '../src';
import { errorRecorder, FAST, startRecordingProxy } from './client-e2e.kit';

const UNAVAILABLE = JSON.stringify({
  success: false,
  code: 'unavailable',
  message: 'try later',
  error: 'try later',
});

async function freePortWithNothingListening(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('analytics-client retries', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary();
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('retries 503 twice, then the server recovers: the batch is stored once, onError is not called', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl, (index) =>
      index < 2 ? { status: 503, body: UNAVAILABLE } : { forward: true },
    );
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST, onError });
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1)
      ids.push((await analytics.track({ userId: 'u', event: 'retry me', properties: { index } })).messageId);
    await analytics.close();
    await proxy.close();
    expect(proxy.requests.map((request) => request.status)).toEqual([503, 503, 200]);
    expect(proxy.requests.map((request) => request.headers['x-retry-count'])).toEqual([undefined, '1', '2']);
    // The same messages each time; sentAt is the time of each attempt.
    const bodies = proxy.bodies();
    for (const body of bodies) expect(body.batch.map((message: any) => message.messageId)).toEqual(ids);
    expect(Date.parse(bodies[2].sentAt)).toBeGreaterThan(Date.parse(bodies[0].sentAt));
    expect(reports).toEqual([]);
    const stored = await readSourceMessages(t, source);
    expect([...stored.keys()].sort()).toEqual([...ids].sort());
  });

  it('honours Retry-After (seconds) on 429 instead of its own, much shorter, backoff', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl, (index) =>
      index === 0
        ? {
            status: 429,
            headers: { 'retry-after': '1', 'x-ratelimit-reset': '1' },
            body: JSON.stringify({
              success: false,
              code: 'rate_limited',
              message: 'slow down',
              error: 'slow down',
            }),
          }
        : { forward: true },
    );
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST });
    const { messageId } = await analytics.track({ userId: 'u', event: 'patient' });
    await analytics.close();
    await proxy.close();
    expect(proxy.requests.map((request) => request.status)).toEqual([429, 200]);
    const waited = proxy.requests[1].startedAt - proxy.requests[0].finishedAt!;
    // FAST's backoff is at most 40 ms; the server asked for 1 s.
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(2500);
    expect((await readSourceMessages(t, source)).has(messageId)).toBe(true);
  });

  it.each([400, 403, 413])(
    'does not retry %i: one request, and the batch goes to onError',
    async (status) => {
      const proxy = await startRecordingProxy(undefined, () => ({
        status,
        body: JSON.stringify({
          success: false,
          code: 'invalid_request',
          message: 'bad body',
          error: 'bad body',
        }),
      }));
      const { reports, onError } = errorRecorder();
      const analytics = new Analytics({ writeKey: 'wk', host: proxy.url, ...FAST, onError });
      const events = ['a', 'b', 'c'];
      const ids = [];
      for (const event of events) ids.push((await analytics.track({ userId: 'u', event })).messageId);
      await analytics.close();
      await new Promise((resolve) => setTimeout(resolve, 100));
      await proxy.close();
      expect(proxy.requests).toHaveLength(1);
      expect(reports).toHaveLength(1);
      const [{ error, batch }] = reports;
      expect(error).toBeInstanceOf(AnalyticsDeliveryError);
      expect(error).toMatchObject({
        status,
        attempts: 1,
        details: { failure: 'http_status', serverCode: 'invalid_request' },
      });
      expect(error.message).toContain(`answered ${status}: invalid_request (bad body)`);
      expect(batch.map((message) => [message.messageId, message.event])).toEqual(
        ids.map((id, index) => [id, events[index]]),
      );
    },
  );

  it('gives up after maxRetries, with growing delays, and calls onError once with the whole batch', async () => {
    const proxy = await startRecordingProxy(undefined, () => ({ status: 503, body: UNAVAILABLE }));
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: 'wk',
      host: proxy.url,
      ...FAST,
      maxRetries: 3,
      retryBackoff: { initialDelayMs: 40, maxDelayMs: 1000 },
      onError,
    });
    const results = await Promise.all([
      analytics.identify({ userId: 'u' }),
      analytics.group({ userId: 'u', groupId: 'g' }),
    ]);
    await analytics.close();
    await proxy.close();
    expect(proxy.requests.map((request) => request.status)).toEqual([503, 503, 503, 503]);
    const gaps = proxy.requests
      .slice(1)
      .map((request, index) => request.startedAt - proxy.requests[index].finishedAt!);
    // Delay n lies between half and all of 40 ms × 2^n.
    gaps.forEach((gap, retry) => expect(gap).toBeGreaterThanOrEqual(20 * 2 ** retry - 2));
    expect(reports).toHaveLength(1);
    expect(reports[0].error).toMatchObject({
      code: 'delivery_failed',
      status: 503,
      attempts: 4,
      details: { serverCode: 'unavailable' },
    });
    expect(reports[0].error.message).toMatch(/^gave up after 4 attempt\(s\): the tracking API answered 503/);
    expect(reports[0].batch.map((message) => message.messageId)).toEqual(
      results.map((result) => result.messageId),
    );
    expect(reports[0].batch.map((message) => message.type)).toEqual(['identify', 'group']);
  });

  it('retries network errors and reports them as such when they persist', async () => {
    const port = await freePortWithNothingListening();
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: 'wk',
      host: `http://127.0.0.1:${port}`,
      ...FAST,
      maxRetries: 2,
      onError,
    });
    await analytics.track({ userId: 'u', event: 'nowhere' });
    await analytics.close();
    expect(reports).toHaveLength(1);
    expect(reports[0].error).toMatchObject({ details: { failure: 'network', attempts: 3 } });
    expect(reports[0].error.message).toContain(`http://127.0.0.1:${port}/v1/batch`);
  });

  it('ends a request that gets no answer after `timeout` ms, and retries it', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl, (index) =>
      index === 0 ? { hang: true } : { forward: true },
    );
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({
      writeKey: source.writeKey,
      host: proxy.url,
      ...FAST,
      timeout: 200,
      onError,
    });
    const { messageId } = await analytics.track({ userId: 'u', event: 'slow start' });
    const started = Date.now();
    await analytics.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await proxy.close();
    expect(proxy.requests).toHaveLength(2);
    expect(proxy.requests[1].startedAt - proxy.requests[0].startedAt).toBeGreaterThanOrEqual(190);
    expect(reports).toEqual([]);
    expect((await readSourceMessages(t, source)).has(messageId)).toBe(true);

    const hanging = await startRecordingProxy(undefined, () => ({ hang: true }));
    const stuck = new Analytics({
      writeKey: 'wk',
      host: hanging.url,
      ...FAST,
      timeout: 100,
      maxRetries: 1,
      onError,
    });
    await stuck.track({ userId: 'u', event: 'never' });
    await stuck.close();
    await hanging.close();
    expect(reports.map((report) => report.error)).toEqual([
      expect.objectContaining({ details: { failure: 'timeout', attempts: 2 } }),
    ]);
  });

  it('syncMode retries too: the call resolves once a retry succeeds', async () => {
    const source = await createWorkspaceAndSource(t);
    const proxy = await startRecordingProxy(t.baseUrl, (index) =>
      index === 0 ? { status: 502, body: 'Bad Gateway' } : { forward: true },
    );
    const analytics = new Analytics({ writeKey: source.writeKey, host: proxy.url, ...FAST, syncMode: true });
    const result = await analytics.alias({ userId: 'new', previousId: 'old' });
    expect(result.status).toBe('delivered');
    expect(proxy.requests.map((request) => request.status)).toEqual([502, 200]);
    expect((await readSourceMessages(t, source)).get(result.messageId)?.payload).toMatchObject({
      type: 'alias',
      userId: 'new',
      previousId: 'old',
    });
    await analytics.close();
    await proxy.close();

    const failing = await startRecordingProxy(undefined, () => ({ status: 503, body: 'down' }));
    const unlucky = new Analytics({
      writeKey: 'wk',
      host: failing.url,
      ...FAST,
      syncMode: true,
      maxRetries: 1,
    });
    await expect(unlucky.track({ userId: 'u', event: 'e' })).rejects.toMatchObject({
      name: 'AnalyticsDeliveryError',
      status: 503,
      attempts: 2,
      details: { responseBody: 'down' },
    });
    await failing.close();
  });

  it('reports messages the server lists as rejected in its 200, and does not resend them', async () => {
    const proxy = await startRecordingProxy(undefined, (_index, request) => {
      const batch = JSON.parse(request.jsonBody).batch;
      return {
        status: 200,
        body: JSON.stringify({
          success: true,
          rejected: [
            {
              index: 1,
              messageId: batch[1].messageId,
              code: 'no_user_anon_id',
              message: 'A message needs a non-empty "userId" or "anonymousId"',
            },
          ],
        }),
      };
    });
    const { reports, onError } = errorRecorder();
    const analytics = new Analytics({ writeKey: 'wk', host: proxy.url, ...FAST, onError });
    for (const event of ['kept', 'refused', 'kept too']) await analytics.track({ userId: 'u', event });
    await analytics.close();
    await proxy.close();
    expect(proxy.requests).toHaveLength(1);
    expect(reports).toHaveLength(1);
    expect(reports[0].error).toBeInstanceOf(AnalyticsRejectedError);
    expect((reports[0].error as AnalyticsRejectedError).rejections).toEqual([
      expect.objectContaining({ index: 1, code: 'no_user_anon_id' }),
    ]);
    expect(reports[0].batch.map((message) => message.event)).toEqual(['refused']);
  });
});
