import { replayTime } from './replay-window';

describe('replayTime', () => {
  const now = Date.parse('2026-11-27T12:00:00.000Z');

  it('reads a span back from now', () => {
    expect(replayTime('--from', '30m', now)).toBe('2026-11-27T11:30:00.000Z');
    expect(replayTime('--from', '6h', now)).toBe('2026-11-27T06:00:00.000Z');
    expect(replayTime('--from', '7d', now)).toBe('2026-11-20T12:00:00.000Z');
    expect(replayTime('--from', '45s', now)).toBe('2026-11-27T11:59:15.000Z');
  });

  it('reads an RFC 3339 time with its zone, answered in UTC', () => {
    expect(replayTime('--from', '2026-11-01T00:00:00Z', now)).toBe('2026-11-01T00:00:00.000Z');
    expect(replayTime('--to', '2026-11-01T02:30:00.5+02:00', now)).toBe('2026-11-01T00:30:00.500Z');
  });

  it.each(['yesterday', '2026-11-01', '2026-11-01T00:00:00', '-5m', '5w', '', '2026-13-45T99:00:00Z'])(
    'refuses %j as a usage error naming the flag',
    (text) => {
      expect(() => replayTime('--from', text, now)).toThrow(/--from/);
    },
  );
});
