import fc from 'fast-check';
import { trimHttpWhitespace } from './http-whitespace';

describe('trimHttpWhitespace', () => {
  it('trims a value with 100,000 inner spaces in linear time', () => {
    const value = `a${' '.repeat(100_000)}b`;
    const startedAt = performance.now();
    expect(trimHttpWhitespace(`\t ${value} \r\n`)).toBe(value);
    // The expression it replaced, /^[\t\n\r ]+|[\t\n\r ]+$/g, took tens of seconds here.
    expect(performance.now() - startedAt).toBeLessThan(250);
  });

  it('gives the answers of the expression it replaced on short values', () => {
    // eslint-disable-next-line regexp/no-super-linear-move -- the reference, run on short strings only
    const reference = (text: string) => text.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    const value = fc
      .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', 'a', 'b'), { maxLength: 12 })
      .map((characters) => characters.join(''));
    fc.assert(
      fc.property(value, (text) => trimHttpWhitespace(text) === reference(text)),
      { numRuns: 3_000 },
    );
  });
});
