import { parseRetryAfter } from './retry-after';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delay-seconds, whole or fractional, around whitespace', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1_500);
  });

  it('reads an HTTP date as the time left until it, never negative', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
  });

  it('answers undefined for what is absent or unreadable, bare negative numbers included', () => {
    for (const header of [null, undefined, '', '   ', '-5', '-1', 'later', 'soon', 'Foo, 99 Bar 2026']) {
      expect(parseRetryAfter(header, now)).toBeUndefined();
    }
  });
});
