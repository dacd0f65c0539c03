import type { ConfigEvent, DestinationRecord, FilterRecord, ReplayRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import {
  allDestinations,
  destinationOf,
  destinationsOfSource,
  destinationsProjection,
} from './destinations.projection';

const time = '2026-01-01T00:00:00.000Z';
const identity = (sourceId: string, destinationSlug: string) => ({
  workspaceSlug: 'ws',
  sourceSlug: `slug-${sourceId}`,
  sourceId,
  destinationSlug,
});
const destination = (sourceId: string, destinationSlug: string): DestinationRecord => ({
  ...identity(sourceId, destinationSlug),
  catalogSlug: 'webhooks',
  displayName: 'Webhooks',
  connectionMode: 'CLOUD',
  enabled: true,
  config: { url: 'https://hooks.example/a' },
  createTime: time,
  updateTime: time,
});
const created = (sourceId: string, destinationSlug: string): ConfigEvent => ({
  type: 'DestinationCreated',
  data: destination(sourceId, destinationSlug),
});
const filter: FilterRecord = {
  filterId: 'f1',
  title: 'drop pings',
  description: '',
  if: 'event = "ping"',
  enabled: true,
  actions: [{ type: 'drop_event' }],
  createTime: time,
  updateTime: time,
};
const replay: ReplayRecord = {
  replayId: 'rp1',
  startTime: time,
  endTime: null,
  state: 'RUNNING',
  createTime: time,
  finishTime: null,
  counts: null,
  failureReason: null,
};
const webhooks = identity('src1', 'webhooks');

describe('destinations projection', () => {
  it('holds a created destination with no filters, replays or redrives, by source and slug', () => {
    const { view } = given(destinationsProjection, [
      created('src1', 'webhooks'),
      created('src2', 'webhooks'),
    ]);
    expect(destinationOf(view, 'src1', 'webhooks')).toEqual({
      destination: destination('src1', 'webhooks'),
      filters: [],
      replays: [],
      redrivenDeadLetters: new Set(),
      pendingRedriveIds: [],
    });
    expect(destinationsOfSource(view, 'src2').map((entry) => entry.destination)).toEqual([
      destination('src2', 'webhooks'),
    ]);
    expect(allDestinations(view)).toHaveLength(2);
  });

  it('applies updates, filters and replays as the destination decider folds them', () => {
    const { view } = given(destinationsProjection, [
      created('src1', 'webhooks'),
      {
        type: 'DestinationUpdated',
        data: { ...webhooks, changes: { enabled: false, config: { secret: 's' } }, updateTime: 'later' },
      },
      { type: 'DestinationFilterCreated', data: { ...webhooks, filter } },
      {
        type: 'DestinationFilterUpdated',
        data: { ...webhooks, filterId: 'f1', changes: { enabled: false }, updateTime: 'later' },
      },
      { type: 'DestinationReplayRequested', data: { ...webhooks, replay } },
      {
        type: 'DestinationReplayFinished',
        data: {
          ...webhooks,
          replayId: 'rp1',
          state: 'COMPLETED',
          counts: { delivered: 3, discarded: 0, filtered: 1, skipped: 0, dead_lettered: 0 },
          finishTime: 'later',
          failureReason: null,
        },
      },
    ]);
    const entry = destinationOf(view, 'src1', 'webhooks')!;
    expect(entry.destination).toEqual({
      ...destination('src1', 'webhooks'),
      enabled: false,
      config: { url: 'https://hooks.example/a', secret: 's' },
      updateTime: 'later',
    });
    expect(entry.filters).toEqual([{ ...filter, enabled: false, updateTime: 'later' }]);
    expect(entry.replays).toEqual([
      {
        ...replay,
        state: 'COMPLETED',
        counts: { delivered: 3, discarded: 0, filtered: 1, skipped: 0, dead_lettered: 0 },
        finishTime: 'later',
      },
    ]);
  });

  it('keeps the record and the filters of an entry when other parts change: the router caches by them', () => {
    const given_ = given(destinationsProjection, [created('src1', 'webhooks')]);
    const before = destinationOf(given_.view, 'src1', 'webhooks')!;
    const after = destinationOf(
      given_.when({ type: 'DestinationReplayRequested', data: { ...webhooks, replay } }).view,
      'src1',
      'webhooks',
    )!;
    expect(after).not.toBe(before);
    expect(after.destination).toBe(before.destination);
    expect(after.filters).toBe(before.filters);
    expect(before.replays).toEqual([]);
  });

  it('tells listeners of a created or changed destination with the view after it', () => {
    const { view, changes } = given(destinationsProjection).when(created('src1', 'webhooks'));
    expect(changes).toEqual([
      { kind: 'destination-upserted', view: destinationOf(view, 'src1', 'webhooks') },
    ]);
    const filtered = given(destinationsProjection, [created('src1', 'webhooks')]).when({
      type: 'DestinationFilterCreated',
      data: { ...webhooks, filter },
    });
    expect(filtered.changes).toEqual([
      { kind: 'destination-upserted', view: destinationOf(filtered.view, 'src1', 'webhooks') },
    ]);
  });

  it('keeps requested redrives in order, tells the router of each, and drops one once recorded', () => {
    const requested = (redriveId: string): ConfigEvent => ({
      type: 'DestinationDeadLettersRedriveRequested',
      data: { ...webhooks, redriveId, requestTime: time },
    });
    // One view, folded on event by event.
    const given_ = given(destinationsProjection, [created('src1', 'webhooks'), requested('r1')]);
    const second = given_.when(requested('r2'));
    expect(destinationOf(second.view, 'src1', 'webhooks')?.pendingRedriveIds).toEqual(['r1', 'r2']);
    expect(second.changes).toEqual([
      {
        kind: 'dead-letter-redrive-requested',
        view: destinationOf(second.view, 'src1', 'webhooks'),
        redriveId: 'r2',
      },
    ]);

    const before = destinationOf(second.view, 'src1', 'webhooks')!;
    const recorded = given_.when({
      type: 'DestinationDeadLettersRedriven',
      data: { ...webhooks, redriveId: 'r1', delivered: [4, 9], failed: [], finishTime: time },
    });
    const after = destinationOf(recorded.view, 'src1', 'webhooks')!;
    expect(after.pendingRedriveIds).toEqual(['r2']);
    expect([...after.redrivenDeadLetters]).toEqual([4, 9]);
    // A view handed out before keeps what it said.
    expect([...before.redrivenDeadLetters]).toEqual([]);
    expect(recorded.changes).toEqual([]);
  });

  it('refuses a recorded redrive whose delivered letters are not a list, and keeps the view as it was', () => {
    const given_ = given(destinationsProjection, [created('src1', 'webhooks')]);
    const before = destinationOf(given_.view, 'src1', 'webhooks');
    expect(() =>
      given_.when({
        type: 'DestinationDeadLettersRedriven',
        data: {
          ...webhooks,
          redriveId: 'r1',
          delivered: 'all' as unknown as number[],
          failed: [],
          finishTime: time,
        },
      }),
    ).toThrow(TypeError);
    expect(destinationOf(given_.view, 'src1', 'webhooks')).toBe(before);
  });

  it('forgets a deleted destination and tells listeners which record it was', () => {
    const { view, changes } = given(destinationsProjection, [created('src1', 'webhooks')]).when({
      type: 'DestinationDeleted',
      data: webhooks,
    });
    expect(destinationOf(view, 'src1', 'webhooks')).toBeUndefined();
    expect(changes).toEqual([{ kind: 'destination-deleted', destination: destination('src1', 'webhooks') }]);
  });

  it('drops every destination of a deleted source, telling listeners of each, and keeps the others', () => {
    const { view, changes } = given(destinationsProjection, [
      created('src1', 'webhooks'),
      created('src2', 'webhooks'),
      created('src1', 'webhooks-2'),
    ]).when({
      type: 'SourceDeleted',
      data: { workspaceSlug: 'ws', sourceSlug: 'slug-src1', sourceId: 'src1' },
    });
    expect(allDestinations(view).map((entry) => entry.destination)).toEqual([
      destination('src2', 'webhooks'),
    ]);
    expect(changes).toEqual([
      { kind: 'destination-deleted', destination: destination('src1', 'webhooks') },
      { kind: 'destination-deleted', destination: destination('src1', 'webhooks-2') },
    ]);
  });

  it('ignores events of a destination it does not hold, and says nothing', () => {
    const { view, changes } = given(destinationsProjection).when({
      type: 'DestinationUpdated',
      data: { ...webhooks, changes: { enabled: false }, updateTime: time },
    });
    expect(allDestinations(view)).toEqual([]);
    expect(changes).toEqual([]);
    expect(
      given(destinationsProjection).when({ type: 'DestinationDeleted', data: webhooks }).changes,
    ).toEqual([]);
  });
});
