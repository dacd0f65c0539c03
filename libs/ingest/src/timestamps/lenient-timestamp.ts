/**
 * Lenient ISO-8601 parsing for the message-level `timestamp` and `sentAt` (spec §7.3).
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
 * Epoch milliseconds for a timestamp string, or `undefined` when the value is not one (spec §7.2:
 * unparseable means absent). A naive time is read as UTC, a date alone as midnight UTC [decision].
 * Fractions finer than a millisecond are truncated, never rounded, so a time never moves to the next second.
 */
export function parseLenientTimestamp(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
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

/** `2026-11-25T21:15:05.320Z`: RFC 3339, UTC, exactly three fraction digits (spec §7.2). */
export function formatUtcMilliseconds(epochMs: number): string {
  if (!isWritableAsRfc3339(epochMs)) {
    throw new RangeError(`${epochMs} ms is outside the years RFC 3339 can represent`);
  }
  return new Date(epochMs).toISOString();
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
