import { replayProgress } from './replay-progress';

describe('replayProgress', () => {
  it('adds the counts the lease saved, and what the consumer has left', () => {
    expect(
      replayProgress(
        { counts: { delivered: 5, discarded: 1, filtered: 2, skipped: 0, dead_lettered: 1 }, settled: [9] },
        { undelivered: 10, unacknowledged: 3 },
      ),
    ).toEqual({ settled: 9, remaining: 13 });
  });

  it('counts nothing settled before the first save, and ignores what is not a count', () => {
    expect(replayProgress(undefined, { undelivered: 4, unacknowledged: 0 })).toEqual({
      settled: 0,
      remaining: 4,
    });
    expect(
      replayProgress(
        { counts: { delivered: '7', filtered: -2, skipped: 1.5, discarded: 3 } },
        { undelivered: 0, unacknowledged: 0 },
      ),
    ).toEqual({ settled: 3, remaining: 0 });
    expect(replayProgress({ counts: null }, { undelivered: 1, unacknowledged: 1 })).toEqual({
      settled: 0,
      remaining: 2,
    });
  });

  it('is null until the replay has a consumer', () => {
    expect(replayProgress({ counts: { delivered: 1 } }, undefined)).toBeNull();
  });
});
