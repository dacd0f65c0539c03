import { Aggregate, Decider, DomainError, invalidArgument } from '@tributary/config-domain';
import {
  EventStore,
  EventStoreUnavailableError,
  SqliteEventStore,
  Subscription,
  WrongExpectedRevisionError,
} from '@tributary/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigCommandHandler } from './config-command-handler';
import { ConflictRetry, conflictRetryDelayMs, RETRY_ON_CONFLICT, RUN_ONCE } from './conflict-retry';
import { ProjectionWaiter } from './projection-waiter.port';

/** A counter that can be closed: small enough to show every path of the handler. */
type CounterState = { count: number; closed: boolean };
type CounterCommand = { type: 'Increment' } | { type: 'Close' } | { type: 'Nothing' };
type CounterEvent =
  | { type: 'CounterIncremented'; data: { count: number } }
  | { type: 'CounterClosed'; data: Record<string, never> };

const counterDecider: Decider<CounterState, CounterCommand, CounterEvent> = {
  initialState: { count: 0, closed: false },
  decide(state, command) {
    if (command.type === 'Nothing') return [];
    if (state.closed) throw invalidArgument('the counter is closed');
    if (command.type === 'Close') return [{ type: 'CounterClosed', data: {} }];
    return [{ type: 'CounterIncremented', data: { count: state.count + 1 } }];
  },
  evolve(state, event) {
    return event.type === 'CounterClosed'
      ? { ...state, closed: true }
      : { ...state, count: event.data.count };
  },
};

const counterAggregate: Aggregate<string, CounterState, CounterCommand, CounterEvent> = {
  streamName: (id) => `counter-${id}`,
  decider: counterDecider,
};

const metadata = { actor: 'access-tokens/1', requestId: 'req-1', time: '2026-01-01T00:00:00.000Z' };

/**
 * The read side as the handler sees it: a follower of the store's events that knows how far it
 * has got. Real enough to show that `handle` resolves only once the new events are followed.
 */
class StoreFollower implements ProjectionWaiter {
  position = -1n;
  private waiters: { position: bigint; resolve: () => void }[] = [];
  private readonly subscription: Subscription;

  constructor(store: EventStore) {
    this.subscription = store.subscribeToAll((event) => {
      this.position = event.position;
      const ready = this.waiters.filter((waiter) => waiter.position <= this.position);
      this.waiters = this.waiters.filter((waiter) => waiter.position > this.position);
      ready.forEach((waiter) => waiter.resolve());
    });
  }

  waitFor(position: bigint): Promise<void> {
    if (this.position >= position) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ position, resolve }));
  }

  stop(): Promise<void> {
    return this.subscription.stop();
  }
}

