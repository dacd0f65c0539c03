import { AnalyticsValidationError } from './errors';
import {
  buildMessage,
  MAX_MESSAGE_BYTES,
  serializeMessage,
  type EventType,
  type ParamsByType,
} from './message-builder';
import { LIBRARY_NAME, VERSION } from './version';

const FIXED_NOW = new Date('2026-03-04T05:06:07.089Z');
const environment = { generateId: () => 'generated-id', now: () => FIXED_NOW };

function build<T extends EventType>(type: T, params: ParamsByType[T]) {
  return buildMessage(type, params, environment);
}

function refusal(run: () => unknown): AnalyticsValidationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AnalyticsValidationError);
    return error as AnalyticsValidationError;
  }
  throw new Error('expected an AnalyticsValidationError, nothing was thrown');
}

const library = { name: LIBRARY_NAME, version: VERSION };

describe('buildMessage: the wire message of each call', () => {
  it('track: event, properties, ids as strings, library context, defaults', () => {
    expect(build('track', { userId: 42, event: 'Order Completed', properties: { total: 9.5 } })).toEqual({
      type: 'track',
      messageId: 'generated-id',
      timestamp: '2026-03-04T05:06:07.089Z',
      userId: '42',
      context: { library },
      integrations: {},
      event: 'Order Completed',
      properties: { total: 9.5 },
    });
  });

  it('identify, page, screen, group and alias carry their own fields', () => {
    expect(build('identify', { anonymousId: 'a1', traits: { plan: 'pro' } })).toMatchObject({
      type: 'identify',
      anonymousId: 'a1',
      traits: { plan: 'pro' },
    });
    expect(
      build('page', { userId: 'u', name: 'Home', category: 'Docs', properties: { path: '/' } }),
    ).toMatchObject({
      type: 'page',
      name: 'Home',
      category: 'Docs',
      properties: { path: '/' },
    });
    expect(build('screen', { userId: 'u' })).toEqual({
      type: 'screen',
      messageId: 'generated-id',
      timestamp: FIXED_NOW.toISOString(),
      userId: 'u',
      context: { library },
      integrations: {},
      properties: {},
    });
    expect(build('group', { userId: 'u', groupId: 7, traits: { size: 3 } })).toMatchObject({
      type: 'group',
      groupId: '7',
      traits: { size: 3 },
    });
    expect(build('alias', { userId: 'new', previousId: 'old' })).toEqual({
      type: 'alias',
      messageId: 'generated-id',
      timestamp: FIXED_NOW.toISOString(),
      userId: 'new',
      previousId: 'old',
      context: { library },
      integrations: {},
    });
  });

  it('keeps caller context and integrations, but the library entry is always its own', () => {
    const message = build('track', {
      userId: 'u',
      event: 'e',
      context: { ip: '203.0.113.9', library: { name: 'spoof', version: '9' } },
      integrations: { All: false, Mixpanel: true },
    });
    expect(message.context).toEqual({ ip: '203.0.113.9', library });
    expect(message.integrations).toEqual({ All: false, Mixpanel: true });
  });

  it('keeps a caller messageId and a string timestamp verbatim, offset included', () => {
    const message = build('track', {
      userId: 'u',
      event: 'e',
      messageId: 'my-id-1',
      timestamp: '2026-01-02T03:04:05.678-05:00',
    });
    expect(message.messageId).toBe('my-id-1');
    expect(message.timestamp).toBe('2026-01-02T03:04:05.678-05:00');
    expect(JSON.parse(serializeMessage(message).json).timestamp).toBe('2026-01-02T03:04:05.678-05:00');
  });

  it('sends a Date timestamp as UTC ISO-8601 with milliseconds', () => {
    const message = build('track', {
      userId: 'u',
      event: 'e',
      timestamp: new Date(Date.UTC(2025, 11, 31, 23, 59, 58, 7)),
    });
    expect(message.timestamp).toBe('2025-12-31T23:59:58.007Z');
  });

  it('treats "" and null ids as absent: one of the two is enough', () => {
    const message = build('track', { userId: '', anonymousId: 'anon', event: 'e' });
    expect(message).not.toHaveProperty('userId');
    expect(message.anonymousId).toBe('anon');
  });
});

