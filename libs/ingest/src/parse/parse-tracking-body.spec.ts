import { MAX_JSON_NESTING_DEPTH, parseTrackingBody } from './parse-tracking-body';

const KiB = 1024;

/** A batch body of exactly `totalBytes` bytes, padded inside one property. */
function batchBodyOfSize(totalBytes: number): string {
  // Spread the padding over many messages so none of them passes 32 KiB.
  const messages: unknown[] = [];
  const perMessage = 30 * KiB;
  let body = JSON.stringify({ batch: messages });
  while (Buffer.byteLength(body) + perMessage < totalBytes) {
    messages.push({
      type: 'track',
      userId: 'u',
      event: 'e',
      properties: { padding: 'x'.repeat(perMessage) },
    });
    body = JSON.stringify({ batch: messages });
  }
  const remaining = totalBytes - Buffer.byteLength(JSON.stringify({ batch: [...messages, { p: '' }] }));
  messages.push({ p: 'y'.repeat(remaining) });
  body = JSON.stringify({ batch: messages });
  return body;
}

/** A single message whose compact JSON is exactly `totalBytes` bytes. */
function messageOfSize(totalBytes: number): Record<string, unknown> {
  const message = { type: 'track', userId: 'u', event: 'e', properties: { padding: '' } };
  const padding = totalBytes - Buffer.byteLength(JSON.stringify(message));
  return { ...message, properties: { padding: 'z'.repeat(padding) } };
}

