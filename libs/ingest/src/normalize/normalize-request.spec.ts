import { gzipSync } from 'node:zlib';
import {
  normalizedMessageSchema,
  trackingSuccessBody,
  trackingSuccessBodySchema,
} from '@tributary/contracts';
import { inflateBody } from '../inflate/inflate-body';
import { maxBodyBytesFor } from '../ingest-limits';
import { parseTrackingBody } from '../parse/parse-tracking-body';
import { resolveWriteKey } from '../write-key/resolve-write-key';
import {
  NODE_3_1_BATCH_BODY,
  PYTHON_2_2_BATCH_BODY,
  PYTHON_2_3_BATCH_BODY,
  RUBY_IMPORT_BODY,
} from './client-requests.fixture';
import { normalizeRequest, type NormalizeRequestInput } from './normalize-request';

const receivedAt = new Date('2026-11-25T21:15:06.000Z');

function sequentialIds(): () => string {
  let next = 0;
  return () => `generated-${++next}`;
}

function normalize(
  route: NormalizeRequestInput['route'],
  body: NormalizeRequestInput['body'],
  extra: Partial<NormalizeRequestInput> = {},
) {
  return normalizeRequest({ route, body, receivedAt, generateId: sequentialIds(), ...extra });
}

function acceptedValue(result: ReturnType<typeof normalize>) {
  if (!result.ok) throw new Error(`expected success, got ${result.error.code}: ${result.error.message}`);
  for (const { message } of result.value.accepted) {
    expect(normalizedMessageSchema.safeParse(message).error).toBeUndefined();
  }
  return result.value;
}

