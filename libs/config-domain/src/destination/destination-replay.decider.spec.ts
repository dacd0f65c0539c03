import { given } from '../testing/given-when-then';
import { destinationDecider } from './destination.decider';
import { DestinationEvent, ReplayRecord } from './destination.events';

const identity = { workspaceSlug: 'ws', sourceSlug: 'js', sourceId: 'src1', destinationSlug: 'webhooks' };
const created: DestinationEvent = {
  type: 'DestinationCreated',
  data: {
    ...identity,
    catalogSlug: 'webhooks',
    displayName: 'Webhooks',
    connectionMode: 'CLOUD',
    enabled: false,
    config: {},
    createTime: '2026-01-01T00:00:00.000Z',
    updateTime: '2026-01-01T00:00:00.000Z',
  },
};
const now = '2026-01-02T00:00:00.000Z';
const replay: ReplayRecord = {
  replayId: 'rp_1',
  startTime: '2026-01-01T00:00:00.000Z',
  endTime: null,
  state: 'RUNNING',
  createTime: now,
  finishTime: null,
  counts: null,
  failureReason: null,
};
const requested: DestinationEvent = { type: 'DestinationReplayRequested', data: { ...identity, replay } };
const counts = { delivered: 3, discarded: 0, filtered: 1, skipped: 0, dead_lettered: 0 };

describe('destination decider: replays and dead-letter redrives', () => {
  it('requests a replay, even of a disabled destination', () => {
    given(destinationDecider, [created])
      .when({
        type: 'RequestReplay',
        replayId: 'rp_1',
        startTime: '2026-01-01T00:00:00Z',
        endTime: null,
        now,
      })
      .then([requested]);
  });

  it.each([
    ['an unparseable start', 'yesterday', null, 'start_time must be an RFC 3339 time'],
    ['a start in the future', '2026-02-01T00:00:00Z', null, 'must not be in the future'],
    ['an end before the start', '2026-01-01T12:00:00Z', '2026-01-01T06:00:00Z', 'end_time must be after'],
    ['an unparseable end', '2026-01-01T12:00:00Z', 'soon', 'end_time must be an RFC 3339 time'],
  ])('refuses %s', (_case, startTime, endTime, message) => {
    given(destinationDecider, [created])
      .when({ type: 'RequestReplay', replayId: 'rp_1', startTime, endTime, now })
      .thenThrows('invalid_argument', message);
  });

  it('refuses a replay of a destination that does not exist', () => {
    given(destinationDecider)
      .when({
        type: 'RequestReplay',
        replayId: 'rp_1',
        startTime: '2026-01-01T00:00:00Z',
        endTime: null,
        now,
      })
      .thenThrows('not_found', 'destination not found');
  });

  it('finishes a running replay with its counts, once', () => {
    const finished: DestinationEvent = {
      type: 'DestinationReplayFinished',
      data: {
        ...identity,
        replayId: 'rp_1',
        state: 'COMPLETED',
        counts,
        finishTime: now,
        failureReason: null,
      },
    };
    const { state } = given(destinationDecider, [created, requested])
      .when({ type: 'FinishReplay', replayId: 'rp_1', state: 'COMPLETED', counts, failureReason: null, now })
      .then([finished]);
    expect(state).toMatchObject({
      replays: [{ replayId: 'rp_1', state: 'COMPLETED', counts, finishTime: now }],
    });
    given(destinationDecider, [created, requested, finished])
      .when({ type: 'FinishReplay', replayId: 'rp_1', state: 'COMPLETED', counts, failureReason: null, now })
      .then([]);
  });

  it('refuses to finish an unknown replay', () => {
    given(destinationDecider, [created])
      .when({ type: 'FinishReplay', replayId: 'rp_x', state: 'FAILED', counts, failureReason: 'x', now })
      .thenThrows('not_found', 'replay rp_x not found');
  });

  it('records a cancel request on a running replay, once; the router then finishes it CANCELLED', () => {
    const cancelRequested: DestinationEvent = {
      type: 'DestinationReplayCancelRequested',
      data: { ...identity, replayId: 'rp_1', requestTime: now },
    };
    const { state } = given(destinationDecider, [created, requested])
      .when({ type: 'RequestReplayCancel', replayId: 'rp_1', now })
      .then([cancelRequested]);
    expect(state).toMatchObject({
      replays: [{ replayId: 'rp_1', state: 'RUNNING', cancelRequestTime: now }],
    });
    given(destinationDecider, [created, requested, cancelRequested])
      .when({ type: 'RequestReplayCancel', replayId: 'rp_1', now: '2026-01-02T00:00:05.000Z' })
      .then([]);
    const { state: cancelled } = given(destinationDecider, [created, requested, cancelRequested])
      .when({ type: 'FinishReplay', replayId: 'rp_1', state: 'CANCELLED', counts, failureReason: null, now })
      .then([
        {
          type: 'DestinationReplayFinished',
          data: {
            ...identity,
            replayId: 'rp_1',
            state: 'CANCELLED',
            counts,
            finishTime: now,
            failureReason: null,
          },
        },
      ]);
    expect(cancelled).toMatchObject({ replays: [{ state: 'CANCELLED', counts, cancelRequestTime: now }] });
  });

  it('refuses to cancel an unknown replay, or one that has ended', () => {
    given(destinationDecider, [created])
      .when({ type: 'RequestReplayCancel', replayId: 'rp_x', now })
      .thenThrows('not_found', 'replay rp_x not found');
    const finished: DestinationEvent = {
      type: 'DestinationReplayFinished',
      data: {
        ...identity,
        replayId: 'rp_1',
        state: 'COMPLETED',
        counts,
        finishTime: now,
        failureReason: null,
      },
    };
    given(destinationDecider, [created, requested, finished])
      .when({ type: 'RequestReplayCancel', replayId: 'rp_1', now })
      .thenThrows('invalid_argument', 'replay rp_1 is COMPLETED: only a running replay can be cancelled');
    given(destinationDecider)
      .when({ type: 'RequestReplayCancel', replayId: 'rp_1', now })
      .thenThrows('not_found', 'destination not found');
  });

  it('records a dead-letter redrive request', () => {
    given(destinationDecider, [created])
      .when({ type: 'RequestDeadLetterRedrive', redriveId: 'rd_1', now })
      .then([
        {
          type: 'DestinationDeadLettersRedriveRequested',
          data: { ...identity, redriveId: 'rd_1', requestTime: now },
        },
      ]);
  });

  it('records a redrive once, and keeps the requested ones not recorded yet as pending, oldest first', () => {
    const requestedRedrive = (redriveId: string): DestinationEvent => ({
      type: 'DestinationDeadLettersRedriveRequested',
      data: { ...identity, redriveId, requestTime: now },
    });
    const redriven: DestinationEvent = {
      type: 'DestinationDeadLettersRedriven',
      data: { ...identity, redriveId: 'rd_1', delivered: [4], failed: [], finishTime: now },
    };
    const record = {
      type: 'RecordDeadLetterRedrive' as const,
      redriveId: 'rd_1',
      delivered: [4],
      failed: [],
      now,
    };
    const { state } = given(destinationDecider, [created, requestedRedrive('rd_1'), requestedRedrive('rd_2')])
      .when(record)
      .then([redriven]);
    expect(state).toMatchObject({ pendingRedriveIds: ['rd_2'] });
    // A second replica that finished the same redrive records nothing.
    given(destinationDecider, [created, requestedRedrive('rd_1'), redriven])
      .when(record)
      .then([]);
  });
});
