// Source functions (docs/functions.md §2): a webhook POST turned into messages stored in the log
// through the tracking API's batch path, and every answer of the endpoint.
import { startTributary, type TributaryTestInstance } from '../support/tributary-test-instance';
import { createWorkspace, readSourceMessages, RFC3339_UTC_MILLIS } from '../support/tracking-e2e.kit';
import { createFunction, createFunctionSource, FUNCTION_ENVIRONMENT } from './functions-e2e.kit';

const SHOP = `
async function onRequest(request, settings) {
  const mode = request.url.searchParams.get('mode');
  if (mode === 'invalid') throw new ValidationError('no customer in the order');
  if (mode === 'later') throw new RetryError('the shop asked to wait');
  if (mode === 'broken') throw new TypeError('cannot read the order');
  if (mode === 'spin') { while (true) {} }
  if (mode === 'refused') { Segment.track({ userId: 'user-1' }); return; }
  const body = await request.json();
  Segment.identify({ userId: body.customer.id, traits: { email: body.customer.email } });
  Segment.track({
    event: 'Order Placed',
    userId: body.customer.id,
    messageId: 'order-' + body.id,
    properties: { order_id: body.id, total: body.total, shop: request.headers.get('x-shop'), tag: settings.tag },
  });
}
`;

describe('source functions', () => {
  let t: TributaryTestInstance;
  let workspace: { slug: string; id: string };
  let source: Awaited<ReturnType<typeof createFunctionSource>>;
  let functionId: string;

  beforeAll(async () => {
    t = await startTributary({ environment: FUNCTION_ENVIRONMENT });
    workspace = await createWorkspace(t);
    functionId = await createFunction(t, workspace.slug, 'SOURCE', SHOP, [{ name: 'tag', required: true }]);
    source = await createFunctionSource(t, workspace, functionId, { tag: 'spring' });
  }, 60_000);

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  /** The webhook URL on this instance (the Config API builds it from the request's host), with more query. */
  function webhookUrl(query = ''): string {
    const url = new URL(source.webhookUrl);
    return `${t.baseUrl}${url.pathname}${url.search}${query}`;
  }

  async function post(url: string, body: string, headers: Record<string, string> = {}) {
    const response = await fetch(url, { method: 'POST', body, headers });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  it('turns a webhook POST into an identify and a track stored in the log', async () => {
    expect(source.webhookUrl).toMatch(/\/v1\/fn\?b=[A-Za-z0-9_-]+$/);
    const order = {
      id: `A-${Date.now()}`,
      total: 99.5,
      customer: { id: 'cust-7', email: 'ada@example.com' },
    };
    const answer = await post(webhookUrl(), JSON.stringify(order), {
      'content-type': 'application/json',
      'x-shop': 'north',
    });
    expect(answer).toMatchObject({ status: 200, body: { success: true } });

    const stored = [...(await readSourceMessages(t, source)).values()];
    expect(stored).toHaveLength(2);
    const track = stored.find((message) => message.payload['type'] === 'track')!;
    const identify = stored.find((message) => message.payload['type'] === 'identify')!;
    expect(track.messageId).toBe(`order-${order.id}`);
    expect(track.payload).toMatchObject({
      event: 'Order Placed',
      userId: 'cust-7',
      properties: { order_id: order.id, total: 99.5, shop: 'north', tag: 'spring' },
      context: { source_function: { id: functionId, version: 1 } },
      receivedAt: expect.stringMatching(RFC3339_UTC_MILLIS),
    });
    expect(identify.payload).toMatchObject({
      userId: 'cust-7',
      traits: { email: 'ada@example.com' },
      context: { source_function: { id: functionId, version: 1 } },
    });
    // A messageId the function did not set is generated, as the batch path does.
    expect(identify.messageId).toEqual(expect.any(String));
    expect(identify.messageId.length).toBeGreaterThan(0);

    // The same order again: deduplicated on its messageId, the identify stored again with a new id.
    expect((await post(webhookUrl(), JSON.stringify(order), { 'x-shop': 'north' })).status).toBe(200);
    const again = [...(await readSourceMessages(t, source)).values()];
    expect(again.filter((message) => message.messageId === `order-${order.id}`)).toHaveLength(1);
  }, 30_000);

  it('answers the function failures with 400, 503 (Retry-After) and 500, storing nothing', async () => {
    const before = (await readSourceMessages(t, source)).size;
    const invalid = await post(webhookUrl('&mode=invalid'), '{}');
    expect(invalid).toMatchObject({
      status: 400,
      body: { error: 'ValidationError: no customer in the order' },
    });
    const later = await post(webhookUrl('&mode=later'), '{}');
    expect(later.status).toBe(503);
    expect(later.headers.get('retry-after')).toBe('60');
    const broken = await post(webhookUrl('&mode=broken'), '{}');
    expect(broken).toMatchObject({ status: 500, body: { error: 'TypeError: cannot read the order' } });
    const notJson = await post(webhookUrl(), 'not json');
    expect(notJson.status).toBe(500);
    expect(notJson.body.error).toMatch(/^SyntaxError: /);
    const spin = await post(webhookUrl('&mode=spin'), '{}');
    expect(spin.status).toBe(503);
    expect(spin.headers.get('retry-after')).toBe('60');
    // A message the tracking API would refuse (a track without an event) fails the whole request.
    const refused = await post(webhookUrl('&mode=refused'), '{}');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/message 0 .*missing_event/);
    expect((await readSourceMessages(t, source)).size).toBe(before);
  }, 30_000);

  it('answers 413 past 512 KiB, 404 for an unknown or malformed key, 405 for other methods', async () => {
    const large = await post(webhookUrl(), 'x'.repeat(512 * 1024 + 1));
    expect(large.status).toBe(413);
    expect(large.body.error).toMatch(/at most 524288/);
    const exactly = await post(webhookUrl('&mode=invalid'), 'x'.repeat(512 * 1024));
    expect(exactly.status).toBe(400);

    const unknownKey = Buffer.from('no-such-write-key').toString('base64url');
    for (const url of [
      `${t.baseUrl}/v1/fn?b=${unknownKey}`,
      `${t.baseUrl}/v1/fn?b=%00%01`,
      `${t.baseUrl}/v1/fn?b=`,
      `${t.baseUrl}/v1/fn`,
      `${t.baseUrl}/v1/fn?b=${unknownKey}&b=${unknownKey}`,
    ]) {
      const answer = await post(url, '{}');
      expect({ url, status: answer.status }).toEqual({ url, status: 404 });
      expect(answer.body).toEqual({ error: expect.any(String) });
    }

    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const response = await fetch(webhookUrl(), { method });
      expect({ method, status: response.status }).toEqual({ method, status: 405 });
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({ error: expect.stringContaining('POST') });
    }
  }, 30_000);

  it('answers 404 for a write key of a source that runs no function', async () => {
    const plain = await fetch(`${t.baseUrl}/v1beta/workspaces/${workspace.slug}/sources`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        source: {
          name: `workspaces/${workspace.slug}/sources/plain-${Date.now()}`,
          catalog_name: 'catalog/sources/node',
        },
      }),
    });
    const writeKey = ((await plain.json()) as { write_keys: string[] }).write_keys[0];
    const answer = await post(`${t.baseUrl}/v1/fn?b=${Buffer.from(writeKey).toString('base64url')}`, '{}');
    expect(answer.status).toBe(404);
  }, 30_000);
});
