import fc from 'fast-check';
import { parseAuthorization, readBodyWriteKey, resolveWriteKey } from './resolve-write-key';

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('resolveWriteKey (docs/tracking-api.md §4.3)', () => {
  describe('given a Basic header', () => {
    it('when it encodes "<writeKey>:", then the key is the text before the colon (Ruby: Basic V0s6)', () => {
      expect(resolveWriteKey('Basic V0s6', undefined)).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'WK' },
      });
    });

    it('when it encodes the key without a colon, then the whole text is the key', () => {
      expect(resolveWriteKey(basic('WK'), {})).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'WK' },
      });
    });

    it('when the password part is not empty, then only the text before the first colon counts', () => {
      expect(resolveWriteKey(basic('WK:secret:more'), {})).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'WK' },
      });
    });

    it('when the body also has a writeKey, then the Basic one wins (Node 3.1 sends both)', () => {
      expect(resolveWriteKey('Basic V0s6', { writeKey: 'OTHER' })).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'WK' },
      });
    });

    it.each([['basic V0s6'], ['BASIC V0s6'], ['  Basic    V0s6  ']])(
      'when written as %p, then the scheme is matched case-insensitively and spaces are tolerated',
      (header) => {
        expect(resolveWriteKey(header, undefined)).toEqual({
          ok: true,
          value: { scheme: 'basic', writeKey: 'WK' },
        });
      },
    );

    it('when the base64 has no padding, then it still decodes', () => {
      // "WK1:" is "V0sxOg==" padded.
      expect(resolveWriteKey('Basic V0sxOg', undefined)).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'WK1' },
      });
    });

    it('when the key holds non-ASCII characters, then it is decoded as UTF-8', () => {
      expect(resolveWriteKey(basic('clé:'), undefined)).toEqual({
        ok: true,
        value: { scheme: 'basic', writeKey: 'clé' },
      });
    });

    it.each([
      ['decodes to ":" (empty key)', basic(':')],
      ['decodes to "" (empty credentials)', 'Basic '],
      ['has no credentials at all', 'Basic'],
      ['is not base64', 'Basic !!!not-base64!!!'],
    ])('when it %s and the body has a writeKey, then the body key is used', (_, header) => {
      expect(resolveWriteKey(header, { writeKey: 'BODY' })).toEqual({
        ok: true,
        value: { scheme: 'body', writeKey: 'BODY' },
      });
    });

    it('when it decodes to an empty key and the body has none, then invalid_write_key (401)', () => {
      expect(resolveWriteKey(basic(':'), {})).toEqual({
        ok: false,
        error: { code: 'invalid_write_key', status: 401, message: expect.any(String) },
      });
    });
  });

  describe('given no Authorization header', () => {
    it('when the body has writeKey (Python ≥ 2.3, Node 2.0–3.0), then the body key is used', () => {
      expect(resolveWriteKey(undefined, { batch: [], writeKey: 'WK' })).toEqual({
        ok: true,
        value: { scheme: 'body', writeKey: 'WK' },
      });
    });

    it.each([
      ['no body', undefined],
      ['a body without writeKey', { batch: [] }],
      ['writeKey null', { writeKey: null }],
      ['writeKey ""', { writeKey: '' }],
      ['writeKey as a number', { writeKey: 123 }],
      ['writeKey as an object', { writeKey: { key: 'WK' } }],
      ['a body that is an array', [{ writeKey: 'WK' }]],
      ['a body that is a string', 'WK'],
    ])('when there is %s, then invalid_write_key (401)', (_, body) => {
      const result = resolveWriteKey(undefined, body);
      expect(result).toEqual({
        ok: false,
        error: { code: 'invalid_write_key', status: 401, message: expect.stringContaining('writeKey') },
      });
    });
  });

  describe('given a Bearer header (OAuth, docs/tracking-api.md §11.6)', () => {
    it('when the body has writeKey, then both the token and the body key are returned', () => {
      expect(resolveWriteKey('Bearer tok.en-123', { writeKey: 'WK' })).toEqual({
        ok: true,
        value: { scheme: 'bearer', writeKey: 'WK', bearerToken: 'tok.en-123' },
      });
    });

    it('when the scheme is written in lowercase, then it is still Bearer', () => {
      expect(resolveWriteKey('bearer abc', { writeKey: 'WK' })).toEqual({
        ok: true,
        value: { scheme: 'bearer', writeKey: 'WK', bearerToken: 'abc' },
      });
    });

    it('when the body has no writeKey, then invalid_write_key (401): Bearer never carries the key', () => {
      expect(resolveWriteKey('Bearer abc', { batch: [] })).toEqual({
        ok: false,
        error: { code: 'invalid_write_key', status: 401, message: expect.stringContaining('Bearer') },
      });
    });

    it.each([['Bearer'], ['Bearer   ']])(
      'when the token is empty (%p), then unauthorized (401)',
      (header) => {
        expect(resolveWriteKey(header, { writeKey: 'WK' })).toEqual({
          ok: false,
          error: { code: 'unauthorized', status: 401, message: expect.any(String) },
        });
      },
    );
  });

  describe('given another scheme or a malformed header', () => {
    it.each([['Digest username="WK"'], ['Token WK'], [''], ['   '], ['V0s6']])(
      'when the header is %p, then it is ignored and the body key is used',
      (header) => {
        expect(resolveWriteKey(header, { writeKey: 'WK' })).toEqual({
          ok: true,
          value: { scheme: 'body', writeKey: 'WK' },
        });
      },
    );
  });
});

