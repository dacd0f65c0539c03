import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { inflateBody } from './inflate-body';

const json = Buffer.from('{"batch":[],"writeKey":"WK"}');

describe('inflateBody', () => {
  describe('given a body the spec says to accept', () => {
    it.each([
      ['no Content-Encoding', undefined, json],
      ['an empty header', '', json],
      ['identity', 'identity', json],
      ['gzip (Python gzip=True)', 'gzip', gzipSync(json)],
      ['x-gzip', 'x-gzip', gzipSync(json)],
      ['GZIP in capitals with spaces', '  GZIP ', gzipSync(json)],
      ['zlib-wrapped deflate', 'deflate', deflateSync(json)],
      ['raw deflate sent as deflate', 'deflate', deflateRawSync(json)],
      ['gzip then identity', 'gzip, identity', gzipSync(json)],
      ['deflate applied after gzip', 'gzip, deflate', deflateSync(gzipSync(json))],
      ['the header as an array of values', ['gzip'], gzipSync(json)],
    ])('when it is sent with %s, then it comes back decoded', (_, encoding, body) => {
      const result = inflateBody(body, encoding, 1024);
      expect(result).toEqual({ ok: true, value: json });
    });

    it('when it is a Uint8Array rather than a Buffer, then it is decoded the same', () => {
      const gzipped = gzipSync(json);
      const view = new Uint8Array(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength);
      expect(inflateBody(view, 'gzip', 1024)).toEqual({ ok: true, value: json });
    });

    it('when it inflates to exactly the limit, then it passes (only "larger than" is refused)', () => {
      const exact = Buffer.alloc(4096, 'a');
      const result = inflateBody(gzipSync(exact), 'gzip', 4096);
      expect(result.ok && result.value.length).toBe(4096);
    });

    it('when a plain body is exactly the limit, then it passes', () => {
      expect(inflateBody(Buffer.alloc(10, 'a'), undefined, 10).ok).toBe(true);
    });
  });

  describe('given a body that is too large', () => {
    it('when it inflates to one byte over the limit, then payload_too_large (400)', () => {
      const result = inflateBody(gzipSync(Buffer.alloc(4097, 'a')), 'gzip', 4096);
      expect(result).toEqual({
        ok: false,
        error: { code: 'payload_too_large', status: 400, message: expect.stringContaining('4096') },
      });
    });

    it('when a 50 KB gzip bomb expands to 100 MB, then it stops at the limit quickly', () => {
      const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024));
      expect(bomb.length).toBeLessThan(200 * 1024);
      const started = process.hrtime.bigint();
      const result = inflateBody(bomb, 'gzip', 512 * 1024);
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error.code).toBe('payload_too_large');
      // Inflating all of it takes far longer; stopping at 512 KiB takes a few milliseconds.
      expect(elapsedMs).toBeLessThan(250);
    });

    it('when a deflate bomb is sent, then it is stopped too', () => {
      const result = inflateBody(deflateSync(Buffer.alloc(10 * 1024 * 1024)), 'deflate', 1024);
      expect(!result.ok && result.error.code).toBe('payload_too_large');
    });

    it('when an uncompressed body is over the limit, then payload_too_large', () => {
      const result = inflateBody(Buffer.alloc(11, 'a'), 'identity', 10);
      expect(!result.ok && result.error.code).toBe('payload_too_large');
    });
  });

  describe('given a corrupt or unsupported encoding', () => {
    it.each([
      ['plain JSON labelled gzip', 'gzip', json],
      ['a truncated gzip stream', 'gzip', gzipSync(json).subarray(0, 15)],
      ['an empty body labelled gzip', 'gzip', Buffer.alloc(0)],
      ['gzip followed by garbage', 'gzip', Buffer.concat([gzipSync(json), Buffer.from('garbage')])],
      ['a gzip stream with a flipped CRC', 'gzip', flipByte(gzipSync(json), -6)],
      ['plain JSON labelled deflate', 'deflate', json],
      ['gzip labelled deflate', 'deflate', gzipSync(json)],
    ])('when it is %s, then invalid_request (400)', (_, encoding, body) => {
      const result = inflateBody(body, encoding, 1024);
      expect(result).toEqual({
        ok: false,
        error: { code: 'invalid_request', status: 400, message: expect.stringContaining('not valid') },
      });
    });

    it.each([['br'], ['compress'], ['zstd'], ['gzip, br'], ['chunked']])(
      'when the Content-Encoding is %s, then invalid_request naming it',
      (encoding) => {
        const result = inflateBody(json, encoding, 1024);
        expect(result.ok).toBe(false);
        expect(!result.ok && result.error).toEqual({
          code: 'invalid_request',
          status: 400,
          message: expect.stringMatching(/Unsupported Content-Encoding "(br|compress|zstd|chunked)"/),
        });
      },
    );

    it('when the coding is an Object prototype name, then it is unsupported, not a crash', () => {
      const result = inflateBody(json, 'constructor', 1024);
      expect(!result.ok && result.error.code).toBe('invalid_request');
    });
  });
});

function flipByte(buffer: Buffer, position: number): Buffer {
  const copy = Buffer.from(buffer);
  const index = position < 0 ? copy.length + position : position;
  copy[index] ^= 0xff;
  return copy;
}
