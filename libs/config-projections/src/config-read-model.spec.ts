import { SqliteEventStore, type NewEvent, type RecordedEvent } from '@tributary/event-store';
import { ConfigProjectionRunner } from './config-projection.runner';
import { type ConfigFoldFailure, ConfigReadModel } from './config-read-model';

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

describe('ConfigReadModel is total', () => {
  it('skips, reports and counts an event it cannot fold, and folds the ones after it', async () => {
    const failures: ConfigFoldFailure[] = [];
    const model = new ConfigReadModel((failure) => failures.push(failure));
    model.apply(destinationCreated(1));
    model.apply(
      recorded(2, 'DestinationDeadLettersRedriven', { ...identity, redriveId: 'r', delivered: 'all' }),
    );
    const waited = model.waitFor(3n);
    model.apply(
      recorded(3, 'DestinationUpdated', {
        ...identity,
        changes: { enabled: false },
        updateTime: metadata.time,
      }),
    );
    await waited;

    expect(model.currentPosition).toBe(3n);
    expect(model.destination('src1', 'webhooks')?.destination.enabled).toBe(false);
    expect(model.foldFailures).toEqual({ fold: 1, listener: 0 });
    expect(failures).toEqual([
      expect.objectContaining({ stage: 'fold', position: 2n, type: 'DestinationDeadLettersRedriven' }),
    ]);
  });

  it('folds data nested far past any stack without walking it', () => {
    let deep: unknown = 'leaf';
    for (let level = 0; level < 100_000; level += 1) deep = { a: deep };
    const model = new ConfigReadModel();
    model.apply(destinationCreated(1));
    model.apply(
      recorded(2, 'DestinationUpdated', {
        ...identity,
        changes: { config: { deep } },
        updateTime: metadata.time,
      }),
    );
    expect(model.destination('src1', 'webhooks')?.destination.config.deep).toBe(deep);
    expect(model.foldFailures.fold).toBe(0);
  });

  it('keeps telling the other listeners when one of them throws', () => {
    const model = new ConfigReadModel();
    const heard: string[] = [];
    model.onChange(() => {
      throw new Error('listener bug');
    });
    model.onChange((change) => heard.push(change.kind));
    model.apply(destinationCreated(1));
    expect(heard).toEqual(['destination-upserted']);
    expect(model.foldFailures).toEqual({ fold: 0, listener: 1 });
    expect(model.currentPosition).toBe(1n);
  });

  it('survives a reporter that throws', () => {
    const model = new ConfigReadModel(() => {
      throw new Error('logger down');
    });
    model.apply(recorded(1, 'DestinationDeadLettersRedriven', { ...identity, delivered: null }));
    expect(model.currentPosition).toBe(1n);
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
    const model = new ConfigReadModel();
    const runner = new ConfigProjectionRunner(store, model);
    try {
      await runner.start();
      expect(model.foldFailures.fold).toBe(1);
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
