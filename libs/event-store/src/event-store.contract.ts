import { randomUUID } from 'node:crypto';
import {
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from './event-store.port';

/**
 * The one behaviour every `EventStore` adapter must show. Each adapter's `*.contract-spec.ts` calls
 * this with a factory for a fresh store.
 *
 * The suite never assumes the store is empty: stream names carry a per-run prefix and subscription
 * assertions only look at this run's streams, so it can run against a shared KurrentDB server.
 */
export function describeEventStoreContract(
  name: string,
  createStore: () => Promise<EventStore>,
  cleanup?: () => Promise<void> | void,
): void {
  describe(`EventStore contract: ${name}`, () => {
    const runPrefix = `contract-${randomUUID().slice(0, 8)}`;
    let streamCounter = 0;
    const newStreamName = (label: string) => `${runPrefix}-${label}-${++streamCounter}`;

    let store: EventStore;
    const openSubscriptions: Subscription[] = [];

    const subscribe = (
      handler: (event: RecordedEvent) => void | Promise<void>,
      options?: SubscribeToAllOptions,
    ): Subscription => {
      const subscription = store.subscribeToAll(handler, options);
      openSubscriptions.push(subscription);
      return subscription;
    };

    beforeEach(async () => {
      store = await createStore();
    });

    afterEach(async () => {
      await Promise.all(openSubscriptions.splice(0).map((subscription) => subscription.stop()));
      await store.close();
    });

    if (cleanup) afterAll(cleanup);

    describe('append and readStream', () => {
      it('reads back appended events with their data, metadata, revisions and positions', async () => {
        const stream = newStreamName('round-trip');
        const created = newEvent('SourceCreated', {
          sourceId: 's1',
          nested: { list: [1, 'two', null], flag: true },
        });
        const renamed = newEvent('SourceRenamed', { name: 'Web – ünïcode ✓' });

        const result = await store.append(stream, [created, renamed], 'no_stream');

        const events = await store.readStream(stream);
        expect(events).toEqual([
          {
            streamName: stream,
            type: created.type,
            data: created.data,
            metadata: created.metadata,
            revision: 0,
            position: expect.any(BigInt),
          },
          {
            streamName: stream,
            type: renamed.type,
            data: renamed.data,
            metadata: renamed.metadata,
            revision: 1,
            position: expect.any(BigInt),
          },
        ]);
        expect(result).toEqual({ revision: 1, position: events[1].position });
        expect(events[1].position).toBeGreaterThan(events[0].position);
      });

      it('continues revisions across appends and reports the last revision and position', async () => {
        const stream = newStreamName('revisions');
        const first = await store.append(stream, [newEvent('A')], 'no_stream');
        expect(first.revision).toBe(0);

        const second = await store.append(stream, [newEvent('B'), newEvent('C')], 0);
        expect(second.revision).toBe(2);
        expect(second.position).toBeGreaterThan(first.position);

        const third = await store.append(stream, [newEvent('D')], 2);
        expect(third.revision).toBe(3);

        const events = await store.readStream(stream);
        expect(events.map((event) => [event.type, event.revision])).toEqual([
          ['A', 0],
          ['B', 1],
          ['C', 2],
          ['D', 3],
        ]);
        expect(events[0].position).toBe(first.position);
        expect(events[2].position).toBe(second.position);
        expect(events[3].position).toBe(third.position);
      });

      it("appends with 'any' whether or not the stream exists", async () => {
        const stream = newStreamName('any');
        await expect(store.append(stream, [newEvent('A')], 'any')).resolves.toMatchObject({ revision: 0 });
        await expect(store.append(stream, [newEvent('B')], 'any')).resolves.toMatchObject({ revision: 1 });
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('returns [] for a stream that does not exist', async () => {
        await expect(store.readStream(newStreamName('never-written'))).resolves.toEqual([]);
      });

      it('keeps streams apart', async () => {
        const first = newStreamName('apart');
        const second = newStreamName('apart');
        await store.append(first, [newEvent('OnlyInFirst')], 'no_stream');
        await store.append(second, [newEvent('OnlyInSecond'), newEvent('AlsoInSecond')], 'no_stream');
        expect((await store.readStream(first)).map((event) => event.type)).toEqual(['OnlyInFirst']);
        expect((await store.readStream(second)).map((event) => [event.type, event.revision])).toEqual([
          ['OnlyInSecond', 0],
          ['AlsoInSecond', 1],
        ]);
      });

      it('gives positions that strictly increase in write order across streams', async () => {
        const streams = [newStreamName('order'), newStreamName('order'), newStreamName('order')];
        const appendResults = [];
        appendResults.push(await store.append(streams[0], [newEvent('A1')], 'no_stream'));
        appendResults.push(await store.append(streams[1], [newEvent('B1'), newEvent('B2')], 'no_stream'));
        appendResults.push(await store.append(streams[0], [newEvent('A2')], 0));
        appendResults.push(
          await store.append(streams[2], [newEvent('C1'), newEvent('C2'), newEvent('C3')], 'no_stream'),
        );
        appendResults.push(await store.append(streams[1], [newEvent('B3')], 1));

        for (let index = 1; index < appendResults.length; index++) {
          expect(appendResults[index].position).toBeGreaterThan(appendResults[index - 1].position);
        }
        const all = (await Promise.all(streams.map((stream) => store.readStream(stream)))).flat();
        const typesByPosition = [...all]
          .sort((a, b) => compareBigInt(a.position, b.position))
          .map((event) => event.type);
        expect(typesByPosition).toEqual(['A1', 'B1', 'B2', 'A2', 'C1', 'C2', 'C3', 'B3']);
        expect(new Set(all.map((event) => event.position)).size).toBe(all.length);
      });
    });

    describe('expected revision', () => {
      it("rejects 'no_stream' when the stream exists, and writes nothing", async () => {
        const stream = newStreamName('no-stream-conflict');
        await store.append(stream, [newEvent('Created')], 'no_stream');

        const attempt = store.append(stream, [newEvent('CreatedAgain')], 'no_stream');

        await expect(attempt).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(attempt).rejects.toMatchObject({ streamName: stream, expected: 'no_stream', actual: 0 });
        expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['Created']);
      });

      it('rejects a stale revision, and writes nothing', async () => {
        const stream = newStreamName('stale');
        await store.append(stream, [newEvent('A'), newEvent('B')], 'no_stream');

        const stale = store.append(stream, [newEvent('BasedOnOldState')], 0);

        await expect(stale).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(stale).rejects.toMatchObject({ streamName: stream, expected: 0, actual: 1 });
        expect(await store.readStream(stream)).toHaveLength(2);
      });

      it('rejects a revision ahead of the stream', async () => {
        const stream = newStreamName('ahead');
        await store.append(stream, [newEvent('A')], 'no_stream');
        await expect(store.append(stream, [newEvent('B')], 5)).rejects.toMatchObject({
          name: 'WrongExpectedRevisionError',
          expected: 5,
          actual: 0,
        });
        expect(await store.readStream(stream)).toHaveLength(1);
      });

      it('rejects a numeric revision for a stream that does not exist', async () => {
        const stream = newStreamName('missing');
        await expect(store.append(stream, [newEvent('A')], 0)).rejects.toMatchObject({
          name: 'WrongExpectedRevisionError',
          expected: 0,
          actual: 'no_stream',
        });
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('lets exactly one of several concurrent appends on the same revision win', async () => {
        const stream = newStreamName('race');
        await store.append(stream, [newEvent('Created')], 'no_stream');

        const contenders = Array.from({ length: 6 }, (_, index) =>
          store.append(stream, [newEvent('Renamed', { contender: index })], 0),
        );
        const outcomes = await Promise.allSettled(contenders);

        const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
        const losers = outcomes.filter(
          (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
        );
        expect(winners).toHaveLength(1);
        expect(losers).toHaveLength(5);
        for (const loser of losers) expect(loser.reason).toBeInstanceOf(WrongExpectedRevisionError);

        const events = await store.readStream(stream);
        expect(events).toHaveLength(2);
        const winnerIndex = outcomes.findIndex((outcome) => outcome.status === 'fulfilled');
        expect(events[1].data).toEqual({ contender: winnerIndex });
      });
    });

    describe('atomicity and bad input', () => {
      it('writes none of several events when the revision check fails', async () => {
        const stream = newStreamName('atomic-revision');
        await store.append(stream, [newEvent('A')], 'no_stream');

        await expect(
          store.append(stream, [newEvent('X'), newEvent('Y'), newEvent('Z')], 'no_stream'),
        ).rejects.toBeInstanceOf(WrongExpectedRevisionError);

        expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['A']);
      });

      it('writes none of several events when one of them cannot be stored, and uses up no revision', async () => {
        const stream = newStreamName('atomic-payload');
        await store.append(stream, [newEvent('A')], 'no_stream');
        const unserializable = newEvent('Broken', { amount: 10n as unknown });

        await expect(
          store.append(stream, [newEvent('X'), newEvent('Y'), unserializable], 0),
        ).rejects.toThrow();

        expect((await store.readStream(stream)).map((event) => event.type)).toEqual(['A']);
        await expect(store.append(stream, [newEvent('B')], 0)).resolves.toMatchObject({ revision: 1 });
      });

      it('rejects an empty append without creating the stream', async () => {
        const stream = newStreamName('empty');
        const attempt = store.append(stream, [], 'no_stream');
        await expect(attempt).rejects.toThrow(/at least one event/);
        await expect(attempt).rejects.not.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await store.readStream(stream)).toEqual([]);
      });

      it('rejects an expected revision that is not a non-negative integer', async () => {
        const stream = newStreamName('bad-revision');
        await expect(store.append(stream, [newEvent('A')], -1)).rejects.toThrow(RangeError);
        await expect(store.append(stream, [newEvent('A')], 0.5)).rejects.toThrow(RangeError);
        expect(await store.readStream(stream)).toEqual([]);
      });
    });

    describe('readAllBackwards', () => {
      /** Five events over two streams, then a fence whose position bounds the reads. */
      async function writeFive(): Promise<{ written: RecordedEvent[]; fence: bigint }> {
        const [first, second] = [newStreamName('backwards'), newStreamName('backwards')];
        await store.append(first, [newEvent('One', { n: 1 }), newEvent('Two', { n: 2 })], 'no_stream');
        await store.append(second, [newEvent('Three', { n: 3 })], 'no_stream');
        await store.append(first, [newEvent('Four', { n: 4 })], 1);
        await store.append(second, [newEvent('Five', { n: 5, nested: { deep: [1, { x: null }] } })], 0);
        const fence = await store.append(newStreamName('fence'), [newEvent('Fence')], 'no_stream');
        const written = [...(await store.readStream(first)), ...(await store.readStream(second))].sort(
          (a, b) => (a.position < b.position ? -1 : 1),
        );
        return { written, fence: fence.position };
      }

      it('reads every stream newest first, page by page, with the events as readStream gives them', async () => {
        const { written, fence } = await writeFive();
        const newestFirst = [...written].reverse();

        const first = await store.readAllBackwards({ before: fence, maxCount: 2 });
        expect(first).toEqual(newestFirst.slice(0, 2));
        const second = await store.readAllBackwards({ before: first[1].position, maxCount: 2 });
        expect(second).toEqual(newestFirst.slice(2, 4));
        const third = await store.readAllBackwards({ before: second[1].position, maxCount: 1 });
        expect(third).toEqual(newestFirst.slice(4, 5));
        expect(third[0]).toMatchObject({ type: 'One', data: { n: 1 }, revision: 0 });
      });

      it('starts at the newest event without a bound, and never returns the event at the bound', async () => {
        const { written, fence } = await writeFive();
        const [newest] = await store.readAllBackwards({ maxCount: 1 });
        expect(newest).toMatchObject({ type: 'Fence', position: fence });
        const older = await store.readAllBackwards({ before: written[2].position, maxCount: 2 });
        expect(older).toEqual([written[1], written[0]]);
        const all = await store.readAllBackwards({ before: written[0].position, maxCount: 50 });
        expect(all.every((event) => event.position < written[0].position)).toBe(true);
      });

      it('keeps a cursor stable while new events are appended', async () => {
        const { written, fence } = await writeFive();
        const first = await store.readAllBackwards({ before: fence, maxCount: 2 });
        await store.append(newStreamName('later'), [newEvent('Later')], 'no_stream');
        const second = await store.readAllBackwards({ before: first[1].position, maxCount: 3 });
        expect(second.map((event) => event.type)).toEqual(['Three', 'Two', 'One']);
        expect(second).toEqual([written[2], written[1], written[0]]);
      });

      it('returns fewer events than asked only when there are no older ones', async () => {
        const { written } = await writeFive();
        const page = await store.readAllBackwards({ before: written[1].position, maxCount: 1_000 });
        expect(page[0]).toEqual(written[0]);
        expect(page.length).toBeLessThan(1_000);
      });

      it('refuses a page size that is not a positive integer', async () => {
        for (const maxCount of [0, -1, 1.5, Number.NaN]) {
          await expect(store.readAllBackwards({ maxCount })).rejects.toThrow(
            /maxCount must be a positive integer/,
          );
        }
      });
    });

    describe('subscribeToAll', () => {
      it('delivers stored events, then events appended during and after catch-up, each exactly once and in order', async () => {
        const streams = [newStreamName('sub'), newStreamName('sub'), newStreamName('sub')];
        const ours = new Set(streams);
        const revisions = new Map<string, number>();
        const appendTo = async (stream: string, count: number, label: string) => {
          const expected = revisions.get(stream) ?? 'no_stream';
          const events = Array.from({ length: count }, (_, index) => newEvent(label, { index }));
          const result = await store.append(stream, events, expected);
          revisions.set(stream, result.revision);
          return result;
        };

        const marker = await appendTo(streams[0], 1, 'Marker');
        // More than one SQLite page of history, spread over several streams.
        for (let round = 0; round < 5; round++) {
          for (const stream of streams) await appendTo(stream, 20, 'Stored');
        }
        const storedBeforeSubscribing = 5 * 3 * 20;

        const received: RecordedEvent[] = [];
        let receivedWhenCaughtUp = -1;
        let caughtUpCalls = 0;
        // Appends made while the subscription runs are chained so each stream's expected revision stays right.
        let appendChain: Promise<unknown> = Promise.resolve();
        const queueAppend = (stream: string, count: number, label: string) => {
          appendChain = appendChain.then(() => appendTo(stream, count, label));
        };

        subscribe(
          async (event) => {
            if (!ours.has(event.streamName)) return;
            received.push(event);
            if (received.length === 10) {
              for (const stream of streams) queueAppend(stream, 3, 'DuringCatchUp');
            }
            // Give appends a chance to interleave with delivery.
            await new Promise((resolve) => setImmediate(resolve));
          },
          {
            after: marker.position,
            onCaughtUp: () => {
              caughtUpCalls += 1;
              receivedWhenCaughtUp = received.length;
            },
          },
        );
        queueAppend(streams[1], 2, 'RightAfterSubscribing');

        await waitUntil(() => caughtUpCalls > 0, 'onCaughtUp');
        await appendChain;
        for (const stream of streams) await appendTo(stream, 2, 'AfterCatchUp');

        const expected = (await Promise.all(streams.map((stream) => store.readStream(stream))))
          .flat()
          .filter((event) => event.position > marker.position)
          .sort((a, b) => compareBigInt(a.position, b.position));
        expect(expected).toHaveLength(storedBeforeSubscribing + 3 * 3 + 2 + 3 * 2);

        await waitUntil(() => received.length >= expected.length, `${expected.length} events`);
        await settle();

        expect(received).toEqual(expected);
        expect(caughtUpCalls).toBe(1);
        // Everything stored before subscribing came before onCaughtUp (a server may report it a little late).
        expect(receivedWhenCaughtUp).toBeGreaterThanOrEqual(storedBeforeSubscribing);
      });

      it('starts from the very first event when no position is given', async () => {
        const stream = newStreamName('from-start');
        await store.append(stream, [newEvent('First'), newEvent('Second')], 'no_stream');

        const positions: bigint[] = [];
        const ours: RecordedEvent[] = [];
        let caughtUp = false;
        subscribe(
          (event) => {
            positions.push(event.position);
            if (event.streamName === stream) ours.push(event);
          },
          { onCaughtUp: () => (caughtUp = true) },
        );

        await waitUntil(() => caughtUp, 'onCaughtUp');
        expect(ours.map((event) => event.type)).toEqual(['First', 'Second']);
        for (let index = 1; index < positions.length; index++) {
          expect(positions[index]).toBeGreaterThan(positions[index - 1]);
        }
      });

      it("delivers only events after the 'after' position", async () => {
        const stream = newStreamName('after');
        const first = await store.append(stream, [newEvent('One')], 'no_stream');
        await store.append(stream, [newEvent('Two'), newEvent('Three')], 0);

        const received: string[] = [];
        let caughtUp = false;
        subscribe((event) => void (event.streamName === stream && received.push(event.type)), {
          after: first.position,
          onCaughtUp: () => (caughtUp = true),
        });

        await waitUntil(() => caughtUp, 'onCaughtUp');
        await waitUntil(() => received.length >= 2, 'two events');
        await settle();
        expect(received).toEqual(['Two', 'Three']);
      });

      it('reports caught-up at once when nothing is stored after the position, then delivers live events', async () => {
        const stream = newStreamName('after-head');
        const head = await store.append(stream, [newEvent('AlreadyStored')], 'no_stream');

        const received: string[] = [];
        let caughtUp = false;
        subscribe((event) => void (event.streamName === stream && received.push(event.type)), {
          after: head.position,
          onCaughtUp: () => (caughtUp = true),
        });
        await waitUntil(() => caughtUp, 'onCaughtUp');
        expect(received).toEqual([]);

        await store.append(stream, [newEvent('Live')], 0);
        await waitUntil(() => received.length > 0, 'the live event');
        await settle();
        expect(received).toEqual(['Live']);
      });

      it('awaits the handler: never runs two handler calls at once', async () => {
        const stream = newStreamName('one-at-a-time');
        let running = 0;
        let maxRunning = 0;
        let handled = 0;
        const before = await store.append(stream, [newEvent('Seed')], 'no_stream');
        subscribe(
          async (event) => {
            if (event.streamName !== stream) return;
            running += 1;
            maxRunning = Math.max(maxRunning, running);
            await new Promise((resolve) => setTimeout(resolve, 5));
            running -= 1;
            handled += 1;
          },
          { after: before.position },
        );
        await store.append(
          stream,
          Array.from({ length: 10 }, () => newEvent('Tick')),
          0,
        );
        await waitUntil(() => handled === 10, '10 handled events');
        expect(maxRunning).toBe(1);
      });

      it('stops delivering after stop()', async () => {
        const stream = newStreamName('stop');
        const received: string[] = [];
        let caughtUp = false;
        const head = await store.append(stream, [newEvent('Before')], 'no_stream');
        const subscription = subscribe(
          (event) => void (event.streamName === stream && received.push(event.type)),
          {
            after: head.position,
            onCaughtUp: () => (caughtUp = true),
          },
        );
        await waitUntil(() => caughtUp, 'onCaughtUp');
        await store.append(stream, [newEvent('WhileSubscribed')], 0);
        await waitUntil(() => received.length === 1, 'the first live event');

        await subscription.stop();
        await store.append(stream, [newEvent('AfterStop')], 1);
        await settle(600);

        expect(received).toEqual(['WhileSubscribed']);
      });

      it('resolves stop() only once the running handler call has returned', async () => {
        const stream = newStreamName('stop-waits');
        let releaseHandler!: () => void;
        const handlerMayReturn = new Promise<void>((resolve) => (releaseHandler = resolve));
        let handlerStarted = false;
        let handlerReturned = false;
        const head = await store.append(stream, [newEvent('Before')], 'no_stream');
        const subscription = subscribe(
          async (event) => {
            if (event.streamName !== stream) return;
            handlerStarted = true;
            await handlerMayReturn;
            handlerReturned = true;
          },
          { after: head.position },
        );
        await store.append(stream, [newEvent('Slow'), newEvent('NeverDelivered')], 0);
        await waitUntil(() => handlerStarted, 'the handler to start');

        let stopResolved = false;
        const stopping = subscription.stop().then(() => (stopResolved = true));
        await settle(100);
        expect(stopResolved).toBe(false);

        releaseHandler();
        await stopping;
        expect(handlerReturned).toBe(true);
      });

      it('ends the subscription and reports through onError when the handler throws', async () => {
        const stream = newStreamName('handler-fails');
        const failure = new Error('projection broke');
        const delivered: string[] = [];
        const errors: Error[] = [];
        const head = await store.append(stream, [newEvent('Before')], 'no_stream');
        subscribe(
          (event) => {
            if (event.streamName !== stream) return;
            delivered.push(event.type);
            if (event.type === 'Poison') throw failure;
          },
          { after: head.position, onError: (error) => errors.push(error) },
        );

        await store.append(stream, [newEvent('Fine'), newEvent('Poison'), newEvent('NotDelivered')], 0);
        await waitUntil(() => errors.length > 0, 'onError');
        await store.append(stream, [newEvent('AlsoNotDelivered')], 3);
        await settle(600);

        expect(errors).toEqual([failure]);
        expect(delivered).toEqual(['Fine', 'Poison']);
      });
    });

    describe('ping and close', () => {
      it('answers ping while open', async () => {
        await expect(store.ping()).resolves.toBe(true);
      });

      it('answers ping with false once closed, and close() can be called twice', async () => {
        await store.close();
        await expect(store.ping()).resolves.toBe(false);
        await expect(store.close()).resolves.toBeUndefined();
      });

      it('stops its subscriptions on close', async () => {
        const stream = newStreamName('close-stops');
        const received: string[] = [];
        let caughtUp = false;
        const head = await store.append(stream, [newEvent('Before')], 'no_stream');
        subscribe((event) => void (event.streamName === stream && received.push(event.type)), {
          after: head.position,
          onCaughtUp: () => (caughtUp = true),
        });
        await waitUntil(() => caughtUp, 'onCaughtUp');

        await store.close();
        await settle(300);
        expect(received).toEqual([]);
        await expect(store.append(stream, [newEvent('AfterClose')], 0)).rejects.toThrow();
      });
    });
  });
}

function newEvent(type: string, data: Record<string, unknown> = {}): NewEvent {
  return {
    type,
    data,
    metadata: { actor: 'user:contract@example.com', requestId: randomUUID(), time: new Date().toISOString() },
  };
}

function compareBigInt(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Polls until `condition` holds; fails the test with `what` when it does not within the time. */
async function waitUntil(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Leaves time for anything that should NOT happen (a duplicate, a late delivery) to show up. */
function settle(ms = 400): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
