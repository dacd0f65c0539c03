// Regular expressions that meet untrusted input, rewritten so that none backtracks super-linearly
// (`npm run lint` enforces it with eslint-plugin-regexp): each is fed a long hostile input and must
// answer at once, and gives the same answers as the expression it replaced on short inputs.
import fc from 'fast-check';
import { toSnakeCase } from '@tributary/destinations';
import { lastSegment } from '@tributary/contracts';
import { durationSchema, normalizeRequestUrl } from '@tributary/platform';

/** Milliseconds `work` takes. */
function timed(work: () => unknown): number {
  const startedAt = performance.now();
  work();
  return performance.now() - startedAt;
}

// The replaced expressions took seconds on these inputs; linear code takes well under a millisecond.
const FAST_MS = 250;

describe('super-linear regular expressions on hostile input', () => {
  it('toSnakeCase: a property name of 30,000 capitals', () => {
    expect(timed(() => toSnakeCase(`${'A'.repeat(30_000)}!`))).toBeLessThan(FAST_MS);
  });

  it('toSnakeCase splits capitals as the expression it replaced did', () => {
    // eslint-disable-next-line regexp/no-super-linear-move -- the reference, run on short strings only
    const reference = (text: string) => text.replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2');
    const replacement = (text: string) => text.replace(/(?<!\p{Lu})(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1_$2');
    const text = fc
      .array(fc.constantFrom('A', 'B', 'a', 'b', '1', ' ', 'É', 'é'), { maxLength: 16 })
      .map((characters) => characters.join(''));
    fc.assert(
      fc.property(text, (value) => replacement(value) === reference(value)),
      { numRuns: 3_000 },
    );
    expect(toSnakeCase('HTMLParser')).toBe('html_parser');
    expect(toSnakeCase('accountType')).toBe('account_type');
  });

  it('trailing slashes: 30,000 slashes before a last character', () => {
    const hostile = `/v1beta/${'/'.repeat(30_000)}x`;
    expect(timed(() => normalizeRequestUrl(hostile))).toBeLessThan(FAST_MS);
    expect(timed(() => lastSegment(`${'/'.repeat(30_000)}x`))).toBeLessThan(FAST_MS);
    expect(lastSegment('workspaces/ws/sources/js///')).toBe('js');
    expect(normalizeRequestUrl('/v1beta/workspaces/ws//')).toBe('/v1beta/workspaces/ws');
  });

  it('durations: 30,000 spaces inside a value', () => {
    expect(timed(() => durationSchema.safeParse(`1${' '.repeat(30_000)}x`))).toBeLessThan(FAST_MS);
    expect(durationSchema.parse(' 24h ')).toBe(86_400_000);
    expect(durationSchema.parse('1.5 s')).toBe(1_500);
    expect(durationSchema.safeParse('1 x').success).toBe(false);
  });
});
