import { EventEmitter } from 'node:events';
import type { AllStreamResolvedEvent } from '@kurrent/kurrentdb-client';
import type { RecordedEvent, SubscribeToAllOptions } from '../../event-store.port';
import { KurrentDbAllSubscription, type KurrentAllEventsSource } from './kurrentdb-all-subscription';

/**
 * The ordering, de-duplication and retry logic of the KurrentDB subscription, driven by a fake of the
 * client's subscription stream (no KurrentDB server runs here; the contract suite covers a real one).
 */
class FakeAllEventsSource extends EventEmitter implements KurrentAllEventsSource {
  unsubscribed = false;
  readableLength = 0;
  async unsubscribe(): Promise<void> {
    this.unsubscribed = true;
  }
  deliver(...events: AllStreamResolvedEvent[]): void {
    for (const event of events) this.emit('data', event);
  }
  caughtUp(): void {
    this.emit('caughtUp', {});
  }
}

function resolved(
  streamId: string,
  revision: number,
  position: bigint,
  overrides: { type?: string; isJson?: boolean; data?: unknown } = {},
): AllStreamResolvedEvent {
  return {
    event: {
      streamId,
      id: `id-${position}`,
      isJson: overrides.isJson ?? true,
      revision: BigInt(revision),
      type: overrides.type ?? 'SourceCreated',
      created: new Date('2025-01-01T00:00:00Z'),
      data: overrides.data ?? { at: Number(position) },
      metadata: { actor: 'system', requestId: `r${position}`, time: '2025-01-01T00:00:00.000Z' },
      position: { commit: position, prepare: position },
    },
    commitPosition: position,
  } as AllStreamResolvedEvent;
}