describe('buildMessage: invalid calls are refused with a typed error naming the problem', () => {
  it.each([
    ['track', { event: 'e' }, 'missing_user_or_anonymous_id', 'userId'],
    ['identify', { userId: '', anonymousId: null }, 'missing_user_or_anonymous_id', 'userId'],
    ['page', {}, 'missing_user_or_anonymous_id', 'userId'],
    ['track', { userId: 'u' }, 'missing_event', 'event'],
    ['track', { userId: 'u', event: 42 }, 'missing_event', 'event'],
    ['track', { userId: 'u', event: '  ' }, 'missing_event', 'event'],
    ['alias', { previousId: 'old' }, 'missing_user_id', 'userId'],
    ['alias', { anonymousId: 'a', previousId: 'old' }, 'missing_user_id', 'userId'],
    ['alias', { userId: 'new' }, 'missing_previous_id', 'previousId'],
    ['group', { userId: 'u' }, 'missing_group_id', 'groupId'],
    ['track', { userId: { id: 1 }, event: 'e' }, 'invalid_field', 'userId'],
    ['track', { userId: Number.NaN, event: 'e' }, 'invalid_field', 'userId'],
    ['track', { userId: 'u', event: 'e', properties: [1, 2] }, 'invalid_field', 'properties'],
    ['identify', { userId: 'u', traits: 'pro' }, 'invalid_field', 'traits'],
    ['track', { userId: 'u', event: 'e', context: new Map() }, 'invalid_field', 'context'],
    ['page', { userId: 'u', name: 3 }, 'invalid_field', 'name'],
    ['track', { userId: 'u', event: 'e', timestamp: 'yesterday-ish' }, 'invalid_timestamp', 'timestamp'],
    ['track', { userId: 'u', event: 'e', timestamp: new Date('nope') }, 'invalid_timestamp', 'timestamp'],
    ['track', { userId: 'u', event: 'e', timestamp: 1700000000000 }, 'invalid_timestamp', 'timestamp'],
    ['track', { userId: 'u', event: 'e', messageId: 'x'.repeat(101) }, 'invalid_message_id', 'messageId'],
    ['track', { userId: 'u', event: 'e', messageId: 'line\nbreak' }, 'invalid_message_id', 'messageId'],
    ['track', { userId: 'u', event: 'e', messageId: 12 }, 'invalid_message_id', 'messageId'],
  ] as const)('%s %j → %s', (type, params, code, field) => {
    const error = refusal(() => build(type, params as never));
    expect(error.code).toBe(code);
    expect(error.field).toBe(field);
    expect(error.message).toContain(type);
  });

  it('refuses a call without a parameter object', () => {
    expect(refusal(() => build('track', undefined as never)).code).toBe('invalid_argument');
    expect(refusal(() => build('track', 'event' as never)).code).toBe('invalid_argument');
  });

  it('accepts a messageId of exactly 100 characters, counting code points', () => {
    expect(build('track', { userId: 'u', event: 'e', messageId: '😀'.repeat(100) }).messageId).toHaveLength(
      200,
    );
  });
});

describe('serializeMessage: the 32 KiB limit is measured in UTF-8 bytes', () => {
  const base = build('track', { userId: 'u', event: 'e' });
  const overhead = Buffer.byteLength(JSON.stringify({ ...base, properties: { p: '' } }));

  it('accepts a message of exactly 32,768 bytes and reports its size', () => {
    const message = { ...base, properties: { p: 'a'.repeat(MAX_MESSAGE_BYTES - overhead) } };
    const serialized = serializeMessage(message);
    expect(serialized.bytes).toBe(MAX_MESSAGE_BYTES);
    expect(serialized.json).toBe(JSON.stringify(message));
  });

  it('refuses one byte more, naming the size', () => {
    const message = { ...base, properties: { p: 'a'.repeat(MAX_MESSAGE_BYTES - overhead + 1) } };
    const error = refusal(() => serializeMessage(message));
    expect(error.code).toBe('message_too_large');
    expect(error.message).toContain(`${MAX_MESSAGE_BYTES + 1} bytes`);
  });

  it('counts multi-byte characters by their bytes: 12,000 "é" are 24,000 bytes but 12,000 characters', () => {
    const ascii = { ...base, properties: { p: 'e'.repeat(20_000) } };
    const accented = { ...base, properties: { p: 'é'.repeat(20_000) } };
    expect(serializeMessage(ascii).bytes).toBeLessThan(MAX_MESSAGE_BYTES);
    expect(JSON.stringify(accented).length).toBeLessThan(MAX_MESSAGE_BYTES);
    expect(refusal(() => serializeMessage(accented)).code).toBe('message_too_large');
  });

  it('refuses values JSON cannot hold', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(refusal(() => serializeMessage({ ...base, properties: circular })).code).toBe('not_serializable');
    expect(refusal(() => serializeMessage({ ...base, properties: { n: BigInt(1) } })).code).toBe(
      'not_serializable',
    );
  });
});
