import { matches } from '@segment/tsub';
import fc from 'fast-check';
import { applyDestinationFilters } from '../filters/destination-filters.decider';
import { trackMessage } from '../routing-messages.fixture';
import { compileFilterCondition } from './fql-condition.compiler';
import { InvalidFilterConditionError } from '../filters/destination-filter.errors';
import { globMatches, MAX_MATCH_GLOB_LENGTH } from './fql-glob';

/** tsub's verdict for match(value, glob): its glob matcher is reached only through `matches`. */
function tsubGlobMatches(glob: string, value: string): boolean {
  return matches({}, { type: 'fql', ir: JSON.stringify(['match', { value }, { value: glob }]) });
}

describe('globMatches', () => {
  it.each([
    ['*', 'anything', true],
    ['', '', true],
    ['', 'a', false],
    ['a*', 'ab/c', true],
    ['*.com', 'someone@example.com', true],
    ['*.com', 'someone@example.org', false],
    ['a?c', 'abc', true],
    ['a?c', 'ac', false],
    ['[a-c]x', 'bx', true],
    ['[^a-c]x', 'bx', false],
    ['ab\\*d', 'ab*d', true],
    ['ab\\*d', 'abcd', false],
    ['*a*b*', 'xxaxxbxx', true],
    ['*a*b', 'xxbxxa', false],
    ['a[', 'a[', false], // malformed: matches nothing
    ['ab\\', 'ab\\', false],
  ])('glob %j against %j: %s, as tsub answers', (glob, value, expected) => {
    expect(globMatches(glob, value)).toBe(expected);
    expect(tsubGlobMatches(glob, value)).toBe(expected);
  });

  it('answers as tsub does on generated globs and values', () => {
    const globCharacter = fc.constantFrom('a', 'b', '*', '?', '[', ']', '^', '-', '\\', '/');
    const valueCharacter = fc.constantFrom('a', 'b', '-', '/', '[', ']', '*', '\\');
    fc.assert(
      fc.property(
        fc.array(globCharacter, { maxLength: 10 }).map((characters) => characters.join('')),
        fc.array(valueCharacter, { maxLength: 12 }).map((characters) => characters.join('')),
        (glob, value) => {
          expect(globMatches(glob, value)).toBe(tsubGlobMatches(glob, value));
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('refuses at write time the glob that took seconds against a 32 KB value (400 via the filter compiler)', () => {
    const condition = `match(properties.x, '*${'a'.repeat(9_960)}b')`;
    expect(() => compileFilterCondition(condition)).toThrow(InvalidFilterConditionError);
    expect(() => compileFilterCondition(condition)).toThrow(
      `the glob of match() is longer than ${MAX_MATCH_GLOB_LENGTH} characters`,
    );
    expect(() =>
      compileFilterCondition(`match(properties.x, '*${'a'.repeat(MAX_MATCH_GLOB_LENGTH - 2)}b')`),
    ).not.toThrow();

    // A stored filter of that size fails closed, without evaluating it.
    const message = trackMessage({ properties: { x: 'a'.repeat(32 * 1024) } });
    const started = performance.now();
    const result = applyDestinationFilters(message, [
      { filterId: 'f', title: 't', enabled: true, if: condition, actions: [{ type: 'drop_event' }] },
    ]);
    expect(performance.now() - started).toBeLessThan(50);
    expect(result).toMatchObject({ outcome: 'filter', reason: 'invalid_filter' });
  });

  it.each([
    ['a literal chunk between stars', `*${'a'.repeat(MAX_MATCH_GLOB_LENGTH - 3)}b*`],
    ['a chunk of ? and literals between stars', `*?${'a'.repeat(MAX_MATCH_GLOB_LENGTH - 4)}b*`],
    ['a chunk of classes between stars', `*${'[a]'.repeat(Math.floor((MAX_MATCH_GLOB_LENGTH - 3) / 3))}b*`],
    ['a last chunk after a star', `*${'a'.repeat(MAX_MATCH_GLOB_LENGTH - 2)}b`],
    ['many stars', `${'*a'.repeat(MAX_MATCH_GLOB_LENGTH / 2 - 1)}*b`],
  ])('evaluates the worst %s against 32 KB within the budget (100 filters of it < 1 s)', (_label, glob) => {
    const value = 'a'.repeat(32 * 1024);
    const message = trackMessage({ properties: { x: value } });
    const condition = `match(properties.x, '${glob}')`;
    const filters = Array.from({ length: 100 }, (_, index) => ({
      filterId: `f${index}`,
      title: 't',
      enabled: true,
      if: condition,
      actions: [{ type: 'drop_event' }],
    }));
    applyDestinationFilters(message, filters.slice(0, 1));

    const one = performance.now();
    expect(globMatches(glob, value)).toBe(false);
    expect(performance.now() - one).toBeLessThan(50);
    const hundred = performance.now();
    expect(applyDestinationFilters(message, filters)).toMatchObject({ outcome: 'pass' });
    expect(performance.now() - hundred).toBeLessThan(1_000);
  });

  it('matches nothing with a glob read from the message that is over the budget', () => {
    const glob = `*${'a'.repeat(MAX_MATCH_GLOB_LENGTH)}`;
    const message = trackMessage({ properties: { x: 'a'.repeat(32 * 1024), glob } });
    expect(globMatches(glob, 'a'.repeat(32 * 1024))).toBe(false);
    expect(
      applyDestinationFilters(message, [
        {
          filterId: 'f',
          title: 't',
          enabled: true,
          if: 'match(properties.x, properties.glob)',
          actions: [{ type: 'drop_event' }],
        },
      ]),
    ).toMatchObject({ outcome: 'pass' });
  });
  it('refuses a generated match() glob when written, or evaluates it against 32 KB within the budget (time and heap measured)', () => {
    const token = fc.constantFrom('a', 'b', '?', '*', '[ab]', '[^a]', '[a-b]', 'ab', '\\*');
    const values = [
      'a'.repeat(32 * 1024),
      Array.from({ length: 32 * 1024 }, (_, index) => 'ab'[index % 2]).join(''),
    ];
    let refused = 0;
    let evaluated = 0;
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 160, size: 'max' }), (tokens) => {
        const glob = tokens.join('');
        const condition = `match(properties.x, '${glob}')`;
        try {
          compileFilterCondition(condition);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidFilterConditionError);
          expect(glob.length).toBeGreaterThan(MAX_MATCH_GLOB_LENGTH);
          refused += 1;
          return;
        }
        evaluated += 1;
        for (const value of values) {
          const message = trackMessage({ properties: { x: value } });
          const heapBefore = process.memoryUsage().heapUsed;
          // CPU time of this process: the machine's other load does not count against the budget.
          const started = process.cpuUsage();
          applyDestinationFilters(message, [
            { filterId: 'f', title: 't', enabled: true, if: condition, actions: [{ type: 'drop_event' }] },
          ]);
          const used = process.cpuUsage(started);
          expect((used.user + used.system) / 1_000).toBeLessThan(50);
          expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(16 * 1024 * 1024);
        }
      }),
      { numRuns: 300 },
    );
    expect(refused).toBeGreaterThan(10);
    expect(evaluated).toBeGreaterThan(100);
  });
});
