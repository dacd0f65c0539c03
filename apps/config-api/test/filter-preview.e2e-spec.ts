// POST /v1beta/filters/preview (docs/config-api.md §2.6): one filter run over a sample event exactly as the router
// runs it, with every bad input answered 400 in the Config API's error shape.
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
} from '../../../test/support/config-api.client';

describe('POST /v1beta/filters/preview', () => {
  let instance: TributaryTestInstance;
  let writer: ConfigApiClient;
  let reader: ConfigApiClient;
  const event = JSON.stringify({
    type: 'track',
    event: 'Order Completed',
    userId: 'u1',
    properties: { total: 42.5, email: 'someone@example.com' },
    context: { ip: '203.0.113.7' },
  });

  beforeAll(async () => {
    instance = await startTributary();
    ({ writer, reader } = await createWorkspaceWithTokens(new ConfigApiClient(instance), 'preview'));
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('answers the event as the destination would get it when the filter lets it through', async () => {
    const response = await writer.post('filters/preview', {
      filter: {
        if: "event = 'Order Completed'",
        actions: [
          {
            type: 'blocklist_fields',
            fields: { properties: { fields: ['email'] }, context: { fields: ['ip'] } },
          },
        ],
      },
      input: event,
    });
    expect(response.status).toBe(200);
    expect(response.body.result).toBe('pass');
    const output = JSON.parse(response.body.output);
    expect(output.properties).toEqual({ total: 42.5 });
    expect(output.context).toEqual({});
  });

  it('passes an event the condition does not match, unchanged', async () => {
    const response = await writer.post('filters/preview', {
      filter: { if: "event = 'Something Else'", actions: [{ type: 'drop_event' }] },
      input: event,
    });
    expect(response.body).toEqual({ result: 'pass', output: event });
  });

  it('says why an event is held back', async () => {
    const dropped = await writer.post('filters/preview', {
      filter: { if: "type = 'track'", actions: [{ type: 'drop_event' }] },
      input: event,
    });
    expect(dropped.body).toEqual({ result: 'dropped', output: null });
    const sampled = await writer.post('filters/preview', {
      filter: { if: 'all', actions: [{ type: 'sample_event', percent: 0, path: 'userId' }] },
      input: event,
    });
    expect(sampled.body).toEqual({ result: 'sampled_out', output: null });
  });

  it.each<[string, unknown]>([
    ['no filter', { input: event }],
    ['an input that is not a string', { filter: { if: 'all' }, input: { type: 'track' } }],
    ['an input that is not JSON', { filter: { if: 'all' }, input: '{nope' }],
    ['an input that is not an object', { filter: { if: 'all' }, input: '[1,2]' }],
    [
      'an FQL condition that does not compile',
      { filter: { if: "event = = 'x'", actions: [] }, input: event },
    ],
    ['an unknown action', { filter: { if: 'all', actions: [{ type: 'explode' }] }, input: event }],
    [
      'an input over 32 KiB',
      { filter: { if: 'all' }, input: JSON.stringify({ padding: 'x'.repeat(40_000) }) },
    ],
  ])('answers 400 for %s', async (_, body) => {
    expectConfigApiError(await writer.post('filters/preview', body), 400, 3);
  });

  it('refuses a match() glob over the budget with 400, and runs the longest accepted one against 32 KB quickly', async () => {
    const long = await writer.post('filters/preview', {
      filter: { if: `match(properties.x, '*${'a'.repeat(9_960)}b')`, actions: [{ type: 'drop_event' }] },
      input: JSON.stringify({ type: 'track', event: 'E', properties: { x: 'a'.repeat(31_000) } }),
    });
    expectConfigApiError(long, 400, 3);
    expect(long.body.error).toContain('the glob of match() is longer than 256 characters');

    const started = performance.now();
    const worst = await writer.post('filters/preview', {
      filter: { if: `match(properties.x, '*?${'a'.repeat(252)}b*')`, actions: [{ type: 'drop_event' }] },
      input: JSON.stringify({ type: 'track', event: 'E', properties: { x: 'a'.repeat(31_000) } }),
    });
    expect(worst.status).toBe(200);
    expect(worst.body.result).toBe('pass');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('needs a token, and a token that may write', async () => {
    expectConfigApiError(
      await writer.post('filters/preview', { filter: { if: 'all' }, input: event }, { token: null }),
      401,
      16,
    );
    expectConfigApiError(
      await reader.post('filters/preview', { filter: { if: 'all' }, input: event }),
      403,
      7,
    );
  });
});
