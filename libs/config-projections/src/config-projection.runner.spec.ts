import { SqliteEventStore, type NewEvent, type RecordedEvent } from '@tributary/event-store';
import { type ConfigFoldFailure, ConfigProjectionRunner } from './config-projection.runner';
import { ConfigReadModel } from './config-read-model';

const metadata = { actor: 'system', requestId: 'req-1', time: '2026-01-01T00:00:00.000Z' };
const identity = { workspaceSlug: 'ws', sourceSlug: 'js', sourceId: 'src1', destinationSlug: 'webhooks' };

function recorded(position: number, type: string, data: Record<string, unknown>): RecordedEvent {
  return { streamName: `stream-${position}`, type, data, metadata, revision: 0, position: BigInt(position) };
}

const destinationCreated = (position: number) =>
  recorded(position, 'DestinationCreated', {
    ...identity,
    catalogSlug: 'webhooks',
    displayName: 'Webhooks',
    connectionMode: 'CLOUD',
    enabled: true,
    config: {},
    createTime: metadata.time,
    updateTime: metadata.time,
  });

describe('ConfigProjectionRunner is total', () => {
  it('skips, reports and counts an event it cannot fold, and folds the ones after it', async () => {
    const failures: ConfigFoldFailure[] = [];
    const runner = new ConfigProjectionRunner((failure) => failures.push(failure));
    const model = new ConfigReadModel(runner);
    runner.apply(destinationCreated(1));
    runner.apply(
      recorded(2, 'DestinationDeadLettersRedriven', { ...identity, redriveId: 'r', delivered: 'all' }),
    );
    const waited = model.waitFor(3n);
    runner.apply(
      recorded(3, 'DestinationUpdated', {
        ...identity,
        changes: { enabled: false },
        updateTime: metadata.time,
      }),
    );
    await waited;

    expect(model.currentPosition).toBe(3n);
    expect(model.destination('src1', 'webhooks')?.destination.enabled).toBe(false);
    expect(runner.foldFailures).toEqual({ fold: 1, listener: 0 });
    expect(failures).toEqual([
      expect.objectContaining({ stage: 'fold', position: 2n, type: 'DestinationDeadLettersRedriven' }),
    ]);
  });

  it('folds data nested far past any stack without walking it', () => {
    let deep: unknown = 'leaf';
    for (let level = 0; level < 100_000; level += 1) deep = { a: deep };
    const runner = new ConfigProjectionRunner();
    const model = new ConfigReadModel(runner);
    runner.apply(destinationCreated(1));
    runner.apply(
      recorded(2, 'DestinationUpdated', {
        ...identity,
        changes: { config: { deep } },
        updateTime: metadata.time,
      }),
    );
    expect(model.destination('src1', 'webhooks')?.destination.config.deep).toBe(deep);
    expect(runner.foldFailures.fold).toBe(0);
  });

  it('keeps telling the other listeners when one of them throws', () => {
    const runner = new ConfigProjectionRunner();
    const heard: string[] = [];
    runner.onChange(() => {
      throw new Error('listener bug');
    });
    runner.onChange((change) => heard.push(change.kind));
    runner.apply(destinationCreated(1));
    expect(heard).toEqual(['destination-upserted']);
    expect(runner.foldFailures).toEqual({ fold: 0, listener: 1 });
    expect(runner.currentPosition).toBe(1n);
  });

  it('survives a reporter that throws', () => {
    const runner = new ConfigProjectionRunner(() => {
      throw new Error('logger down');
    });
    runner.apply(destinationCreated(1));
    runner.apply(recorded(2, 'DestinationDeadLettersRedriven', { ...identity, delivered: null }));
    expect(runner.foldFailures.fold).toBe(1);
    expect(runner.currentPosition).toBe(2n);
  });
});

describe('ConfigProjectionRunner folds each event into every projection', () => {
  it('tells listeners of a deleted source’s destinations before the source, once every view holds the event', () => {
    const runner = new ConfigProjectionRunner();
    const model = new ConfigReadModel(runner);
    const source = {
      workspaceSlug: 'ws',
      sourceSlug: 'js',
      sourceId: 'src1',
      catalogName: 'catalog/sources/javascript',
      displayName: 'JS',
      writeKey: 'key-js',
      createTime: metadata.time,
    };
    runner.apply(recorded(1, 'SourceCreated', { ...source, schemaConfig: {} }));
    runner.apply(destinationCreated(2));
    runner.apply(recorded(3, 'TrackingPlanCreated', { workspaceSlug: 'ws', planId: 'rs_1', rules: {} }));
    runner.apply(
      recorded(4, 'TrackingPlanSourceConnected', { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'js' }),
    );
    const heard: { kind: string; sourceKnown: boolean; destinations: number; planOfSource?: string }[] = [];
    runner.onChange((change) =>
      heard.push({
        kind: change.kind,
        sourceKnown: model.sourceByWriteKey('key-js') !== undefined,
        destinations: model.listDestinations('src1').length,
        planOfSource: model.trackingPlanIdOfSource('ws', 'js'),
      }),
    );
    runner.apply(recorded(5, 'SourceDeleted', { workspaceSlug: 'ws', sourceSlug: 'js', sourceId: 'src1' }));
    expect(heard).toEqual([
      { kind: 'destination-deleted', sourceKnown: false, destinations: 0, planOfSource: undefined },
      { kind: 'source-deleted', sourceKnown: false, destinations: 0, planOfSource: undefined },
    ]);
    expect(model.trackingPlan('ws', 'rs_1')?.connectedSourceSlugs).toEqual([]);
  });

  it('ignores an event at or before its position: a catch-up that overlaps the live feed folds nothing twice', () => {
    const runner = new ConfigProjectionRunner();
    const heard: string[] = [];
    runner.onChange((change) => heard.push(change.kind));
    runner.apply(destinationCreated(1));
    runner.apply(destinationCreated(1));
    expect(heard).toEqual(['destination-upserted']);
    expect(runner.eventsApplied).toBe(1);
  });
});

describe('ConfigProjectionRunner on a store holding an event no fold expects', () => {
  it('catches up, becomes ready and stays live', async () => {
    const store = new SqliteEventStore(':memory:');
    const event = (type: string, data: Record<string, unknown>): NewEvent => ({ type, data, metadata });
    await store.append(
      'destination-src1/webhooks',
      [event('DestinationCreated', destinationCreated(0).data)],
      'no_stream',
    );
    await store.append(
      'destination-src1/webhooks',
      [event('DestinationDeadLettersRedriven', { ...identity, redriveId: 'r', delivered: 42 })],
      0,
    );
    const runner = new ConfigProjectionRunner();
    const model = new ConfigReadModel(runner);
    try {
      await runner.start(store);
      expect(runner.foldFailures.fold).toBe(1);
      const { position } = await store.append(
        'destination-src1/webhooks',
        [
          event('DestinationUpdated', {
            ...identity,
            changes: { enabled: false },
            updateTime: metadata.time,
          }),
        ],
        1,
      );
      await model.waitFor(position);
      expect(model.destination('src1', 'webhooks')?.destination.enabled).toBe(false);
    } finally {
      await runner.stop();
      await store.close();
    }
  });
});
