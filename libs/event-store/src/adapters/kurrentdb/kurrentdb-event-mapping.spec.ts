import { ANY, NO_STREAM, StreamNotFoundError, WrongExpectedVersionError } from '@kurrent/kurrentdb-client';
import {
  commitPositionOf,
  fromKurrentCurrentState,
  isStreamNotFoundError,
  isWrongExpectedVersionError,
  toKurrentStreamState,
} from './kurrentdb-event-mapping';

describe('KurrentDB mapping', () => {
  it('maps expected revisions to the client stream states', () => {
    expect(toKurrentStreamState('no_stream')).toBe(NO_STREAM);
    expect(toKurrentStreamState('any')).toBe(ANY);
    expect(toKurrentStreamState(0)).toBe(0n);
    expect(toKurrentStreamState(41)).toBe(41n);
  });

  it("maps the client's actual stream state back to ours", () => {
    expect(fromKurrentCurrentState(7n)).toBe(7);
    expect(fromKurrentCurrentState(0n)).toBe(0);
    expect(fromKurrentCurrentState('no_stream')).toBe('no_stream');
    expect(fromKurrentCurrentState(undefined)).toBe('no_stream');
    expect(fromKurrentCurrentState(-1n)).toBe('no_stream');
  });

  it("recognises the client's errors by their type", () => {
    const conflict = new WrongExpectedVersionError(undefined, { streamName: 's', expected: 0n, current: 3n });
    expect(isWrongExpectedVersionError(conflict)).toBe(true);
    expect(isWrongExpectedVersionError(new Error('wrong expected version'))).toBe(false);
    expect(isStreamNotFoundError(new StreamNotFoundError(undefined, 's'))).toBe(true);
    expect(isStreamNotFoundError(conflict)).toBe(false);
    expect(isStreamNotFoundError(undefined)).toBe(false);
  });

  it('takes the commit position, and ignores the "unknown" value old servers send on stream reads', () => {
    expect(commitPositionOf({ commitPosition: 500n })).toBe(500n);
    expect(
      commitPositionOf({ event: { position: { commit: 600n, prepare: 600n } } } as Parameters<
        typeof commitPositionOf
      >[0]),
    ).toBe(600n);
    expect(commitPositionOf({ commitPosition: 18446744073709551615n })).toBeUndefined();
    expect(commitPositionOf({})).toBeUndefined();
  });
});