describe('normalizeRequest with the official clients’ exact requests', () => {
  it('given analytics-python 2.3.4 (writeKey in body, +00:00, microsecond sentAt, nulls), then all five are accepted', () => {
    const parsed = parseTrackingBody('batch', Buffer.from(PYTHON_2_3_BATCH_BODY));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(resolveWriteKey(undefined, parsed.value.body)).toEqual({
      ok: true,
      value: { scheme: 'body', writeKey: 'WK' },
    });

    const { accepted, rejected } = acceptedValue(normalize('batch', parsed.value));
    expect(rejected).toEqual([]);
    expect(accepted.map(({ index, message }) => [index, message.type])).toEqual([
      [0, 'track'],
      [1, 'page'],
      [2, 'alias'],
      [3, 'identify'],
      [4, 'group'],
    ]);

    const [track, page, alias, identify, group] = accepted.map(({ message }) => message);
    expect(track).toEqual({
      type: 'track',
      messageId: '0b7c9d1e-6a0f-4b8e-9a57-2f3d4c5b6a71',
      userId: 'u1',
      event: 'Order Completed',
      properties: { revenue: 9.99, coupon: null, city: 'München' },
      context: { library: { name: 'analytics-python', version: '2.3.4' } },
      integrations: {},
      // receivedAt − (sentAt .412774 → .412 − originalTimestamp .320) = 06.000 − 0.092
      timestamp: '2026-11-25T21:15:05.908Z',
      originalTimestamp: '2026-11-25T21:15:05.320Z',
      sentAt: '2026-11-25T21:15:05.412Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
    expect(page).toEqual({
      type: 'page',
      messageId: '1c8d0e2f-7b10-4c9f-8b68-3e4d5c6b7a82',
      anonymousId: 'a1',
      properties: {},
      context: { library: { name: 'analytics-python', version: '2.3.4' } },
      integrations: {},
      timestamp: '2026-11-25T21:15:05.909Z',
      originalTimestamp: '2026-11-25T21:15:05.321Z',
      sentAt: '2026-11-25T21:15:05.412Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
    expect(alias).toMatchObject({ userId: 'u1', previousId: 'a1' });
    expect(alias).not.toHaveProperty('anonymousId');
    expect(identify.traits).toEqual({ email: 'a@example.com', age: null });
    expect(identify).not.toHaveProperty('anonymousId');
    expect(group).toMatchObject({ groupId: 'g1', traits: {} });
  });

  it('given analytics-python ≤ 2.2 gzipped with Basic auth and microsecond timestamps, then it is accepted', () => {
    const inflated = inflateBody(gzipSync(PYTHON_2_2_BATCH_BODY), 'gzip', maxBodyBytesFor('batch'));
    if (!inflated.ok) throw new Error(inflated.error.message);
    const parsed = parseTrackingBody('batch', inflated.value);
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(resolveWriteKey('Basic V0s6', parsed.value.body)).toEqual({
      ok: true,
      value: { scheme: 'basic', writeKey: 'WK' },
    });

    const { accepted } = acceptedValue(normalize('batch', parsed.value));
    expect(accepted[0].message).toMatchObject({
      originalTimestamp: '2026-11-25T21:15:05.320Z',
      sentAt: '2026-11-25T21:15:05.000Z',
      // The client clock claims it sent 0.32 s before the event: the correction still applies.
      timestamp: '2026-11-25T21:15:06.320Z',
    });
  });

  it('given analytics-ruby 2.5.0 on /v1/import with Basic V0s6 and no writeKey in the body, then it is accepted', () => {
    const parsed = parseTrackingBody('import', Buffer.from(RUBY_IMPORT_BODY));
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(resolveWriteKey('Basic V0s6', parsed.value.body)).toEqual({
      ok: true,
      value: { scheme: 'basic', writeKey: 'WK' },
    });
    expect(resolveWriteKey(undefined, parsed.value.body).ok).toBe(false);

    const { route, accepted, rejected } = acceptedValue(normalize('import', parsed.value));
    expect(route).toBe('import');
    expect(rejected).toEqual([]);
    expect(accepted[0].message).toEqual({
      type: 'track',
      messageId: '6bd25374-c065-41e4-b01d-8392a2b22fd7',
      userId: 'u1',
      event: 'Order Completed',
      properties: { city: 'München' },
      options: { foo: 'bar' },
      context: { library: { name: 'analytics-ruby', version: '2.5.0' } },
      integrations: {},
      timestamp: '2026-11-25T21:15:05.908Z',
      originalTimestamp: '2026-11-25T21:15:05.320Z',
      sentAt: '2026-11-25T21:15:05.412Z',
      receivedAt: '2026-11-25T21:15:06.000Z',
    });
    expect(accepted[1].message).toMatchObject({ type: 'page', anonymousId: 'a1', name: '' });
  });

  it('given @segment/analytics-node 3.1.0, then _metadata is dropped and the group with only groupId is rejected', () => {
    const parsed = parseTrackingBody('batch', NODE_3_1_BATCH_BODY);
    if (!parsed.ok) throw new Error(parsed.error.message);
    expect(resolveWriteKey('Basic V0s6', parsed.value.body)).toEqual({
      ok: true,
      value: { scheme: 'basic', writeKey: 'WK' },
    });
    expect(resolveWriteKey('Bearer t0ken', parsed.value.body)).toEqual({
      ok: true,
      value: { scheme: 'bearer', writeKey: 'WK', bearerToken: 't0ken' },
    });

    const { accepted, rejected } = acceptedValue(normalize('batch', parsed.value));
    expect(accepted.map(({ index }) => index)).toEqual([0, 1, 3, 4, 5]);
    expect(rejected).toEqual([
      {
        index: 2,
        messageId: 'node-next-1795644748580-4895b0d4-d81b-455f-acc2-b984b7c36be3',
        code: 'no_user_anon_id',
        message: expect.any(String),
      },
    ]);
    for (const { message } of accepted) {
      expect(message).not.toHaveProperty('_metadata');
      expect(message.sentAt).toBe('2026-11-25T21:15:05.330Z');
      expect(message.context).toEqual({ library: { name: '@segment/analytics-node', version: '3.1.0' } });
    }
    expect(accepted[0].message).toMatchObject({
      messageId: 'node-next-1795644748578-2f7398eb-4895-40d4-981b-b55fecc2b984',
      properties: { plan: 'pro', n: null },
      timestamp: '2026-11-25T21:15:05.990Z',
    });
    // Node copies the page category into properties; both copies are kept.
    expect(accepted[1].message).toMatchObject({
      category: 'Docs',
      name: 'Home',
      properties: { url: 'x', category: 'Docs' },
    });
  });
});

describe('normalizeRequest on batch routes', () => {
  it('given an empty batch, then success with nothing accepted or rejected', () => {
    expect(normalize('batch', '{"batch":[]}')).toEqual({
      ok: true,
      value: { route: 'batch', accepted: [], rejected: [] },
    });
  });

  it('given valid and invalid messages, then valid ones are accepted and each invalid one is reported by index', () => {
    const body = JSON.stringify({
      batch: [
        { type: 'track', userId: 'u', event: 'ok', messageId: 'm0' },
        { type: 'track', userId: 'u', messageId: 'm1' },
        { type: 'identify', messageId: 'm2' },
        { type: 'bogus', userId: 'u', messageId: 'm3' },
        { userId: 'u' },
        { type: 'identify', userId: 'u', messageId: 'x'.repeat(101) },
        'not a message',
        { type: 'identify', userId: 'u', context: 'x', messageId: 7 },
        { type: 'identify', anonymousId: 'a' },
      ],
    });
    const { accepted, rejected } = acceptedValue(normalize('batch', body));
    expect(accepted.map(({ index, message }) => [index, message.messageId])).toEqual([
      [0, 'm0'],
      [8, 'generated-1'],
    ]);
    expect(rejected.map(({ index, code, messageId }) => [index, code, messageId])).toEqual([
      [1, 'missing_event', 'm1'],
      [2, 'no_user_anon_id', 'm2'],
      [3, 'invalid_type', 'm3'],
      [4, 'invalid_type', undefined],
      [5, 'invalid_message_id', 'x'.repeat(101)],
      [6, 'invalid_request', undefined],
      [7, 'invalid_request', '7'],
    ]);
    expect(rejected[3]).not.toHaveProperty('messageId');
    expect(rejected[5]).not.toHaveProperty('messageId');
    // The 200 body built from these rejections satisfies the wire contract.
    expect(trackingSuccessBodySchema.safeParse(trackingSuccessBody(rejected)).success).toBe(true);
  });

  it('given every message in one request, then they all share one receivedAt', () => {
    const body = JSON.stringify({ batch: [1, 2, 3].map((n) => ({ type: 'identify', userId: `u${n}` })) });
    const { accepted } = acceptedValue(normalize('batch', body));
    expect(new Set(accepted.map(({ message }) => message.receivedAt))).toEqual(
      new Set(['2026-11-25T21:15:06.000Z']),
    );
  });

  it('given batch-level context, integrations and sentAt, then every item gets them under its own values', () => {
    const body = JSON.stringify({
      batch: [
        {
          type: 'identify',
          userId: 'u1',
          timestamp: '2026-11-25T21:15:00.000Z',
          sentAt: '1999-01-01T00:00:00Z',
        },
        { type: 'identify', userId: 'u2', context: { ip: 'mine' }, integrations: { All: true } },
      ],
      sentAt: '2026-11-25T21:15:01.000Z',
      context: { ip: '1.2.3.4', locale: 'fr' },
      integrations: { All: false },
    });
    const { accepted } = acceptedValue(normalize('batch', body));
    expect(accepted[0].message).toMatchObject({
      context: { ip: '1.2.3.4', locale: 'fr' },
      integrations: { All: false },
      sentAt: '2026-11-25T21:15:01.000Z',
      timestamp: '2026-11-25T21:15:05.000Z',
    });
    expect(accepted[1].message).toMatchObject({
      context: { ip: 'mine', locale: 'fr' },
      integrations: { All: true },
    });
  });

  it('given exactly 2,500 messages, then none is rejected', () => {
    const batch = Array.from({ length: 2500 }, (_, n) => ({ type: 'identify', userId: `u${n}` }));
    const { accepted, rejected } = acceptedValue(normalize('batch', JSON.stringify({ batch })));
    expect(accepted).toHaveLength(2500);
    expect(rejected).toEqual([]);
  });

  it('given 2,503 messages, then the first 2,500 are kept and the rest are rejected as batch_too_long', () => {
    const batch: unknown[] = Array.from({ length: 2500 }, (_, n) => ({
      type: 'identify',
      userId: `u${n}`,
      messageId: `m${n}`,
    }));
    // Past the cap nothing is validated: even an invalid item is reported only as batch_too_long.
    batch.push(
      { type: 'identify', userId: 'late', messageId: 'm2500' },
      { type: 'nope', messageId: 2501 },
      'junk',
    );
    const { accepted, rejected } = acceptedValue(normalize('batch', JSON.stringify({ batch })));
    expect(accepted).toHaveLength(2500);
    expect(accepted[2499].message.messageId).toBe('m2499');
    expect(rejected).toEqual([
      { index: 2500, messageId: 'm2500', code: 'batch_too_long', message: expect.stringContaining('2500') },
      { index: 2501, messageId: '2501', code: 'batch_too_long', message: expect.any(String) },
      { index: 2502, code: 'batch_too_long', message: expect.any(String) },
    ]);
  });

  it('given a message over 32 KiB in a batch, then the whole request is refused with payload_too_large', () => {
    const big = { type: 'identify', userId: 'u', traits: { blob: 'x'.repeat(33 * 1024) } };
    const result = normalize('batch', JSON.stringify({ batch: [{ type: 'identify', userId: 'ok' }, big] }));
    expect(result).toEqual({
      ok: false,
      error: { code: 'payload_too_large', status: 400, message: expect.stringContaining('batch index 1') },
    });
  });

  it.each([
    ['invalid JSON', '{"batch":', 'invalid_json'],
    ['no batch array', '{"writeKey":"WK"}', 'invalid_request'],
    ['a JSON array', '[]', 'invalid_request'],
  ])('given %s, then the request is refused with %s', (_, body, code) => {
    expect(normalize('batch', body)).toEqual({
      ok: false,
      error: { code, status: 400, message: expect.any(String) },
    });
  });
});

describe('normalizeRequest on single-event routes', () => {
  it('given a valid track body with writeKey and sentAt, then one message is accepted at index 0', () => {
    const body = JSON.stringify({
      userId: 'u1',
      event: 'Clicked',
      writeKey: 'WK',
      sentAt: '2026-11-25T21:15:05.500Z',
      timestamp: '2026-11-25T21:15:05.000Z',
      messageId: 'm-single',
    });
    const { accepted, rejected } = acceptedValue(normalize('track', body));
    expect(rejected).toEqual([]);
    expect(accepted).toEqual([
      {
        index: 0,
        message: {
          type: 'track',
          messageId: 'm-single',
          userId: 'u1',
          event: 'Clicked',
          context: {},
          integrations: {},
          timestamp: '2026-11-25T21:15:05.500Z',
          originalTimestamp: '2026-11-25T21:15:05.000Z',
          sentAt: '2026-11-25T21:15:05.500Z',
          receivedAt: '2026-11-25T21:15:06.000Z',
        },
      },
    ]);
  });

  it('given a body whose type disagrees with the path, then the path wins', () => {
    const { accepted } = acceptedValue(normalize('identify', '{"type":"track","userId":"u"}'));
    expect(accepted[0].message.type).toBe('identify');
  });

  it.each(['identify', 'page', 'screen', 'group', 'alias'] as const)(
    'given /v1/%s with only an anonymousId, then it is accepted with that type',
    (route) => {
      const { accepted } = acceptedValue(normalize(route, '{"anonymousId":"a1"}'));
      expect(accepted[0].message).toMatchObject({ type: route, anonymousId: 'a1' });
    },
  );

  it.each([
    ['track', '{"event":"e"}', 'no_user_anon_id'],
    ['track', '{"userId":"u"}', 'missing_event'],
    ['track', '{"userId":"u","event":null}', 'missing_event'],
    ['identify', `{"userId":"u","messageId":"${'m'.repeat(101)}"}`, 'invalid_message_id'],
    ['identify', '{"userId":"u","traits":[]}', 'invalid_request'],
    ['group', '{"groupId":"g1"}', 'no_user_anon_id'],
  ] as const)('given /v1/%s with %s, then 400 with code %s', (route, body, code) => {
    expect(normalize(route, body)).toEqual({
      ok: false,
      error: { code, status: 400, message: expect.any(String) },
    });
  });

  it('given a single-event body over 32 KiB, then payload_too_large', () => {
    const body = JSON.stringify({ userId: 'u', event: 'e', properties: { blob: 'x'.repeat(32 * 1024) } });
    expect(normalize('track', body)).toMatchObject({
      ok: false,
      error: { code: 'payload_too_large', status: 400 },
    });
  });
});

describe('normalizeRequest misuse', () => {
  it('given a body parsed for another route, then it throws', () => {
    const parsed = parseTrackingBody('track', '{"userId":"u","event":"e"}');
    if (!parsed.ok) throw new Error('unexpected');
    expect(() => normalize('identify', parsed.value)).toThrow(/parsed for \/v1\/track/);
  });

  it('given an invalid receivedAt, then it throws before looking at the body', () => {
    expect(() => normalize('batch', '{"batch":[]}', { receivedAt: new Date(Number.NaN) })).toThrow(TypeError);
  });

  it('given a pre-parsed body, then the result equals parsing the raw body', () => {
    const parsed = parseTrackingBody('batch', NODE_3_1_BATCH_BODY);
    if (!parsed.ok) throw new Error('unexpected');
    expect(normalize('batch', parsed.value)).toEqual(normalize('batch', NODE_3_1_BATCH_BODY));
  });
});

describe('client address (clientIp, client-side requests only)', () => {
  it('fills context.ip when a message has none, null or an empty one, and keeps one that was sent', () => {
    const body = JSON.stringify({
      batch: [
        { type: 'track', event: 'A', anonymousId: 'a', messageId: 'm1' },
        { type: 'track', event: 'B', anonymousId: 'a', messageId: 'm2', context: { ip: null } },
        { type: 'track', event: 'C', anonymousId: 'a', messageId: 'm3', context: { ip: '' } },
        { type: 'track', event: 'D', anonymousId: 'a', messageId: 'm4', context: { ip: '198.51.100.7' } },
      ],
      context: { locale: 'fr-FR' },
    });
    const { accepted } = acceptedValue(normalize('batch', body, { clientIp: '203.0.113.9' }));
    expect(accepted.map(({ message }) => message.context)).toEqual([
      { locale: 'fr-FR', ip: '203.0.113.9' },
      { locale: 'fr-FR', ip: '203.0.113.9' },
      { locale: 'fr-FR', ip: '203.0.113.9' },
      { locale: 'fr-FR', ip: '198.51.100.7' },
    ]);
  });

  it('fills it on a single-event route too', () => {
    const body = JSON.stringify({ event: 'A', userId: 'u', context: { page: { url: 'https://x.test/' } } });
    const { accepted } = acceptedValue(normalize('track', body, { clientIp: '2001:db8::1' }));
    expect(accepted[0].message.context).toEqual({ page: { url: 'https://x.test/' }, ip: '2001:db8::1' });
  });

  it('leaves context alone without a client address (server-side libraries)', () => {
    const body = JSON.stringify({ event: 'A', userId: 'u' });
    const { accepted } = acceptedValue(normalize('track', body));
    expect(accepted[0].message.context).toEqual({});
  });
});
