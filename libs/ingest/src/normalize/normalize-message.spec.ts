import { incomingMessageSchema, normalizedMessageSchema } from '@tributary/contracts';
import fc from 'fast-check';
import { findMistypedField, normalizeMessage, type MessageNormalizationContext } from './normalize-message';

const receivedAt = new Date('2026-11-25T21:15:06.000Z');

function sequentialIds(): () => string {
  let next = 0;
  return () => `generated-${++next}`;
}

function inBatch(extra: Partial<MessageNormalizationContext> = {}): MessageNormalizationContext {
  return { receivedAt, generateId: sequentialIds(), ...extra };
}

function accepted(raw: unknown, context = inBatch()) {
  const result = normalizeMessage(raw, context);
  if (!result.ok) throw new Error(`expected acceptance, got ${result.code}: ${result.message}`);
  // Every accepted message must satisfy the stored-message contract.
  expect(normalizedMessageSchema.safeParse(result.message).error).toBeUndefined();
  return result;
}

describe('normalizeMessage', () => {
  describe('given a minimal valid message of each type', () => {
    it.each([
      [{ type: 'track', userId: 'u1', event: 'Signed Up' }],
      [{ type: 'identify', userId: 'u1' }],
      [{ type: 'page', anonymousId: 'a1' }],
      [{ type: 'screen', anonymousId: 'a1' }],
      [{ type: 'group', userId: 'u1', groupId: 'g1' }],
      [{ type: 'alias', userId: 'u1', previousId: 'u0' }],
    ])('when %j is normalized, then it gains messageId, context, integrations and timestamps', (raw) => {
      const { message } = accepted({ ...raw, messageId: 'm-1' });
      expect(message).toEqual({
        ...raw,
        messageId: 'm-1',
        context: {},
        integrations: {},
        timestamp: '2026-11-25T21:15:06.000Z',
        receivedAt: '2026-11-25T21:15:06.000Z',
      });
    });
  });

  describe('null means absent (docs/tracking-api.md §6.4)', () => {
    it('when Python sends anonymousId, name and category as null, then they are left out', () => {
      const { message } = accepted({
        type: 'page',
        messageId: 'm',
        userId: 'u1',
        anonymousId: null,
        name: null,
        category: null,
        properties: null,
        context: null,
        integrations: null,
        timestamp: null,
        sentAt: null,
      });
      expect(message).not.toHaveProperty('anonymousId');
      expect(message).not.toHaveProperty('name');
      expect(message).not.toHaveProperty('category');
      expect(message).not.toHaveProperty('properties');
      expect(message).not.toHaveProperty('originalTimestamp');
      expect(message).not.toHaveProperty('sentAt');
      expect(message.context).toEqual({});
      expect(message.integrations).toEqual({});
    });

    it('when an unknown top-level key is null, then it is left out too', () => {
      expect(accepted({ type: 'identify', userId: 'u', extra: null }).message).not.toHaveProperty('extra');
    });

    it('when properties, traits and context hold nulls and date strings, then they are kept verbatim', () => {
      const properties = {
        coupon: null,
        nested: { a: null },
        list: [null, 1],
        day: '2012-03-04',
        at: '2012-03-04T05:06:07.891011',
      };
      const traits = { email: null, plan: 'pro' };
      const context = { ip: null, library: { name: 'analytics-python', version: '2.3.4' } };
      expect(accepted({ type: 'track', userId: 'u', event: 'e', properties, context }).message).toMatchObject(
        {
          properties,
          context,
        },
      );
      expect(accepted({ type: 'identify', userId: 'u', traits }).message.traits).toEqual(traits);
    });
  });

  describe('unknown and special keys', () => {
    it('when unknown keys are sent, then they are preserved as sent', () => {
      const { message } = accepted({
        type: 'identify',
        userId: 'u',
        version: 2,
        channel: 'server',
        custom: { deep: [1] },
      });
      expect(message).toMatchObject({ version: 2, channel: 'server', custom: { deep: [1] } });
    });

    it('when Ruby sends options, then it is kept like any unknown key', () => {
      expect(accepted({ type: 'identify', userId: 'u', options: { foo: 1 } }).message).toMatchObject({
        options: { foo: 1 },
      });
    });

    it('when Node sends _metadata, then it is dropped (tolerated, not stored)', () => {
      const { message } = accepted({
        type: 'identify',
        userId: 'u',
        _metadata: { nodeVersion: 'v20', jsRuntime: 'node' },
      });
      expect(message).not.toHaveProperty('_metadata');
    });

    it('when a writeKey is inside the message, then it is dropped: a credential is never stored', () => {
      expect(accepted({ type: 'identify', userId: 'u', writeKey: 'secret' }).message).not.toHaveProperty(
        'writeKey',
      );
    });

    it('when the client sends receivedAt and originalTimestamp, then Tributary’s own values replace them', () => {
      const { message } = accepted({
        type: 'identify',
        userId: 'u',
        receivedAt: '1999-01-01T00:00:00Z',
        originalTimestamp: '1999-01-01T00:00:00Z',
      });
      expect(message.receivedAt).toBe('2026-11-25T21:15:06.000Z');
      expect(message).not.toHaveProperty('originalTimestamp');
    });

    it('when a "__proto__" key is sent at any level, then it stays data and pollutes nothing', () => {
      const raw = JSON.parse(
        '{"type":"identify","userId":"u","__proto__":{"polluted":true},"context":{"__proto__":{"polluted":true}}}',
      );
      const { message } = accepted(
        raw,
        inBatch({ batchContext: JSON.parse('{"__proto__":{"fromBatch":true}}') }),
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect((message as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(message.context)).toBe(Object.prototype);
      expect(Object.hasOwn(message, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(message.context, '__proto__')?.value).toEqual({
        polluted: true,
      });
    });
  });

  describe('ids sent as numbers become strings (docs/tracking-api.md §6.1)', () => {
    it('when userId, anonymousId, groupId, previousId and messageId are numbers, then each is a string', () => {
      const { message } = accepted({
        type: 'group',
        messageId: 12345,
        userId: 42,
        anonymousId: 0,
        groupId: 7.5,
        previousId: -3,
      });
      expect(message).toMatchObject({
        messageId: '12345',
        userId: '42',
        anonymousId: '0',
        groupId: '7.5',
        previousId: '-3',
      });
    });

    it('when userId is the number 0, then it still identifies the user', () => {
      expect(accepted({ type: 'identify', userId: 0 }).message.userId).toBe('0');
    });
  });

  describe('type', () => {
    it('when a single-event route names the type, then a different body type is overridden', () => {
      const { message } = accepted(
        { type: 'identify', userId: 'u', event: 'e' },
        inBatch({ routeType: 'track' }),
      );
      expect(message.type).toBe('track');
    });

    it('when a single-event route names the type, then a missing or bogus body type does not matter', () => {
      expect(accepted({ userId: 'u' }, inBatch({ routeType: 'identify' })).message.type).toBe('identify');
      expect(accepted({ userId: 'u', type: 42 }, inBatch({ routeType: 'alias' })).message.type).toBe('alias');
    });

    it.each([
      ['missing', {}, 'has no "type"'],
      ['null', { type: null }, 'has no "type"'],
      ['unknown', { type: 'event' }, 'Unknown type "event"'],
      ['capitalised', { type: 'Track' }, 'Unknown type "Track"'],
      ['a number', { type: 1 }, 'Unknown type 1'],
      ['an array', { type: ['track'] }, 'Unknown type ["track"]'],
    ])('when a batch item’s type is %s, then invalid_type', (_, fields, text) => {
      const result = normalizeMessage({ userId: 'u', event: 'e', messageId: 'm-9', ...fields }, inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'invalid_type',
        message: expect.stringContaining(text),
        messageId: 'm-9',
      });
    });
  });

  describe('messageId (docs/tracking-api.md §6.3)', () => {
    it.each([
      ['absent', {}],
      ['null', { messageId: null }],
      ['empty', { messageId: '' }],
    ])('when it is %s, then a generated id is used', (_, fields) => {
      const result = accepted({ type: 'identify', userId: 'u', ...fields });
      expect(result.message.messageId).toBe('generated-1');
    });

    it('when several messages lack ids, then each gets a fresh one', () => {
      const context = inBatch();
      const ids = [1, 2, 3].map(() => accepted({ type: 'identify', userId: 'u' }, context).message.messageId);
      expect(ids).toEqual(['generated-1', 'generated-2', 'generated-3']);
    });

    it('when it is exactly 100 characters, then it is kept', () => {
      const result = accepted({ type: 'identify', userId: 'u', messageId: 'x'.repeat(100) });
      expect(result.message.messageId).toBe('x'.repeat(100));
    });

    it('when it is Node’s node-next-<ms>-<uuid> form, then it is kept', () => {
      const id = 'node-next-1764105305320-2f7398eb-4895-40d4-981b-b55fecc2b984';
      expect(accepted({ type: 'identify', userId: 'u', messageId: id }).message.messageId).toBe(id);
    });

    it('when it is 100 emoji (200 UTF-16 units), then it is kept: the limit counts characters', () => {
      const id = '😀'.repeat(100);
      expect(accepted({ type: 'identify', userId: 'u', messageId: id }).message.messageId).toBe(id);
    });

    it('when it is 101 characters, then invalid_message_id, never truncated', () => {
      const id = 'x'.repeat(101);
      expect(normalizeMessage({ type: 'identify', userId: 'u', messageId: id }, inBatch())).toEqual({
        ok: false,
        code: 'invalid_message_id',
        message: '"messageId" is 101 characters long; the limit is 100',
        messageId: id,
      });
    });

    it.each([
      ['CR LF', 'm\r\nNats-Expected-Stream: X'],
      ['LF', 'm\n1'],
      ['CR', 'm\r1'],
      ['NUL', 'm\u00001'],
      ['TAB', 'm\t1'],
      ['DEL', 'm\u007f1'],
    ])(
      'when it contains %s, then invalid_message_id: it would break the Nats-Msg-Id header',
      (_, messageId) => {
        expect(normalizeMessage({ type: 'identify', userId: 'u', messageId }, inBatch())).toEqual({
          ok: false,
          code: 'invalid_message_id',
          message: expect.stringContaining('control characters'),
          messageId,
        });
      },
    );

    it('when it contains spaces, punctuation or non-ASCII letters, then it is kept', () => {
      for (const id of ['with space', 'a:b/c?d=e&f#g', 'ünïcødé-😀', 'x\u0085y']) {
        expect(accepted({ type: 'identify', userId: 'u', messageId: id }).message.messageId).toBe(id);
      }
    });

    it.each([
      ['an object', { id: 1 }],
      ['an array', ['m']],
      ['a boolean', true],
    ])('when it is %s, then invalid_message_id', (_, messageId) => {
      const result = normalizeMessage({ type: 'identify', userId: 'u', messageId }, inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'invalid_message_id',
        message: expect.stringContaining('must be a string'),
      });
    });

    it('when the id generator misbehaves, then it throws: that is a wiring bug', () => {
      expect(() =>
        normalizeMessage({ type: 'identify', userId: 'u' }, inBatch({ generateId: () => '' })),
      ).toThrow(TypeError);
      expect(() =>
        normalizeMessage({ type: 'identify', userId: 'u' }, inBatch({ generateId: () => 'x'.repeat(101) })),
      ).toThrow(TypeError);
    });
  });

  describe('identity (no_user_anon_id)', () => {
    it.each([
      ['neither id', {}],
      ['both null', { userId: null, anonymousId: null }],
      ['empty userId only', { userId: '' }],
      ['empty strings for both', { userId: '', anonymousId: '' }],
      ['only groupId (Node allows it, Segment drops it)', { type: 'group', groupId: 'g1' }],
      ['only previousId', { type: 'alias', previousId: 'u0' }],
    ])('when a message has %s, then no_user_anon_id', (_, fields) => {
      const result = normalizeMessage({ type: 'identify', messageId: 'm-2', ...fields }, inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'no_user_anon_id',
        message: expect.any(String),
        messageId: 'm-2',
      });
    });

    it('when userId is empty but anonymousId is set, then it is accepted and the empty userId is dropped', () => {
      const { message } = accepted({ type: 'identify', userId: '', anonymousId: 'a1' });
      expect(message).not.toHaveProperty('userId');
      expect(message.anonymousId).toBe('a1');
    });

    it('when only anonymousId is set, then it is accepted', () => {
      expect(accepted({ type: 'track', anonymousId: 'a1', event: 'e' }).message.anonymousId).toBe('a1');
    });
  });

  describe('track needs a string event (missing_event)', () => {
    it.each([
      ['absent', {}],
      ['null', { event: null }],
      ['a number', { event: 5 }],
      ['an object', { event: { name: 'x' } }],
    ])('when event is %s, then missing_event', (_, fields) => {
      const result = normalizeMessage({ type: 'track', userId: 'u', ...fields }, inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'missing_event',
        message: 'A track message needs "event" as a string',
      });
    });

    it('when event is an empty string, then it is accepted: the spec asks only for a string', () => {
      expect(accepted({ type: 'track', userId: 'u', event: '' }).message.event).toBe('');
    });

    it('when a non-track message has a non-string event, then it is kept as an unknown key', () => {
      expect(accepted({ type: 'page', userId: 'u', event: 5 }).message).toMatchObject({ event: 5 });
    });
  });

  describe('known fields with the wrong JSON type (invalid_request)', () => {
    it('when context is a string, then the message says what was expected and what came', () => {
      expect(normalizeMessage({ type: 'page', userId: 'u', context: 'x' }, inBatch())).toEqual({
        ok: false,
        code: 'invalid_request',
        message: 'Field "context" must be a JSON object, got a string',
      });
    });

    it.each([
      ['context a string', { context: 'x' }, 'context'],
      ['context an array', { context: [] }, 'context'],
      ['integrations a boolean', { integrations: true }, 'integrations'],
      ['properties an array', { properties: [1] }, 'properties'],
      ['traits a string', { traits: 'pro' }, 'traits'],
      ['name a number', { name: 5 }, 'name'],
      ['category an object', { category: {} }, 'category'],
      ['userId a boolean', { userId: true }, 'userId'],
      ['anonymousId an object', { anonymousId: { id: 1 } }, 'anonymousId'],
      ['groupId an array', { groupId: ['g'] }, 'groupId'],
      ['previousId a boolean', { previousId: false }, 'previousId'],
    ])('when %s, then invalid_request naming the field', (_, fields, field) => {
      const result = normalizeMessage({ type: 'page', userId: 'u', ...fields }, inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'invalid_request',
        message: expect.stringContaining(`"${field}"`),
      });
    });

    it('when a userId is a JSON number too large to be finite (1e400), then invalid_request', () => {
      const result = normalizeMessage(JSON.parse('{"type":"identify","userId":1e400}'), inBatch());
      expect(result).toEqual({
        ok: false,
        code: 'invalid_request',
        message: 'Field "userId" must be a string or a number, got a non-finite number',
      });
    });

    it.each([
      ['a number', 5, 'a number'],
      ['a string', 'track', 'a string'],
      ['an array', [{ type: 'track' }], 'an array'],
      ['null', null, 'null'],
    ])('when the message itself is %s, then invalid_request', (_, raw, described) => {
      expect(normalizeMessage(raw, inBatch())).toEqual({
        ok: false,
        code: 'invalid_request',
        message: `A message must be a JSON object, got ${described}`,
      });
    });

    it('when several rules fail, then the first in the documented order is reported', () => {
      const bad = { type: 'nope', messageId: 'x'.repeat(101), context: 'x', event: 1 };
      expect(normalizeMessage(bad, inBatch())).toMatchObject({ code: 'invalid_type' });
      expect(normalizeMessage({ ...bad, type: 'track' }, inBatch())).toMatchObject({
        code: 'invalid_message_id',
      });
      expect(normalizeMessage({ ...bad, type: 'track', messageId: 'm' }, inBatch())).toMatchObject({
        code: 'invalid_request',
      });
      expect(normalizeMessage({ type: 'track', event: 1 }, inBatch())).toMatchObject({
        code: 'no_user_anon_id',
      });
    });
  });

  describe('batch-level context and integrations (docs/tracking-api.md §5.2)', () => {
    it('when both levels have context, then keys merge by top level and the message’s keys win', () => {
      const { message } = accepted(
        {
          type: 'identify',
          userId: 'u',
          context: { library: { name: 'mine' }, locale: 'fr' },
          integrations: { Mixpanel: true },
        },
        inBatch({
          batchContext: { library: { name: 'batch', version: '1' }, ip: '1.2.3.4' },
          batchIntegrations: { All: false, Mixpanel: false },
        }),
      );
      // Top-level merge: the message's library replaces the batch's whole library object.
      expect(message.context).toEqual({ library: { name: 'mine' }, locale: 'fr', ip: '1.2.3.4' });
      expect(message.integrations).toEqual({ All: false, Mixpanel: true });
    });

    it('when the message has no context, then it gets a copy of the batch context, not the same object', () => {
      const batchContext = { ip: '1.2.3.4' };
      const { message } = accepted({ type: 'identify', userId: 'u' }, inBatch({ batchContext }));
      expect(message.context).toEqual(batchContext);
      expect(message.context).not.toBe(batchContext);
    });

    it('when the message sets a context key to null, then null wins over the batch value (data kept verbatim)', () => {
      const { message } = accepted(
        { type: 'identify', userId: 'u', context: { ip: null } },
        inBatch({ batchContext: { ip: '1.2.3.4' } }),
      );
      expect(message.context).toEqual({ ip: null });
    });
  });

  describe('timestamps (docs/tracking-api.md §7)', () => {
    it('when the message has timestamp and the batch sentAt, then all four are written in UTC with ms', () => {
      const { message } = accepted(
        {
          type: 'identify',
          userId: 'u',
          timestamp: '2026-11-25T21:15:05.320774+00:00',
          sentAt: '2000-01-01T00:00:00Z',
        },
        inBatch({ batchSentAt: '2026-11-25T21:15:05.412774+00:00' }),
      );
      expect(message).toMatchObject({
        originalTimestamp: '2026-11-25T21:15:05.320Z',
        sentAt: '2026-11-25T21:15:05.412Z',
        receivedAt: '2026-11-25T21:15:06.000Z',
        timestamp: '2026-11-25T21:15:05.908Z',
      });
    });

    it('when timestamp is unparseable, then the message is still accepted with timestamp = receivedAt', () => {
      const { message } = accepted({ type: 'identify', userId: 'u', timestamp: 'last tuesday' });
      expect(message.timestamp).toBe('2026-11-25T21:15:06.000Z');
      expect(message).not.toHaveProperty('originalTimestamp');
    });

    it('when timestamp is a number, then it counts as unparseable and is not kept', () => {
      const { message } = accepted({ type: 'identify', userId: 'u', timestamp: 1764105305320 });
      expect(message.timestamp).toBe('2026-11-25T21:15:06.000Z');
    });
  });
});

describe('findMistypedField, the hand-written check of incomingMessageSchema', () => {
  const knownFields = [
    ...['type', 'messageId', 'userId', 'anonymousId', 'groupId', 'previousId', 'timestamp', 'sentAt'],
    ...['context', 'integrations', 'properties', 'traits', 'name', 'category', 'event', 'other'],
  ];
  const anyValue = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(Infinity, -Infinity, NaN, null, '', 0, [], {}),
  );

  it('for any message, names the same field as the zod contract, or none when the contract passes', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...knownFields), anyValue), (message) => {
        // The contract sees the message as normalizeMessage reads it: nulls are absent (docs/tracking-api.md §6.4).
        const withoutNulls = Object.fromEntries(
          Object.entries(message).filter(([, value]) => value !== null),
        );
        const contract = incomingMessageSchema.safeParse(withoutNulls);
        const mistyped = findMistypedField(message);
        if (contract.success) expect(mistyped).toBeUndefined();
        else expect(mistyped?.field).toBe(String(contract.error.issues[0].path[0]));
      }),
      { seed: 20261126, numRuns: 2000 },
    );
  });
});