describe('resolveWriteKey on hostile Authorization headers', () => {
  it.each([
    ['inner whitespace', `Basic x${' '.repeat(100_000)}x`],
    ['leading whitespace', `${' '.repeat(100_000)}Bearer x`],
    ['mixed whitespace before a line break', `Bearer x${' \t'.repeat(50_000)}y\nz`],
  ])('reads a 100k-character header with %s in linear time', (_, header) => {
    const startedAt = performance.now();
    resolveWriteKey(header, { writeKey: 'WK' });
    // The backtracking expression this replaces took tens of seconds on these.
    expect(performance.now() - startedAt).toBeLessThan(250);
  });

  it('gives the verdicts of the regular expression it replaces on short headers', () => {
    // The expression the hand-written scanner replaced: the reference for its verdicts.
    // eslint-disable-next-line regexp/no-super-linear-backtracking -- only run on short strings here
    const reference = /^\s*(\S+)(?:\s+(.*?))?\s*$/;
    const character = fc.constantFrom(
      ' ',
      '\t',
      '\n',
      '\r',
      '\u00a0',
      '\u2028',
      '\ufeff',
      'B',
      'b',
      'x',
      ':',
      '=',
    );
    const header = fc.oneof(
      fc.array(character, { maxLength: 12 }).map((characters) => characters.join('')),
      fc
        .tuple(
          fc.constantFrom('Basic', 'bearer', 'BEARER', 'Token'),
          fc.array(character, { maxLength: 6 }).map((characters) => characters.join('')),
          fc.string({ maxLength: 8 }),
          fc.array(character, { maxLength: 6 }).map((characters) => characters.join('')),
        )
        .map(([scheme, before, token, after]) => `${before}${scheme} ${token}${after}`),
    );
    fc.assert(
      fc.property(header, (text) => {
        const match = reference.exec(text);
        const scheme = match?.[1]?.toLowerCase();
        const expected =
          match && (scheme === 'basic' || scheme === 'bearer')
            ? { scheme, token: match[2] ?? '' }
            : undefined;
        expect(parseAuthorization(text)).toEqual(expected);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('readBodyWriteKey', () => {
  it('reads a non-empty string writeKey and nothing else', () => {
    expect(readBodyWriteKey({ writeKey: 'WK' })).toBe('WK');
    expect(readBodyWriteKey({ writeKey: '' })).toBeUndefined();
    expect(readBodyWriteKey({ writeKey: 1 })).toBeUndefined();
    expect(readBodyWriteKey(null)).toBeUndefined();
  });
});
