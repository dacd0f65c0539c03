/**
 * Lenient ISO-8601 parsing for the message-level `timestamp` and `sentAt` (docs/tracking-api.md §7.3).
 *
 * Deliberately not `Date.parse`: it reads a naive time as *local* time, which would make the result depend
 * on the server's time zone, and it accepts forms (`"Nov 25 2026"`) whose meaning is a guess. This parser
 * accepts exactly the ISO-8601 shapes real clients send and says "absent" for everything else.
 */

// date, then optionally a time (`T`, `t` or a space as Python's str(datetime) writes), a fraction of any
// length with `.` or `,`, and an offset `Z`, `±HH:MM`, `±HHMM` or `±HH`. Month, day, hour, minute and
// second may be unpadded (`2015-2-02T00:30:08.276Z` appears in Segment's own docs).
const ISO_8601_LENIENT =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d+))?)? ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

/** Longer strings are never timestamps; the cap keeps the regex cheap on hostile input. */
const MAX_TIMESTAMP_LENGTH = 64;

/** RFC 3339 can only write years 0000 to 9999, so results outside that range count as unparseable. */
const EARLIEST_WRITABLE_MS = new Date('0000-01-01T00:00:00.000Z').getTime();
const LATEST_WRITABLE_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

/**
 * Epoch milliseconds for a timestamp string, or `undefined` when the value is not one (docs/tracking-api.md §7.2:
 * unparseable means absent). A naive time is read as UTC, a date alone as midnight UTC [decision].
 * Fractions finer than a millisecond are truncated, never rounded, so a time never moves to the next second.
 */
export function parseLenientTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  // Most clients send exactly what Date#toISOString writes; read that without the regex (faster, same result).
  if (value.length === CANONICAL_LENGTH) {
    const canonical = parseCanonicalUtcMilliseconds(value);
    if (canonical !== undefined) return canonical;
  }
  const text = value.trim();
  if (text.length === 0 || text.length > MAX_TIMESTAMP_LENGTH) return undefined;
  const match = ISO_8601_LENIENT.exec(text);
  if (match === null) return undefined;

  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fractionText] = match;
  const [offsetSign, offsetHourText, offsetMinuteText] = [match[9], match[10], match[11]];
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = hourText === undefined ? 0 : Number(hourText);
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  const millisecond = fractionText === undefined ? 0 : Number(fractionText.slice(0, 3).padEnd(3, '0'));
  const offsetHours = offsetHourText === undefined ? 0 : Number(offsetHourText);
  const offsetMinutes = offsetMinuteText === undefined ? 0 : Number(offsetMinuteText);

  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;

  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0 to 99 onto 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  const offsetMs = (offsetSign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const epochMs = date.getTime() - offsetMs;
  return isWritableAsRfc3339(epochMs) ? epochMs : undefined;
}

/** `2026-11-25T21:15:05.320Z`: RFC 3339, UTC, exactly three fraction digits (docs/tracking-api.md §7.2). */
export function formatUtcMilliseconds(epochMs: number): string {
  if (!isWritableAsRfc3339(epochMs)) {
    throw new RangeError(`${epochMs} ms is outside the years RFC 3339 can represent`);
  }
  if (!Number.isInteger(epochMs)) return new Date(epochMs).toISOString();
  // Date#toISOString was ~5 % of the tracking API's CPU (two per message). The timestamps of one batch
  // nearly always fall on one day, so its `YYYY-MM-DDT` is remembered and the time written by hand.
  const dayStartMs = Math.floor(epochMs / MS_PER_DAY) * MS_PER_DAY;
  if (dayStartMs !== lastDayStartMs) {
    lastDayPrefix = new Date(dayStartMs).toISOString().slice(0, 11);
    lastDayStartMs = dayStartMs;
  }
  let rest = epochMs - dayStartMs;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const milliseconds = rest - seconds * 1000;
  return `${lastDayPrefix}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[milliseconds]}Z`;
}

const MS_PER_DAY = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, value) => String(value).padStart(3, '0'));
let lastDayStartMs = Number.NaN;
let lastDayPrefix = '';

/** `YYYY-MM-DDTHH:mm:ss.sssZ`, as Date#toISOString writes years 0000 to 9999. */
const CANONICAL_LENGTH = 24;
const CANONICAL_SEPARATORS: ReadonlyArray<readonly [index: number, character: number]> = [
  [4, 0x2d], // -
  [7, 0x2d], // -
  [10, 0x54], // T
  [13, 0x3a], // :
  [16, 0x3a], // :
  [19, 0x2e], // .
  [23, 0x5a], // Z
];

/**
 * The canonical form only, with every field range-checked as the lenient parser does; `undefined` for
 * anything else (the caller then tries the lenient parser, which gives the same answer for it).
 */
function parseCanonicalUtcMilliseconds(text: string): number | undefined {
  for (const [index, character] of CANONICAL_SEPARATORS) {
    if (text.charCodeAt(index) !== character) return undefined;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  const millisecond = digitsAt(text, 20, 3);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millisecond < 0) {
    return undefined;
  }
  return (
    daysFromCivil(year, month, day) * MS_PER_DAY +
    hour * 3_600_000 +
    minute * 60_000 +
    second * 1000 +
    millisecond
  );
}

/** The decimal number written by `count` ASCII digits at `start`, or -1 when one is not a digit. */
function digitsAt(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index += 1) {
    const digit = text.charCodeAt(index) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const shiftedYear = month <= 2 ? year - 1 : year;
  const era = Math.floor(shiftedYear / 400);
  const yearOfEra = shiftedYear - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

export function isWritableAsRfc3339(epochMs: number): boolean {
  return Number.isFinite(epochMs) && epochMs >= EARLIEST_WRITABLE_MS && epochMs <= LATEST_WRITABLE_MS;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
