// TRACKING_RATE_LIMIT: requests per second per workspace; past it, 429 with Retry-After and
// X-RateLimit-Reset in small seconds and the JSON error body (docs/tracking-api.md §9.1, §9.2).
import { randomUUID } from 'node:crypto';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  createWorkspaceAndSource,
  expectErrorBody,
  postJson,
  readSourceMessages,
  sleep,
  type TrackingResponse,
} from '../../../test/support/tracking-e2e.kit';

describe('tracking rate limit (TRACKING_RATE_LIMIT=2)', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startTributary({ environment: { TRACKING_RATE_LIMIT: '2' } });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  const send = (writeKey: string, messageId = randomUUID()) =>
    postJson(
      t,
      '/v1/batch',
      { batch: [{ type: 'track', userId: 'u', event: 'Limited', messageId }] },
      writeKey,
    );

  it('answers 429 rate_limited with Retry-After and X-RateLimit-Reset in seconds, stores nothing for it, and lets the retry in', async () => {
    const source = await createWorkspaceAndSource(t);
    const responses: TrackingResponse[] = [];
    const refusedId = randomUUID();
    for (let index = 0; index < 5; index += 1)
      responses.push(await send(source.writeKey, index === 4 ? refusedId : undefined));

    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(2);
    const limited = responses.filter((response) => response.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    // A fixed one-second window: whatever the boundary, at most 2 pass per window, so 5 quick ones hit it.
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    for (const response of limited) {
      expectErrorBody(response, 429, 'rate_limited');
      const retryAfter = response.headers.get('retry-after');
      expect(retryAfter).toMatch(/^\d+$/);
      expect(response.headers.get('x-ratelimit-reset')).toBe(retryAfter);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(2); // seconds from now, never an epoch value
    }
    const lastRetryAfter = Number(limited[limited.length - 1].headers.get('retry-after'));
    expect(responses[4].status).toBe(429);
    expect((await readSourceMessages(t, source)).has(refusedId)).toBe(false);

    // The client's retry after the advertised wait is accepted and stored.
    await sleep(lastRetryAfter * 1000);
    const retry = await send(source.writeKey, refusedId);
    expect(retry.status).toBe(200);
    expect((await readSourceMessages(t, source)).has(refusedId)).toBe(true);
  });

  it('limits each workspace on its own', async () => {
    const busy = await createWorkspaceAndSource(t);
    const quiet = await createWorkspaceAndSource(t);
    const busyStatuses: number[] = [];
    for (let index = 0; index < 4; index += 1) busyStatuses.push((await send(busy.writeKey)).status);
    const quietStatus = (await send(quiet.writeKey)).status;

    expect(busyStatuses).toContain(429);
    expect(quietStatus).toBe(200);
  });
});