describe('ConfigCommandHandler (SQLite event store)', () => {
  let directory: string;
  let store: SqliteEventStore;
  let follower: StoreFollower;
  let pauses: number[];
  let handler: ConfigCommandHandler;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'tributary-commands-'));
    store = new SqliteEventStore(join(directory, 'events.db'), { pollIntervalMs: 10 });
    follower = new StoreFollower(store);
    pauses = [];
    handler = new ConfigCommandHandler(store, follower, async (ms) => {
      pauses.push(ms);
    });
  });

  afterEach(async () => {
    await follower.stop();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A command whose making appends `intruder` to the stream first, as a concurrent writer would. */
  function racedBy(intruder: CounterEvent['type'], times = Infinity) {
    let raced = 0;
    const made = { count: 0 };
    const command = (): CounterCommand => {
      made.count += 1;
      if (raced < times) {
        raced += 1;
        const data = intruder === 'CounterIncremented' ? { count: 100 + raced } : {};
        // The SQLite adapter commits an append as it is called: the competing write is stored
        // between the handler's read and its append.
        void store.append(
          'counter-a',
          [{ type: intruder, data, metadata: { ...metadata, requestId: 'other' } }],
          'any',
        );
      }
      return { type: 'Increment' };
    };
    return { command, made };
  }

  it('appends the decided events after the revision it read, with the metadata, and resolves once the read side holds them', async () => {
    await handler.handle(counterAggregate, 'a', { type: 'Increment' }, metadata);
    const result = await handler.handle(counterAggregate, 'a', { type: 'Increment' }, metadata);

    expect(result).toEqual({
      state: { count: 2, closed: false },
      events: [{ type: 'CounterIncremented', data: { count: 2 } }],
    });
    const stored = await store.readStream('counter-a');
    expect(stored.map((event) => [event.revision, event.type, event.data, event.metadata])).toEqual([
      [0, 'CounterIncremented', { count: 1 }, metadata],
      [1, 'CounterIncremented', { count: 2 }, metadata],
    ]);
    expect(follower.position).toBeGreaterThanOrEqual(stored[1].position);
  });

  it('appends nothing when the decision changes nothing', async () => {
    const result = await handler.handle(counterAggregate, 'a', { type: 'Nothing' }, metadata);
    expect(result).toEqual({ state: { count: 0, closed: false }, events: [] });
    expect(await store.readStream('counter-a')).toEqual([]);
  });

  it("passes the decider's refusal on, appending nothing", async () => {
    await handler.handle(counterAggregate, 'a', { type: 'Close' }, metadata);
    await expect(
      handler.handle(counterAggregate, 'a', { type: 'Increment' }, metadata, { retry: RETRY_ON_CONFLICT }),
    ).rejects.toThrow(new DomainError('invalid_argument', 'the counter is closed'));
    expect(await store.readStream('counter-a')).toHaveLength(1);
  });

  it('runs once by default: a lost race is the caller’s WrongExpectedRevisionError, and only the winner’s event is stored', async () => {
    const { command, made } = racedBy('CounterIncremented');
    await expect(handler.handle(counterAggregate, 'a', command, metadata)).rejects.toBeInstanceOf(
      WrongExpectedRevisionError,
    );
    expect(made.count).toBe(1);
    expect((await store.readStream('counter-a')).map((event) => event.metadata.requestId)).toEqual(['other']);
  });

  it('with a retry policy, decides again on what the winner wrote', async () => {
    const { command, made } = racedBy('CounterIncremented', 2);
    const result = await handler.handle(counterAggregate, 'a', command, metadata, {
      retry: RETRY_ON_CONFLICT,
    });

    expect(made.count).toBe(3);
    expect(result.events).toEqual([{ type: 'CounterIncremented', data: { count: 103 } }]);
    expect((await store.readStream('counter-a')).map((event) => event.data.count)).toEqual([101, 102, 103]);
    expect(pauses).toHaveLength(2);
  });

  it('gives up after the last attempt with the WrongExpectedRevisionError, pausing a growing, bounded time between attempts', async () => {
    const retry: ConflictRetry = { attempts: 4, minDelayMs: 10, maxDelayMs: 30 };
    const { command, made } = racedBy('CounterIncremented');
    await expect(handler.handle(counterAggregate, 'a', command, metadata, { retry })).rejects.toBeInstanceOf(
      WrongExpectedRevisionError,
    );
    expect(made.count).toBe(4);
    expect(pauses).toHaveLength(3);
    [
      [5, 10],
      [10, 20],
      [15, 30],
    ].forEach(([low, high], index) => {
      expect(pauses[index]).toBeGreaterThanOrEqual(low);
      expect(pauses[index]).toBeLessThanOrEqual(high);
    });
    expect(await store.readStream('counter-a')).toHaveLength(4);
  });

  it('does not retry a refusal met after re-reading: the winner closed the counter', async () => {
    const { command, made } = racedBy('CounterClosed', 1);
    await expect(
      handler.handle(counterAggregate, 'a', command, metadata, { retry: RETRY_ON_CONFLICT }),
    ).rejects.toThrow('the counter is closed');
    // The first attempt lost the race, the second read the close and was refused: no third.
    expect(made.count).toBe(2);
    expect(pauses).toHaveLength(1);
    expect((await store.readStream('counter-a')).map((event) => event.type)).toEqual(['CounterClosed']);
  });

  it('makes a command from state only once the read side holds the stream as stored, even written by another process', async () => {
    const otherProcess = new SqliteEventStore(join(directory, 'events.db'));
    try {
      const written = await otherProcess.append(
        'counter-a',
        [{ type: 'CounterIncremented', data: { count: 7 }, metadata }],
        'no_stream',
      );
      const seen: { state: CounterState; followed: bigint }[] = [];
      await handler.handle(
        counterAggregate,
        'a',
        (state) => {
          seen.push({ state, followed: follower.position });
          return { type: 'Increment' };
        },
        metadata,
      );
      expect(seen).toEqual([{ state: { count: 7, closed: false }, followed: expect.any(BigInt) }]);
      expect(seen[0].followed).toBeGreaterThanOrEqual(written.position);
    } finally {
      await otherProcess.close();
    }
  });

  it('catches the read side up to what another process wrote to a stream', async () => {
    const otherProcess = new SqliteEventStore(join(directory, 'events.db'));
    try {
      const written = await otherProcess.append(
        'counter-b',
        [{ type: 'CounterIncremented', data: { count: 1 }, metadata }],
        'no_stream',
      );
      await handler.catchUp(counterAggregate, 'b');
      expect(follower.position).toBeGreaterThanOrEqual(written.position);
      await handler.catchUp(counterAggregate, 'never-written');
    } finally {
      await otherProcess.close();
    }
  });

  it('reports a store that cannot be read as EventStoreUnavailableError', async () => {
    await follower.stop();
    await store.close();
    await expect(
      handler.handle(counterAggregate, 'a', { type: 'Increment' }, metadata),
    ).rejects.toBeInstanceOf(EventStoreUnavailableError);
    // Closed twice by afterEach: reopen so it has something to close.
    store = new SqliteEventStore(join(directory, 'events.db'));
    follower = new StoreFollower(store);
  });
});

describe('conflictRetryDelayMs', () => {
  it('draws half to all of a step that doubles from the minimum up to the maximum', () => {
    const retry = { attempts: 10, minDelayMs: 5, maxDelayMs: 200 };
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => conflictRetryDelayMs(retry, attempt, 0))).toEqual([
      3, 5, 10, 20, 40, 80, 100,
    ]);
    expect([1, 2, 3, 4, 5, 6, 7].map((attempt) => conflictRetryDelayMs(retry, attempt, 0.999999))).toEqual([
      5, 10, 20, 40, 80, 160, 200,
    ]);
  });

  it('never pauses when the policy runs once', () => {
    expect(conflictRetryDelayMs(RUN_ONCE, 1, 0.5)).toBe(0);
  });
});
