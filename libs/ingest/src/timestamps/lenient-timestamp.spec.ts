import fc from 'fast-check';
import { formatUtcMilliseconds, parseLenientTimestamp } from './lenient-timestamp';

const iso = (value: unknown) => {
  const epochMs = parseLenientTimestamp(value);
  return epochMs === undefined ? undefined : formatUtcMilliseconds(epochMs);
};

describe('parseLenientTimestamp: every form of docs/tracking-api.md §7.3', () => {
  it.each([
    // [row of the table, input, expected UTC]
    ['milliseconds, Z (Node)', '2026-11-25T21:15:05.320Z', '2026-11-25T21:15:05.320Z'],
    [
      'milliseconds, +00:00 (Python timestamp, Ruby)',
      '2026-11-25T21:15:05.320+00:00',
      '2026-11-25T21:15:05.320Z',
    ],
    ['milliseconds, -05:00 (Ruby local time)', '2026-11-25T16:15:05.320-05:00', '2026-11-25T21:15:05.320Z'],
    ['microseconds, offset (Python sentAt)', '2026-11-25T21:15:05.320774+00:00', '2026-11-25T21:15:05.320Z'],
    [
      'no fraction, offset (Python sentAt at .000000)',
      '2026-11-25T21:15:05+00:00',
      '2026-11-25T21:15:05.000Z',
    ],
    ['naive, no offset: read as UTC', '2012-03-04T05:06:07.891011', '2012-03-04T05:06:07.891Z'],
    ['date only: midnight UTC', '2012-03-04', '2012-03-04T00:00:00.000Z'],
    ['unpadded fields (Segment docs)', '2015-2-02T00:30:08.276Z', '2015-02-02T00:30:08.276Z'],
  ])('given %s (%s), then it is %s', (_, input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['positive offset moves back', '2026-11-26T02:45:05.000+05:30', '2026-11-25T21:15:05.000Z'],
    ['offset without colon', '2026-11-25T22:15:05.000+0100', '2026-11-25T21:15:05.000Z'],
    ['offset hours only', '2026-11-25T22:15:05.000+01', '2026-11-25T21:15:05.000Z'],
    ['-00:00', '2026-11-25T21:15:05.000-00:00', '2026-11-25T21:15:05.000Z'],
    ['offset crossing midnight and year', '2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['lowercase t and z', '2026-11-25t21:15:05.320z', '2026-11-25T21:15:05.320Z'],
    [
      'space separator (Python str(datetime))',
      '2012-03-04 05:06:07.891011+00:00',
      '2012-03-04T05:06:07.891Z',
    ],
    ['comma as decimal mark (ISO 8601)', '2026-11-25T21:15:05,320Z', '2026-11-25T21:15:05.320Z'],
    ['one fraction digit', '2026-11-25T21:15:05.3Z', '2026-11-25T21:15:05.300Z'],
    ['nanoseconds are truncated, not rounded', '2026-11-25T21:15:59.999999999Z', '2026-11-25T21:15:59.999Z'],
    ['no seconds', '2026-11-25T21:15Z', '2026-11-25T21:15:00.000Z'],
    ['surrounding whitespace', '  2026-11-25T21:15:05.320Z\n', '2026-11-25T21:15:05.320Z'],
    ['29 February of a leap year', '2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ['29 February of 2000 (divisible by 400)', '2000-02-29', '2000-02-29T00:00:00.000Z'],
    ['an old date (no lower bound)', '1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['year 0099 stays 0099, not 1999', '0099-06-01T00:00:00Z', '0099-06-01T00:00:00.000Z'],
    ['the last writable instant', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['the first writable instant', '0000-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z'],
  ])('given %s (%s), then it is %s', (_, input, expected) => {
    expect(iso(input)).toBe(expected);
  });

  it.each([
    ['any string (Node forwards callers’ strings)', 'yesterday'],
    ['an empty string', ''],
    ['blank', '   '],
    ['a number (epoch ms)', 1764105305320],
    ['null', null],
    ['an object', { $date: '2026-11-25T21:15:05Z' }],
    ['a boolean', true],
    ['RFC 2822', 'Wed, 25 Nov 2026 21:15:05 GMT'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 0', '2026-00-10T00:00:00Z'],
    ['day 0', '2026-11-00T00:00:00Z'],
    ['31 November', '2026-11-31T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['29 February of 1900 (divisible by 100)', '1900-02-29'],
    ['hour 24', '2026-11-25T24:00:00Z'],
    ['minute 60', '2026-11-25T21:60:00Z'],
    ['second 60', '2026-11-25T21:15:60Z'],
    ['offset hours 24', '2026-11-25T21:15:05+24:00'],
    ['offset minutes 60', '2026-11-25T21:15:05+01:60'],
    ['a two-digit year', '26-11-25T21:15:05Z'],
    ['a five-digit year', '12026-11-25T21:15:05Z'],
    ['an extended negative year', '-000001-01-01T00:00:00Z'],
    ['a trailing word', '2026-11-25T21:15:05Z later'],
    ['a fraction without digits', '2026-11-25T21:15:05.Z'],
    ['an hour without minutes', '2026-11-25T21Z'],
    ['slashes', '2026/11/25 21:15:05'],
    ['a time zone name', '2026-11-25T21:15:05 UTC'],
    ['an offset pushing before year 0000', '0000-01-01T00:00:00+01:00'],
    ['an offset pushing past year 9999', '9999-12-31T23:59:59-01:00'],
    ['a very long string', '2026-11-25T21:15:05.' + '1'.repeat(100) + 'Z'],
  ])('given %s, then it is unparseable (absent)', (_, input) => {
    expect(parseLenientTimestamp(input)).toBeUndefined();
  });
});

describe('formatUtcMilliseconds', () => {
  it('writes RFC 3339 UTC with exactly three fraction digits and Z', () => {
    expect(formatUtcMilliseconds(Date.UTC(2026, 10, 25, 21, 15, 5, 0))).toBe('2026-11-25T21:15:05.000Z');
  });

  it.each([[Number.NaN], [Infinity], [new Date('+010000-01-01T00:00:00Z').getTime()], [-62167219200001]])(
    'refuses %p, which RFC 3339 cannot write',
    (epochMs) => {
      expect(() => formatUtcMilliseconds(epochMs)).toThrow(RangeError);
    },
  );
});

describe('the fast paths agree with Date', () => {
  const EARLIEST = Date.parse('0000-01-01T00:00:00.000Z');
  const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

  it('for any writable instant, formatUtcMilliseconds writes what toISOString writes, and parsing it gives it back', () => {
    fc.assert(
      fc.property(fc.integer({ min: EARLIEST, max: LATEST }), (epochMs) => {
        const written = formatUtcMilliseconds(epochMs);
        expect(written).toBe(new Date(epochMs).toISOString());
        expect(parseLenientTimestamp(written)).toBe(epochMs);
      }),
      { seed: 20261126, numRuns: 5000 },
    );
  });

  it('for any string of the canonical shape, valid fields parse exactly and invalid ones (Feb 30, 24:00) are absent', () => {
    const digits = (count: number) => fc.stringMatching(new RegExp(`^[0-9]{${count}}$`));
    const canonicalShape = fc
      .tuple(digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), digits(3))
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    fc.assert(
      fc.property(canonicalShape, (text) => {
        // Date.parse rolls Feb 30 over to March and reads 24:00 as the next day; a round trip rules both out.
        const byDate = Date.parse(text);
        const expected =
          !Number.isNaN(byDate) && new Date(byDate).toISOString() === text ? byDate : undefined;
        expect(parseLenientTimestamp(text)).toBe(expected);
      }),
      { seed: 20261126, numRuns: 5000 },
    );
    expect(parseLenientTimestamp('2024-02-29T12:00:00.000Z')).toBe(Date.parse('2024-02-29T12:00:00.000Z'));
    expect(parseLenientTimestamp('2026-02-29T12:00:00.000Z')).toBeUndefined();
    expect(parseLenientTimestamp('2026-01-01T24:00:00.000Z')).toBeUndefined();
  });

  it('when consecutive instants fall on different days, each gets its own date', () => {
    expect(formatUtcMilliseconds(Date.parse('2026-11-25T23:59:59.999Z') + 1)).toBe(
      '2026-11-26T00:00:00.000Z',
    );
    expect(formatUtcMilliseconds(Date.parse('1969-12-31T23:59:59.999Z'))).toBe('1969-12-31T23:59:59.999Z');
    expect(formatUtcMilliseconds(Date.parse('2026-11-25T00:00:00.000Z'))).toBe('2026-11-25T00:00:00.000Z');
  });
});