describe('parseTrackingBody', () => {
  describe('given a valid batch envelope', () => {
    it('when it is a Buffer, then items, sentAt, context, integrations and the body are returned', () => {
      const body = {
        batch: [{ type: 'track' }, 5],
        sentAt: '2026-11-25T21:15:05.412Z',
        writeKey: 'WK',
        context: { ip: '1.2.3.4' },
        integrations: { All: false },
        timestamp: 'legacy node sends this; ignored',
      };
      const result = parseTrackingBody('batch', Buffer.from(JSON.stringify(body)));
      expect(result).toEqual({
        ok: true,
        value: {
          kind: 'batch',
          route: 'batch',
          body,
          items: [{ type: 'track' }, 5],
          sentAt: '2026-11-25T21:15:05.412Z',
          context: { ip: '1.2.3.4' },
          integrations: { All: false },
        },
      });
    });

    it('when the route is import, then it is parsed exactly like batch', () => {
      const result = parseTrackingBody('import', '{"sentAt":"x","batch":[]}');
      expect(result).toEqual({
        ok: true,
        value: { kind: 'batch', route: 'import', body: { sentAt: 'x', batch: [] }, items: [], sentAt: 'x' },
      });
    });

    it('when context and integrations are null, then they count as absent', () => {
      const result = parseTrackingBody('batch', '{"batch":[],"context":null,"integrations":null}');
      expect(result.ok && result.value).not.toHaveProperty('context');
      expect(result.ok && result.value).not.toHaveProperty('integrations');
    });

    it('when the body starts with a UTF-8 byte order mark, then it still parses', () => {
      const result = parseTrackingBody(
        'batch',
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"batch":[]}')]),
      );
      expect(result.ok).toBe(true);
    });

    it('when the body is a string with a BOM, then it still parses', () => {
      expect(parseTrackingBody('batch', '\ufeff{"batch":[]}').ok).toBe(true);
    });

    it('when Python escapes non-ASCII and adds spaces, then the text is decoded', () => {
      const result = parseTrackingBody('batch', '{"batch": [{"event": "caf\\u00e9"}], "sentAt": "x"}');
      expect(result.ok && result.value.kind === 'batch' && result.value.items).toEqual([{ event: 'café' }]);
    });
  });

  describe('given a single-event route', () => {
    it('when the body is an object, then the body is the message', () => {
      const result = parseTrackingBody('track', '{"userId":"u","event":"e","writeKey":"WK"}');
      expect(result).toEqual({
        ok: true,
        value: {
          kind: 'single',
          route: 'track',
          body: { userId: 'u', event: 'e', writeKey: 'WK' },
          message: { userId: 'u', event: 'e', writeKey: 'WK' },
        },
      });
    });

    it('when the body carries a "batch" key, then it is just an unknown key of the message', () => {
      const result = parseTrackingBody('identify', '{"userId":"u","batch":"nope"}');
      expect(result.ok && result.value.kind).toBe('single');
    });
  });

  describe('given a body that is not JSON', () => {
    it.each([
      ['empty', ''],
      ['truncated', '{"batch":['],
      ['single-quoted', "{'batch':[]}"],
      ['with a trailing comma', '{"batch":[],}'],
      ['form-encoded', 'batch=1&writeKey=WK'],
      ['NaN', '{"batch":[NaN]}'],
    ])('when it is %s, then invalid_json (400)', (_, body) => {
      const result = parseTrackingBody('batch', body);
      expect(result).toEqual({
        ok: false,
        error: { code: 'invalid_json', status: 400, message: expect.stringContaining('not valid JSON') },
      });
    });

    it('when the bytes are not valid UTF-8, then invalid_json (400)', () => {
      const result = parseTrackingBody(
        'batch',
        Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
      );
      expect(result).toEqual({
        ok: false,
        error: { code: 'invalid_json', status: 400, message: 'Request body is not valid UTF-8' },
      });
    });
  });

  describe('given JSON that is not an acceptable body', () => {
    it.each([
      ['an array', '[{"type":"track"}]', 'an array'],
      ['null', 'null', 'null'],
      ['a number', '42', 'a number'],
      ['a string', '"batch"', 'a string'],
      ['a boolean', 'true', 'a boolean'],
    ])('when the body is %s, then invalid_request naming what it got', (_, body, described) => {
      for (const route of ['batch', 'track'] as const) {
        expect(parseTrackingBody(route, body)).toEqual({
          ok: false,
          error: {
            code: 'invalid_request',
            status: 400,
            message: `Request body must be a JSON object, got ${described}`,
          },
        });
      }
    });

    it.each([
      ['no batch key', '{"writeKey":"WK"}', 'Request body has no "batch" array'],
      ['batch null', '{"batch":null}', 'Request body has no "batch" array'],
      ['batch an object', '{"batch":{"0":{}}}', '"batch" must be an array, got an object'],
      ['batch a string', '{"batch":"[]"}', '"batch" must be an array, got a string'],
      [
        'context an array',
        '{"batch":[],"context":[]}',
        'Batch "context" must be a JSON object, got an array',
      ],
      [
        'context a string',
        '{"batch":[],"context":"x"}',
        'Batch "context" must be a JSON object, got a string',
      ],
      [
        'integrations a boolean',
        '{"batch":[],"integrations":true}',
        'Batch "integrations" must be a JSON object, got a boolean',
      ],
    ])('when a batch body has %s, then invalid_request (400)', (_, body, message) => {
      expect(parseTrackingBody('batch', body)).toEqual({
        ok: false,
        error: { code: 'invalid_request', status: 400, message },
      });
    });

    it('when nesting passes the depth cap, then invalid_request instead of a stack overflow later', () => {
      const depth = MAX_JSON_NESTING_DEPTH + 1;
      const body = '{"batch":[' + '['.repeat(depth) + ']'.repeat(depth) + ']}';
      expect(parseTrackingBody('batch', body)).toEqual({
        ok: false,
        error: { code: 'invalid_request', status: 400, message: expect.stringContaining('nests deeper') },
      });
    });

    it('when a 32 KiB single body nests 16,000 levels deep, then invalid_request, not a crash', () => {
      const body = '{"userId":"u","properties":' + '['.repeat(16_000) + ']'.repeat(16_000) + '}';
      const result = parseTrackingBody('track', body);
      expect(!result.ok && result.error.code).toBe('invalid_request');
    });

    it('when nesting is exactly at the cap, then it passes', () => {
      // The body object is level 1, so MAX - 1 more levels fit.
      const depth = MAX_JSON_NESTING_DEPTH - 1;
      const body = '{"userId":"u","p":' + '['.repeat(depth) + ']'.repeat(depth) + '}';
      expect(parseTrackingBody('track', body).ok).toBe(true);
    });
  });

  describe('given the size limits of docs/tracking-api.md §8.3', () => {
    it('when a batch body is exactly 512 KiB, then it passes', () => {
      const body = batchBodyOfSize(512 * KiB);
      expect(Buffer.byteLength(body)).toBe(512 * KiB);
      expect(parseTrackingBody('batch', Buffer.from(body)).ok).toBe(true);
    });

    it('when a batch body is 512 KiB + 1 byte, then payload_too_large (400)', () => {
      const body = batchBodyOfSize(512 * KiB + 1);
      expect(parseTrackingBody('batch', Buffer.from(body))).toEqual({
        ok: false,
        error: { code: 'payload_too_large', status: 400, message: expect.stringContaining('524288') },
      });
    });

    it('when a Ruby-sized batch of 512,050 B arrives (over Segment’s 500 KB), then it passes', () => {
      expect(parseTrackingBody('import', batchBodyOfSize(512_050)).ok).toBe(true);
    });

    it('when the string body has multi-byte characters, then bytes are counted, not characters', () => {
      const body = JSON.stringify({ userId: 'u', event: 'é'.repeat(16_380) });
      expect(body.length).toBeLessThan(32 * KiB);
      expect(Buffer.byteLength(body)).toBeGreaterThan(32 * KiB);
      const result = parseTrackingBody('track', body);
      expect(!result.ok && result.error.code).toBe('payload_too_large');
    });

    it('when a single-event body is exactly 32 KiB, then it passes; one byte more, payload_too_large', () => {
      const exact = JSON.stringify(messageOfSize(32 * KiB));
      expect(Buffer.byteLength(exact)).toBe(32 * KiB);
      expect(parseTrackingBody('track', exact).ok).toBe(true);
      const over = JSON.stringify(messageOfSize(32 * KiB + 1));
      expect(parseTrackingBody('track', over)).toEqual({
        ok: false,
        error: { code: 'payload_too_large', status: 400, message: expect.stringContaining('/v1/track') },
      });
    });

    it('when a message in a batch is exactly 32 KiB compact, then it passes', () => {
      const body = JSON.stringify({ batch: [messageOfSize(32 * KiB)] });
      expect(parseTrackingBody('batch', body).ok).toBe(true);
    });

    it('when a message in a batch is 32 KiB + 1 compact, then the whole request is payload_too_large', () => {
      const body = JSON.stringify({ batch: [messageOfSize(100), messageOfSize(32 * KiB + 1)] });
      expect(parseTrackingBody('batch', body)).toEqual({
        ok: false,
        error: {
          code: 'payload_too_large',
          status: 400,
          message: 'Message at batch index 1 is 32769 bytes; the limit is 32768 bytes',
        },
      });
    });

    it('when Python’s spaces and \\u escapes make a message 40 KB on the wire but 32 KiB compact, then it passes', () => {
      // 10,000 × "é" is 60,000 bytes as \u00e9 escapes but 20,000 bytes as raw UTF-8.
      const properties = { text: 'é'.repeat(10_000), padding: '' };
      const compactWithout = Buffer.byteLength(JSON.stringify({ type: 'track', properties }));
      properties.padding = 'p'.repeat(32 * KiB - compactWithout);
      const pythonStyle = `{"batch": [{"type": "track", "properties": {"text": "${'\\u00e9'.repeat(10_000)}", "padding": "${properties.padding}"}}]}`;
      expect(Buffer.byteLength(pythonStyle)).toBeGreaterThan(32 * KiB);
      expect(parseTrackingBody('batch', pythonStyle).ok).toBe(true);
    });

    it('when the limits are raised by configuration, then the new batch limit applies', () => {
      const body = batchBodyOfSize(600 * KiB);
      expect(parseTrackingBody('batch', body).ok).toBe(false);
      const limits = {
        maxBatchBodyBytes: 1024 * KiB,
        maxSingleEventBodyBytes: 32 * KiB,
        maxMessageBytes: 32 * KiB,
        maxMessagesPerBatch: 2500,
      };
      expect(parseTrackingBody('batch', body, limits).ok).toBe(true);
    });
  });
});