describe('KurrentDbAllSubscription', () => {
  let sources: FakeAllEventsSource[];
  let openedAfter: Array<bigint | undefined>;
  let subscription: KurrentDbAllSubscription | undefined;

  beforeEach(() => {
    sources = [];
    openedAfter = [];
    subscription = undefined;
  });
  afterEach(async () => {
    await subscription?.stop();
  });

  const start = (
    handler: (event: RecordedEvent) => void | Promise<void>,
    options: SubscribeToAllOptions = {},
    maxAttempts = 3,
  ) => {
    subscription = new KurrentDbAllSubscription(
      (after) => {
        openedAfter.push(after);
        const source = new FakeAllEventsSource();
        sources.push(source);
        return source;
      },
      handler,
      options,
      { maxAttempts, initialDelayMs: 1 },
      () => undefined,
    );
    return subscription;
  };

  it('opens the subscription after the given position, or from the start', async () => {
    start(() => undefined, { after: 42n });
    expect(openedAfter).toEqual([42n]);
    await subscription!.stop();
    start(() => undefined);
    expect(openedAfter).toEqual([42n, undefined]);
  });

  it('calls onCaughtUp after the events that came before it, even with a slow handler', async () => {
    const log: string[] = [];
    start(
      async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(event.type);
      },
      { onCaughtUp: () => log.push('caught up') },
    );
    sources[0].deliver(resolved('s-1', 0, 10n, { type: 'One' }), resolved('s-1', 1, 20n, { type: 'Two' }));
    sources[0].caughtUp();
    sources[0].deliver(resolved('s-2', 0, 30n, { type: 'Live' }));

    await waitUntil(() => log.length === 4);
    expect(log).toEqual(['One', 'Two', 'caught up', 'Live']);
  });

  it('calls onCaughtUp after events the client still buffered when it saw the caught-up message', async () => {
    const log: string[] = [];
    start((event) => void log.push(event.type), { onCaughtUp: () => log.push('caught up') });
    sources[0].deliver(resolved('s-1', 0, 10n, { type: 'Emitted' }));
    sources[0].readableLength = 2;
    sources[0].caughtUp();
    sources[0].readableLength = 0;
    sources[0].deliver(
      resolved('$stats', 0, 15n, { type: '$statsCollected' }),
      resolved('s-1', 1, 20n, { type: 'WasBuffered' }),
      resolved('s-2', 0, 30n, { type: 'Live' }),
    );

    await waitUntil(() => log.length === 4);
    expect(log).toEqual(['Emitted', 'WasBuffered', 'caught up', 'Live']);
  });

  it('maps events to the port shape with the commit position', async () => {
    const received: RecordedEvent[] = [];
    start((event) => void received.push(event));
    sources[0].deliver(resolved('source-7', 3, 1234n, { data: { name: 'web' } }));
    await waitUntil(() => received.length === 1);
    expect(received[0]).toEqual({
      streamName: 'source-7',
      type: 'SourceCreated',
      data: { name: 'web' },
      metadata: { actor: 'system', requestId: 'r1234', time: '2025-01-01T00:00:00.000Z' },
      revision: 3,
      position: 1234n,
    });
  });

  it('never delivers system events or events that are not JSON objects', async () => {
    const received: string[] = [];
    start((event) => void received.push(event.type));
    sources[0].deliver(
      resolved('$settings', 0, 1n, { type: 'Settings' }),
      resolved('source-1', 0, 2n, { type: '$metadata' }),
      resolved('binary-1', 0, 3n, { type: 'Blob', isJson: false, data: new Uint8Array([1]) }),
      resolved('array-1', 0, 4n, { type: 'List', data: [1, 2] }),
      resolved('source-1', 1, 5n, { type: 'Kept' }),
    );
    await waitUntil(() => received.length === 1);
    await settle();
    expect(received).toEqual(['Kept']);
  });

  it('drops events at or before the start position and repeated positions', async () => {
    const received: bigint[] = [];
    start((event) => void received.push(event.position), { after: 20n });
    sources[0].deliver(
      resolved('s', 1, 20n),
      resolved('s', 2, 30n),
      resolved('s', 2, 30n),
      resolved('s', 3, 40n),
    );
    await waitUntil(() => received.length === 2);
    await settle();
    expect(received).toEqual([30n, 40n]);
  });

  it('resubscribes after the last received event when the connection fails, without gaps or duplicates', async () => {
    const received: bigint[] = [];
    const errors: Error[] = [];
    start((event) => void received.push(event.position), { onError: (error) => errors.push(error) });
    sources[0].deliver(resolved('s', 0, 10n), resolved('s', 1, 20n));
    sources[0].emit('error', new Error('connection reset'));

    await waitUntil(() => sources.length === 2);
    expect(sources[0].unsubscribed).toBe(true);
    expect(openedAfter).toEqual([undefined, 20n]);
    // A server may repeat the event at the resume position.
    sources[1].deliver(resolved('s', 1, 20n), resolved('s', 2, 30n));
    // The old stream is abandoned: whatever it still emits is ignored.
    sources[0].deliver(resolved('s', 9, 99n));

    await waitUntil(() => received.length === 3);
    await settle();
    expect(received).toEqual([10n, 20n, 30n]);
    expect(errors).toEqual([]);
  });

  it('reports onCaughtUp only once across reconnects', async () => {
    let caughtUpCalls = 0;
    start(() => undefined, { onCaughtUp: () => caughtUpCalls++ });
    sources[0].caughtUp();
    await waitUntil(() => caughtUpCalls === 1);
    sources[0].emit('end');
    await waitUntil(() => sources.length === 2);
    sources[1].caughtUp();
    await settle();
    expect(caughtUpCalls).toBe(1);
  });

  it('gives up with onError after the allowed number of consecutive failures', async () => {
    const errors: Error[] = [];
    start(() => undefined, { onError: (error) => errors.push(error) }, 2);
    sources[0].emit('error', new Error('first'));
    await waitUntil(() => sources.length === 2);
    sources[1].emit('error', new Error('second'));
    await waitUntil(() => sources.length === 3);
    sources[2].emit('error', new Error('third'));

    await waitUntil(() => errors.length === 1);
    await settle();
    expect(errors.map((error) => error.message)).toEqual(['third']);
    expect(sources).toHaveLength(3);
    expect(sources[2].unsubscribed).toBe(true);
  });

  it('counts failures afresh once a new connection delivers', async () => {
    const errors: Error[] = [];
    start(() => undefined, { onError: (error) => errors.push(error) }, 1);
    sources[0].emit('error', new Error('first'));
    await waitUntil(() => sources.length === 2);
    sources[1].deliver(resolved('s', 0, 10n));
    sources[1].emit('error', new Error('second'));
    await waitUntil(() => sources.length === 3);
    expect(errors).toEqual([]);
  });

  it('ends and reports through onError when the handler throws', async () => {
    const failure = new Error('projection broke');
    const errors: Error[] = [];
    const received: string[] = [];
    start(
      (event) => {
        received.push(event.type);
        if (event.type === 'Poison') throw failure;
      },
      { onError: (error) => errors.push(error) },
    );
    sources[0].deliver(
      resolved('s', 0, 1n, { type: 'Fine' }),
      resolved('s', 1, 2n, { type: 'Poison' }),
      resolved('s', 2, 3n, { type: 'Never' }),
    );
    await waitUntil(() => errors.length === 1);
    sources[0].deliver(resolved('s', 3, 4n, { type: 'AlsoNever' }));
    await settle();
    expect(errors).toEqual([failure]);
    expect(received).toEqual(['Fine', 'Poison']);
    expect(sources[0].unsubscribed).toBe(true);
  });

  it('stop() unsubscribes, waits for the running handler and delivers nothing more', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const received: string[] = [];
    let handlerReturned = false;
    start(async (event) => {
      received.push(event.type);
      await gate;
      handlerReturned = true;
    });
    sources[0].deliver(resolved('s', 0, 1n, { type: 'Slow' }), resolved('s', 1, 2n, { type: 'Queued' }));
    await waitUntil(() => received.length === 1);

    let stopped = false;
    const stopping = subscription!.stop().then(() => (stopped = true));
    await settle();
    expect(sources[0].unsubscribed).toBe(true);
    expect(stopped).toBe(false);

    release();
    await stopping;
    expect(handlerReturned).toBe(true);
    sources[0].deliver(resolved('s', 2, 3n, { type: 'Late' }));
    await settle();
    expect(received).toEqual(['Slow']);
  });

  it('lets a handler stop its own subscription without waiting for itself', async () => {
    const received: string[] = [];
    start(async (event) => {
      received.push(event.type);
      await subscription!.stop();
    });
    sources[0].deliver(resolved('s', 0, 1n, { type: 'First' }), resolved('s', 1, 2n, { type: 'Second' }));
    await waitUntil(() => received.length === 1);
    await subscription!.stop();
    expect(received).toEqual(['First']);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function settle(ms = 50): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
