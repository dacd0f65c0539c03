import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  EventLogUnavailableError,
  MAX_SEEN_ONCE_TTL_MS,
  UNSETTLED_ATTEMPT_OUTCOME,
  SeenOnceCapacityError,
  type ConsumeOptions,
  type ConsumerSubscription,
  type Delivery,
  type EventLog,
  type EventLogSettings,
  type MessageToPublish,
  type NewDeadLetter,
  type TailedMessage,
  type TailHandler,
  type TailSubscription,
} from './event-log.port';

/**
 * The one contract every `EventLog` adapter must pass. Adapter specs call `describeEventLogContract`
 * with a factory that hands out fresh, isolated storage.
 */

/** One isolated storage; `open` may be called again to get a new adapter instance on the same data. */
export interface EventLogContractStore {
  open(): Promise<EventLog>;
  dispose(): Promise<void>;
}

export interface EventLogContractFactory {
  /** Empty storage configured with these settings. */
  newStore(settings: EventLogSettings): Promise<EventLogContractStore>;
}

const ROOMY_SETTINGS: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `condition` holds; fails with `description` after `timeoutMs`. */
export async function waitUntil(
  description: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 8000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${description}`);
    await sleep(25);
  }
}

let uniqueCounter = 0;
function unique(prefix: string): string {
  uniqueCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${uniqueCounter}`;
}

function message(sourceId: string, messageId = unique('msg'), workspaceId = 'ws1'): MessageToPublish {
  return {
    workspaceId,
    sourceId,
    messageId,
    payload: { type: 'track', event: 'Order Completed', messageId, properties: { total: 42.5, tags: ['a'] } },
  };
}

interface RecordedDelivery {
  delivery: Delivery;
  receivedAt: number;
}

interface Recorder {
  received: RecordedDelivery[];
  subscription: ConsumerSubscription;
  messageIds(): string[];
}

type OnDelivery = (delivery: Delivery) => void | Promise<void>;
const ackEverything: OnDelivery = (delivery) => delivery.ack();

export function describeEventLogContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`EventLog contract: ${adapterName}`, () => {
    const stores: EventLogContractStore[] = [];
    const openedLogs: EventLog[] = [];
    const subscriptions: ConsumerSubscription[] = [];

    async function newStore(settings: EventLogSettings = ROOMY_SETTINGS): Promise<EventLogContractStore> {
      const store = await getFactory().newStore(settings);
      stores.push(store);
      return store;
    }

    async function open(store: EventLogContractStore): Promise<EventLog> {
      const log = await store.open();
      openedLogs.push(log);
      return log;
    }

    async function openFresh(settings: EventLogSettings = ROOMY_SETTINGS): Promise<EventLog> {
      return open(await newStore(settings));
    }

    async function record(
      log: EventLog,
      consumerName: string,
      options: Partial<ConsumeOptions> = {},
      onDelivery: OnDelivery = ackEverything,
    ): Promise<Recorder> {
      const received: RecordedDelivery[] = [];
      const subscription = await log.consume(
        consumerName,
        { ackWaitMs: 5000, maxInFlight: 100, ...options },
        async (delivery) => {
          received.push({ delivery, receivedAt: Date.now() });
          await onDelivery(delivery);
        },
      );
      subscriptions.push(subscription);
      return { received, subscription, messageIds: () => received.map((entry) => entry.delivery.messageId) };
    }

    afterEach(async () => {
      await Promise.allSettled(subscriptions.splice(0).map((subscription) => subscription.stop()));
      await Promise.allSettled(openedLogs.splice(0).map((log) => log.close()));
      await Promise.allSettled(stores.splice(0).map((store) => store.dispose()));
    });

    describe('publishing', () => {
      it('stores a batch and answers, in input order, one sequence per message', async () => {
        const log = await openFresh();
        const batch = [message('src-a'), message('src-a'), message('src-b')];
        const outcomes = await log.publishBatch(batch);
        expect(outcomes.map((outcome) => outcome.messageId)).toEqual(batch.map((entry) => entry.messageId));
        expect(outcomes.every((outcome) => !outcome.duplicate)).toBe(true);
        expect(outcomes[1].sequence).toBeGreaterThan(outcomes[0].sequence);
        expect(outcomes[2].sequence).toBeGreaterThan(outcomes[1].sequence);
      });

      it('answers [] for an empty batch', async () => {
        const log = await openFresh();
        await expect(log.publishBatch([])).resolves.toEqual([]);
      });

      it('flags a messageId seen before as a duplicate, globally across workspaces and sources, and stores it once', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'everything', { deliverFrom: new Date(0) });
        const [first] = await log.publishBatch([message('src-a', 'shared-id', 'ws1')]);
        const [again] = await log.publishBatch([message('src-b', 'shared-id', 'ws2')]);
        expect(first.duplicate).toBe(false);
        expect(again).toEqual({ messageId: 'shared-id', duplicate: true, sequence: first.sequence });

        const inOneBatch = await log.publishBatch([message('src-a', 'twice'), message('src-a', 'twice')]);
        expect(inOneBatch[0].duplicate).toBe(false);
        expect(inOneBatch[1]).toEqual({
          messageId: 'twice',
          duplicate: true,
          sequence: inOneBatch[0].sequence,
        });

        await waitUntil('both stored messages are delivered', () => consumer.received.length >= 2);
        await sleep(300);
        expect(consumer.messageIds()).toEqual(['shared-id', 'twice']);
        expect(consumer.received[0].delivery.sourceId).toBe('src-a');
      });

      it('stores non-ASCII payloads and messageIds byte for byte', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'unicode', { deliverFrom: new Date(0) });
        const sent = {
          ...message('src-a', 'événement-☃-𝄞'),
          payload: { city: 'São Paulo', note: '東京 🚀' },
        };
        await log.publishBatch([sent, message('src-a')]);
        await waitUntil('both messages are delivered', () => consumer.received.length >= 2);
        expect(consumer.messageIds()[0]).toBe('événement-☃-𝄞');
        expect(consumer.received[0].delivery.payload).toEqual(sent.payload);
      });

      it('hands each delivery the bytes its payload was stored as: JSON.stringify of the payload, in UTF-8', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'stored-bytes', { deliverFrom: new Date(0) });
        const payloads = [
          {
            city: 'São Paulo',
            note: '東京 🚀',
            nested: { list: [1, 2.5, null, true], '2': 'index-like key' },
          },
          { quote: 'say "hi"\n\u0000', emptyObject: {}, emptyList: [] },
        ];
        await log.publishBatch(payloads.map((payload) => ({ ...message('src-a'), payload })));
        await waitUntil('both messages are delivered', () => consumer.received.length >= 2);
        for (const [index, { delivery }] of consumer.received.entries()) {
          expect(delivery.storedPayload).toBeInstanceOf(Uint8Array);
          expect(Buffer.from(delivery.storedPayload).toString('utf8')).toBe(JSON.stringify(payloads[index]));
          expect(Buffer.from(delivery.storedPayload).toString('utf8')).toBe(JSON.stringify(delivery.payload));
        }
      });

      it('keeps many publishes in flight at once and gives each message its own sequence', async () => {
        const log = await openFresh();
        const batches = Array.from({ length: 20 }, () => Array.from({ length: 25 }, () => message('src-a')));
        const results = await Promise.all(batches.map((batch) => log.publishBatch(batch)));
        const outcomes = results.flat();
        expect(outcomes).toHaveLength(500);
        expect(outcomes.some((outcome) => outcome.duplicate)).toBe(false);
        expect(new Set(outcomes.map((outcome) => outcome.sequence)).size).toBe(500);
        results.forEach((outcomesOfBatch, index) =>
          expect(outcomesOfBatch.map((outcome) => outcome.messageId)).toEqual(
            batches[index].map((entry) => entry.messageId),
          ),
        );
      });

      it('forgets a messageId once the dedupe window has passed', async () => {
        const log = await openFresh({ dedupeWindowMs: 500, retentionMs: 60_000 });
        const [first] = await log.publishBatch([message('src-a', 'short-lived')]);
        const [inWindow] = await log.publishBatch([message('src-a', 'short-lived')]);
        expect(inWindow).toEqual({ messageId: 'short-lived', duplicate: true, sequence: first.sequence });

        await sleep(500);
        let afterWindow = inWindow;
        await waitUntil('the id is accepted again', async () => {
          [afterWindow] = await log.publishBatch([message('src-a', 'short-lived')]);
          return !afterWindow.duplicate;
        });
        expect(afterWindow.sequence).toBeGreaterThan(first.sequence);
      });

      it('refuses a batch with an invalid message before storing any of it', async () => {
        const log = await openFresh();
        const valid = message('src-a');
        await expect(log.publishBatch([valid, message('src.with.dots')])).rejects.toThrow(TypeError);
        await expect(log.publishBatch([{ ...message('src-a'), workspaceId: 'ws>' }])).rejects.toThrow(
          TypeError,
        );
        await expect(log.publishBatch([{ ...message('src-a'), messageId: '' }])).rejects.toThrow(TypeError);
        for (const messageId of ['line\nbreak', 'carriage\rreturn']) {
          await expect(log.publishBatch([valid, { ...message('src-a'), messageId }])).rejects.toThrow(
            TypeError,
          );
        }
        await expect(
          log.publishBatch([{ ...message('src-a'), payload: [] as unknown as Record<string, unknown> }]),
        ).rejects.toThrow(TypeError);
        const [retried] = await log.publishBatch([valid]);
        expect(retried.duplicate).toBe(false);
      });

      it('fails with EventLogUnavailableError once closed', async () => {
        const log = await openFresh();
        await log.close();
        await expect(log.publishBatch([message('src-a')])).rejects.toThrow(EventLogUnavailableError);
        expect(await log.ping()).toBe(false);
      });
    });

    describe('durable consumers', () => {
      it('delivers every message in sequence order with its fields', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'destination-1');
        const before = Date.now();
        const batch = Array.from({ length: 5 }, () => message('src-a'));
        const outcomes = await log.publishBatch(batch);
        const after = Date.now();

        await waitUntil('five deliveries', () => consumer.received.length >= 5);
        const deliveries = consumer.received.map((entry) => entry.delivery);
        expect(deliveries.map((delivery) => delivery.sequence)).toEqual(
          outcomes.map((outcome) => outcome.sequence),
        );
        deliveries.forEach((delivery, index) => {
          expect(delivery.messageId).toBe(batch[index].messageId);
          expect(delivery.workspaceId).toBe('ws1');
          expect(delivery.sourceId).toBe('src-a');
          expect(delivery.payload).toEqual(batch[index].payload);
          expect(delivery.deliveryCount).toBe(1);
          expect(delivery.publishedAt.getTime()).toBeGreaterThanOrEqual(before - 5);
          expect(delivery.publishedAt.getTime()).toBeLessThanOrEqual(after + 5);
        });
      });

      it('never redelivers an acked message', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'acking', { ackWaitMs: 300 });
        await log.publishBatch([message('src-a'), message('src-a')]);
        await waitUntil('two deliveries', () => consumer.received.length >= 2);
        await sleep(1200);
        expect(consumer.received).toHaveLength(2);
        await waitUntil(
          'acks are recorded',
          async () => (await log.consumerLag('acking')).unacknowledged === 0,
        );
        expect(await log.consumerLag('acking')).toEqual({ undelivered: 0, unacknowledged: 0 });
      });

      it('redelivers a message not acked within the ack wait, with deliveryCount incremented', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'forgetful', { ackWaitMs: 400 }, async (delivery) => {
          if (delivery.deliveryCount >= 2) await delivery.ack();
        });
        const [published] = await log.publishBatch([message('src-a')]);
        await waitUntil('a redelivery', () => consumer.received.length >= 2);
        const [first, second] = consumer.received;
        expect(first.delivery.sequence).toBe(published.sequence);
        expect(second.delivery.sequence).toBe(published.sequence);
        expect([first.delivery.deliveryCount, second.delivery.deliveryCount]).toEqual([1, 2]);
        expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(350);
        await sleep(1000);
        expect(consumer.received).toHaveLength(2);
      });

      it('records acks sent without confirmation too (confirmAcks: false)', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'unconfirmed', { ackWaitMs: 400, confirmAcks: false });
        await log.publishBatch([message('src-a'), message('src-a'), message('src-a')]);
        await waitUntil('three deliveries', () => consumer.received.length >= 3);
        await waitUntil(
          'the acks are recorded',
          async () => (await log.consumerLag('unconfirmed')).unacknowledged === 0,
        );
        await sleep(1000);
        expect(consumer.received).toHaveLength(3);
      });

      it('does not redeliver a message whose handler is still working past the ack wait', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'slow-handler', { ackWaitMs: 600 }, async (delivery) => {
          await sleep(2_000);
          await delivery.ack();
        });
        await log.publishBatch([message('src-a')]);
        await waitUntil('the delivery', () => consumer.received.length >= 1);
        await sleep(3_000);
        expect(consumer.received).toHaveLength(1);
        await waitUntil('the ack', async () => (await log.consumerLag('slow-handler')).unacknowledged === 0);
      });

      it('redelivers a nak-ed message after the requested delay, not before', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'delaying', { ackWaitMs: 10_000 }, async (delivery) => {
          if (delivery.deliveryCount === 1) await delivery.nak(800);
          else await delivery.ack();
        });
        await log.publishBatch([message('src-a')]);
        await waitUntil('the delayed redelivery', () => consumer.received.length >= 2);
        const [first, second] = consumer.received;
        expect(second.delivery.deliveryCount).toBe(2);
        const gap = second.receivedAt - first.receivedAt;
        expect(gap).toBeGreaterThanOrEqual(750);
        expect(gap).toBeLessThan(5000);
      });

      it('redelivers a message nak-ed without delay promptly', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'retrying', { ackWaitMs: 10_000 }, async (delivery) => {
          if (delivery.deliveryCount < 3) await delivery.nak();
          else await delivery.ack();
        });
        await log.publishBatch([message('src-a')]);
        await waitUntil('two immediate redeliveries', () => consumer.received.length >= 3, 4000);
        expect(consumer.received.map((entry) => entry.delivery.deliveryCount)).toEqual([1, 2, 3]);
      });

      it('never redelivers a terminated message', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'terminating', { ackWaitMs: 300 }, (delivery) =>
          delivery.term('bad payload'),
        );
        await log.publishBatch([message('src-a')]);
        await waitUntil('one delivery', () => consumer.received.length >= 1);
        await sleep(1200);
        expect(consumer.received).toHaveLength(1);
        expect(await log.consumerLag('terminating')).toEqual({ undelivered: 0, unacknowledged: 0 });
      });

      it('reports a handler failure and redelivers the message after the ack wait', async () => {
        const log = await openFresh();
        const failures: unknown[] = [];
        const consumer = await record(
          log,
          'throwing',
          { ackWaitMs: 400, onHandlerError: (error) => failures.push(error) },
          async (delivery) => {
            if (delivery.deliveryCount === 1) throw new Error('destination exploded');
            await delivery.ack();
          },
        );
        await log.publishBatch([message('src-a')]);
        await waitUntil('the redelivery after the failure', () => consumer.received.length >= 2);
        expect(failures).toHaveLength(1);
        expect((failures[0] as Error).message).toBe('destination exploded');
        expect(consumer.received[1].delivery.deliveryCount).toBe(2);
      });

      it('keeps at most maxInFlight deliveries outstanding', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'narrow', { maxInFlight: 2, ackWaitMs: 10_000 }, () => undefined);
        await log.publishBatch(Array.from({ length: 5 }, () => message('src-a')));
        await waitUntil('two deliveries', () => consumer.received.length >= 2);
        await sleep(500);
        expect(consumer.received).toHaveLength(2);
        expect(await log.consumerLag('narrow')).toEqual({ undelivered: 3, unacknowledged: 2 });

        await consumer.received[0].delivery.ack();
        await waitUntil('a third delivery after one ack', () => consumer.received.length >= 3);
        await sleep(300);
        expect(consumer.received).toHaveLength(3);
        expect(consumer.received.map((entry) => entry.delivery.sequence)).toEqual(
          [...consumer.received.map((entry) => entry.delivery.sequence)].sort((a, b) => a - b),
        );
      });

      it('resumes where it stopped after the log is closed and reopened', async () => {
        const store = await newStore();
        const firstLog = await open(store);
        const firstRun = await record(firstLog, 'durable', { ackWaitMs: 500 }, async (delivery) => {
          if (delivery.messageId !== 'third') await delivery.ack();
        });
        await firstLog.publishBatch([
          message('src-a', 'first'),
          message('src-a', 'second'),
          message('src-a', 'third'),
        ]);
        await waitUntil('three deliveries', () => firstRun.received.length >= 3);
        await sleep(200); // let the acks reach the log before closing
        await firstRun.subscription.stop();
        await firstLog.close();

        const secondLog = await open(store);
        const secondRun = await record(secondLog, 'durable', { ackWaitMs: 500 });
        await secondLog.publishBatch([message('src-a', 'fourth')]);
        await waitUntil('the unacked and the new message', () => secondRun.received.length >= 2);
        await sleep(800);
        expect(secondRun.messageIds().sort()).toEqual(['fourth', 'third']);
        const third = secondRun.received.find((entry) => entry.delivery.messageId === 'third');
        expect(third?.delivery.deliveryCount).toBe(2);
      });

      it('applies a new ackWait and maxInFlight when a consumer is consumed again', async () => {
        const log = await openFresh();
        const narrow = await record(log, 'adjustable', { maxInFlight: 1, ackWaitMs: 300 }, () => undefined);
        await log.publishBatch([message('src-a'), message('src-a'), message('src-a')]);
        await waitUntil('one delivery', () => narrow.received.length >= 1);
        await sleep(200);
        expect(narrow.received).toHaveLength(1);
        await narrow.subscription.stop();

        // The message outstanding from the first run may or may not come again soon (JetStream applies
        // the new ack wait to it too); the two others must come at once, since three may be outstanding.
        const wide = await record(log, 'adjustable', { maxInFlight: 3, ackWaitMs: 10_000 }, () => undefined);
        const firstSequence = narrow.received[0].delivery.sequence;
        await waitUntil('the two other messages outstanding', () => {
          const sequences = new Set(wide.received.map((entry) => entry.delivery.sequence));
          sequences.delete(firstSequence);
          return sequences.size >= 2;
        });
        expect(await log.consumerLag('adjustable')).toEqual({ undelivered: 0, unacknowledged: 3 });
      });

      it('filters a consumer to one source', async () => {
        const log = await openFresh();
        const onlyA = await record(log, 'only-a', { sourceId: 'src-a' });
        const all = await record(log, 'all-sources');
        await log.publishBatch([
          message('src-a', 'a1'),
          message('src-b', 'b1'),
          message('src-a', 'a2', 'ws2'),
        ]);
        await waitUntil('all three reach the unfiltered consumer', () => all.received.length >= 3);
        await waitUntil('two reach the filtered consumer', () => onlyA.received.length >= 2);
        await sleep(300);
        expect(onlyA.messageIds()).toEqual(['a1', 'a2']);
        expect(all.messageIds()).toEqual(['a1', 'b1', 'a2']);
      });

      it('starts a new consumer at new messages, and a replay consumer at a time', async () => {
        const log = await openFresh();
        await log.publishBatch([message('src-a', 'old')]);
        await sleep(100);
        const replayFrom = new Date();
        await sleep(100);
        await log.publishBatch([message('src-a', 'middle')]);

        const fresh = await record(log, 'fresh');
        const replay = await record(log, 'replay-1', { deliverFrom: replayFrom });
        const everything = await record(log, 'replay-all', { deliverFrom: new Date(0) });
        await log.publishBatch([message('src-a', 'new')]);

        await waitUntil(
          'every replay delivery',
          () => everything.received.length >= 3 && replay.received.length >= 2,
        );
        await waitUntil('the new message reaches the fresh consumer', () => fresh.received.length >= 1);
        await sleep(300);
        expect(fresh.messageIds()).toEqual(['new']);
        expect(replay.messageIds()).toEqual(['middle', 'new']);
        expect(everything.messageIds()).toEqual(['old', 'middle', 'new']);
      });

      it('refuses to reuse a consumer name with another source filter', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'fixed-filter', { sourceId: 'src-a' });
        await consumer.subscription.stop();
        await expect(
          log.consume(
            'fixed-filter',
            { sourceId: 'src-b', ackWaitMs: 1000, maxInFlight: 1 },
            () => undefined,
          ),
        ).rejects.toThrow(ConsumerMismatchError);
        await expect(
          log.consume('fixed-filter', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined),
        ).rejects.toThrow(ConsumerMismatchError);
      });

      it('refuses invalid consumer names and options', async () => {
        const log = await openFresh();
        await expect(
          log.consume('has.dot', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined),
        ).rejects.toThrow(TypeError);
        await expect(log.consume('', { ackWaitMs: 1000, maxInFlight: 1 }, () => undefined)).rejects.toThrow(
          TypeError,
        );
        await expect(log.consume('ok', { ackWaitMs: 0, maxInFlight: 1 }, () => undefined)).rejects.toThrow(
          RangeError,
        );
        await expect(log.consume('ok', { ackWaitMs: 1000, maxInFlight: 0 }, () => undefined)).rejects.toThrow(
          RangeError,
        );
        await expect(
          log.consume('ok', { sourceId: 'a b', ackWaitMs: 1000, maxInFlight: 1 }, () => undefined),
        ).rejects.toThrow(TypeError);
      });
    });

    describe('tails', () => {
      const tails: TailSubscription[] = [];
      afterEach(async () => {
        await Promise.allSettled(tails.splice(0).map((tail) => tail.stop()));
      });

      async function tailOf(
        log: EventLog,
        sourceId: string,
        afterSequence?: number,
        onMessage: TailHandler = () => undefined,
      ) {
        const received: TailedMessage[] = [];
        const subscription = await log.tail({ sourceId, afterSequence }, async (tailed) => {
          received.push(tailed);
          await onMessage(tailed);
        });
        tails.push(subscription);
        return { received, subscription, messageIds: () => received.map((tailed) => tailed.messageId) };
      }

      it("hands out a source's messages stored after it started, in order, with their fields", async () => {
        const log = await openFresh();
        await log.publishBatch([message('src-a', 'before-the-tail')]);
        const tail = await tailOf(log, 'src-a');
        const batch = [message('src-a'), message('src-b'), message('src-a'), message('src-a')];
        const outcomes = await log.publishBatch(batch);

        await waitUntil('three tailed messages', () => tail.received.length >= 3);
        await sleep(200);
        expect(tail.messageIds()).toEqual([batch[0], batch[2], batch[3]].map((sent) => sent.messageId));
        expect(tail.received.map((tailed) => tailed.sequence)).toEqual(
          [outcomes[0], outcomes[2], outcomes[3]].map((outcome) => outcome.sequence),
        );
        expect(tail.received[0]).toMatchObject({
          workspaceId: 'ws1',
          sourceId: 'src-a',
          payload: batch[0].payload,
        });
        expect(tail.received[0].publishedAt).toBeInstanceOf(Date);
      });

      it('does not hand out duplicates again', async () => {
        const log = await openFresh();
        const tail = await tailOf(log, 'src-a');
        const first = message('src-a');
        await log.publishBatch([first]);
        await log.publishBatch([first, message('src-a', 'after-the-duplicate')]);
        await waitUntil('two tailed messages', () => tail.received.length >= 2);
        await sleep(200);
        expect(tail.messageIds()).toEqual([first.messageId, 'after-the-duplicate']);
      });

      it('resumes after a sequence, and takes a sequence past the end as now', async () => {
        const log = await openFresh();
        const outcomes = await log.publishBatch([
          message('src-a', 'm1'),
          message('src-a', 'm2'),
          message('src-a', 'm3'),
        ]);
        const resumed = await tailOf(log, 'src-a', outcomes[0].sequence);
        await waitUntil('the two messages after the first', () => resumed.received.length >= 2);
        expect(resumed.messageIds()).toEqual(['m2', 'm3']);

        const fromZero = await tailOf(log, 'src-a', 0);
        await waitUntil('every retained message', () => fromZero.received.length >= 3);
        expect(fromZero.messageIds()).toEqual(['m1', 'm2', 'm3']);

        const pastTheEnd = await tailOf(log, 'src-a', outcomes[2].sequence + 1_000);
        await log.publishBatch([message('src-a', 'm4')]);
        await waitUntil('the new message', () => pastTheEnd.received.length >= 1);
        expect(pastTheEnd.messageIds()).toEqual(['m4']);
      });

      it('keeps up with a burst: every message once, in order', async () => {
        const log = await openFresh();
        const tail = await tailOf(log, 'src-a');
        const burst = Array.from({ length: 1000 }, (_, index) => message('src-a', `burst-${index}`));
        for (let start = 0; start < burst.length; start += 100) {
          await log.publishBatch(burst.slice(start, start + 100));
        }
        await waitUntil('the whole burst', () => tail.received.length >= 1000, 20_000);
        await sleep(200);
        expect(tail.messageIds()).toEqual(burst.map((sent) => sent.messageId));
      }, 40_000);

      it('waits for its handler before handing out the next message, and stop waits for the call running', async () => {
        const log = await openFresh();
        let release: () => void = () => undefined;
        let running = 0;
        let mostAtOnce = 0;
        const tail = await tailOf(log, 'src-a', undefined, async () => {
          running += 1;
          mostAtOnce = Math.max(mostAtOnce, running);
          await new Promise<void>((resolve) => (release = resolve));
          running -= 1;
        });
        await log.publishBatch([message('src-a', 'slow-1'), message('src-a', 'slow-2')]);
        await waitUntil('the first message', () => tail.received.length >= 1);
        await sleep(300);
        expect(tail.messageIds()).toEqual(['slow-1']);
        release();
        await waitUntil('the second message', () => tail.received.length >= 2);
        const stopping = tail.subscription.stop();
        let stopped = false;
        void stopping.then(() => (stopped = true));
        await sleep(100);
        expect(stopped).toBe(false);
        release();
        await stopping;
        expect(running).toBe(0);
        expect(mostAtOnce).toBe(1);
        expect(await tail.subscription.ended).toEqual({ reason: 'stopped' });
      });

      it('hands out nothing after stop, and ends when the log is closed', async () => {
        const log = await openFresh();
        const stoppedTail = await tailOf(log, 'src-a');
        await stoppedTail.subscription.stop();
        const open = await tailOf(log, 'src-a');
        await log.publishBatch([message('src-a', 'after-stop')]);
        await waitUntil('the open tail gets it', () => open.received.length >= 1);
        await sleep(200);
        expect(stoppedTail.received).toEqual([]);
        await log.close();
        expect(await open.subscription.ended).toEqual({ reason: 'stopped' });
      });

      it('refuses invalid options, and a closed log', async () => {
        const log = await openFresh();
        await expect(log.tail({ sourceId: 'a.b' }, () => undefined)).rejects.toThrow(TypeError);
        await expect(log.tail({ sourceId: 'src-a', afterSequence: -1 }, () => undefined)).rejects.toThrow(
          RangeError,
        );
        await expect(log.tail({ sourceId: 'src-a', afterSequence: 1.5 }, () => undefined)).rejects.toThrow(
          RangeError,
        );
        await log.close();
        await expect(log.tail({ sourceId: 'src-a' }, () => undefined)).rejects.toThrow(
          EventLogUnavailableError,
        );
      });
    });

    describe('consumer lag and deletion', () => {
      it('counts undelivered messages of a stopped consumer, by its filter', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'lagging', { sourceId: 'src-a' });
        await consumer.subscription.stop();
        await log.publishBatch([message('src-a'), message('src-b'), message('src-a'), message('src-a')]);
        await waitUntil(
          'the lag shows three messages',
          async () => (await log.consumerLag('lagging')).undelivered === 3,
        );
        expect(await log.consumerLag('lagging')).toEqual({ undelivered: 3, unacknowledged: 0 });
      });

      it('deletes a consumer and its position', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'short-lived-consumer');
        await log.publishBatch([message('src-a', 'before-delete')]);
        await waitUntil('one delivery', () => consumer.received.length >= 1);
        await consumer.subscription.stop();

        expect(await log.deleteConsumer('short-lived-consumer')).toBe(true);
        expect(await log.deleteConsumer('short-lived-consumer')).toBe(false);
        await expect(log.consumerLag('short-lived-consumer')).rejects.toThrow(ConsumerNotFoundError);

        const recreated = await record(log, 'short-lived-consumer', { deliverFrom: new Date(0) });
        await waitUntil('the old message is delivered again', () => recreated.received.length >= 1);
        expect(recreated.messageIds()).toEqual(['before-delete']);
      });

      it('throws ConsumerNotFoundError for the lag of an unknown consumer', async () => {
        const log = await openFresh();
        await expect(log.consumerLag('never-created')).rejects.toThrow(ConsumerNotFoundError);
      });
    });

    describe('retention', () => {
      it('deletes messages older than the retention, so not even a full replay sees them', async () => {
        const log = await openFresh({ dedupeWindowMs: 300, retentionMs: 1000 });
        await log.publishBatch([message('src-a', 'expiring-1'), message('src-a', 'expiring-2')]);
        let probe = 0;
        await waitUntil(
          'a full replay finds nothing',
          async () => {
            probe += 1;
            const probeConsumer = await record(
              log,
              `probe-${probe}`,
              { deliverFrom: new Date(0) },
              () => undefined,
            );
            await probeConsumer.subscription.stop();
            const lag = await log.consumerLag(`probe-${probe}`);
            await log.deleteConsumer(`probe-${probe}`);
            return lag.undelivered + lag.unacknowledged === 0;
          },
          10_000,
        );
        await log.publishBatch([message('src-a', 'kept')]);
        const replay = await record(log, 'replay-after-retention', { deliverFrom: new Date(0) });
        await waitUntil('the kept message is delivered', () => replay.received.length >= 1);
        await sleep(300);
        expect(replay.messageIds()).toEqual(['kept']);
      });
    });

    describe('dead letters', () => {
      function deadLetterOf(consumerName: string, sequence: number, messageId: string): NewDeadLetter {
        return {
          consumerName,
          reason: 'retries exhausted after 4 h',
          attempts: [
            { at: new Date('2024-05-01T10:00:00.000Z'), outcome: 'HTTP 500' },
            { at: new Date('2024-05-01T10:00:05.000Z'), outcome: 'timeout after 5000 ms' },
          ],
          message: {
            workspaceId: 'ws1',
            sourceId: 'src-a',
            messageId,
            sequence,
            publishedAt: new Date('2024-05-01T09:59:59.123Z'),
            payload: { type: 'track', event: 'Signed Up', messageId },
          },
        };
      }

      it('stores dead letters with reason and attempts, lists them by consumer and pages through them', async () => {
        const log = await openFresh();
        const first = await log.deadLetter(deadLetterOf('destination-a', 11, 'm-11'));
        const second = await log.deadLetter(deadLetterOf('destination-b', 12, 'm-12'));
        const third = await log.deadLetter(deadLetterOf('destination-a', 13, 'm-13'));
        expect([first.duplicate, second.duplicate, third.duplicate]).toEqual([false, false, false]);
        expect(second.deadLetterSequence).toBeGreaterThan(first.deadLetterSequence);
        expect(third.deadLetterSequence).toBeGreaterThan(second.deadLetterSequence);

        const all = await log.listDeadLetters();
        expect(all.map((letter) => letter.message.messageId)).toEqual(['m-11', 'm-12', 'm-13']);
        const { deadLetterSequence, deadLetteredAt, ...stored } = all[0];
        expect(stored).toEqual(deadLetterOf('destination-a', 11, 'm-11'));
        expect(deadLetterSequence).toBe(first.deadLetterSequence);
        expect(Math.abs(deadLetteredAt.getTime() - Date.now())).toBeLessThan(10_000);

        const ofA = await log.listDeadLetters({ consumerName: 'destination-a' });
        expect(ofA.map((letter) => letter.message.messageId)).toEqual(['m-11', 'm-13']);
        const page = await log.listDeadLetters({ afterSequence: first.deadLetterSequence, limit: 1 });
        expect(page.map((letter) => letter.message.messageId)).toEqual(['m-12']);
        const pastTheEnd = await log.listDeadLetters({ afterSequence: third.deadLetterSequence });
        expect(pastTheEnd).toEqual([]);

        // A page reads a letter back whole, as it was listed.
        expect(await log.listDeadLetters({ afterSequence: second.deadLetterSequence, limit: 1 })).toEqual([
          all[2],
        ]);
      });

      it('stores a message dead-lettered twice by the same consumer once', async () => {
        const log = await openFresh();
        const first = await log.deadLetter(deadLetterOf('destination-a', 21, 'm-21'));
        const again = await log.deadLetter(deadLetterOf('destination-a', 21, 'm-21'));
        const otherConsumer = await log.deadLetter(deadLetterOf('destination-b', 21, 'm-21'));
        expect(again).toEqual({ deadLetterSequence: first.deadLetterSequence, duplicate: true });
        expect(otherConsumer.duplicate).toBe(false);
        expect(await log.listDeadLetters()).toHaveLength(2);
      });
    });

    describe('leases', () => {
      it('answers null for a lease never written, and creates one only once', async () => {
        const log = await openFresh();
        expect(await log.readLease('replay_rp_1')).toBeNull();
        const revision = await log.writeLease('replay_rp_1', { holder: 'a', data: { step: 1 } }, 0);
        expect(revision).toEqual(expect.any(Number));
        expect(revision).toBeGreaterThan(0);
        // A second "create" loses: the lease exists.
        expect(await log.writeLease('replay_rp_1', { holder: 'b', data: {} }, 0)).toBeNull();
        expect(await log.readLease('replay_rp_1')).toEqual({ holder: 'a', data: { step: 1 }, revision });
      });

      it('writes over the revision it read and refuses a stale one', async () => {
        const log = await openFresh();
        const first = (await log.writeLease('job', { holder: 'a', data: { n: 1 } }, 0))!;
        const second = await log.writeLease('job', { holder: 'a', data: { n: 2, list: [1, 2] } }, first);
        expect(second).not.toBeNull();
        expect(second).not.toBe(first);
        expect(await log.writeLease('job', { holder: 'b', data: {} }, first)).toBeNull();
        expect(await log.readLease('job')).toEqual({
          holder: 'a',
          data: { n: 2, list: [1, 2] },
          revision: second,
        });
      });

      it('lets exactly one of several concurrent writers of one revision win', async () => {
        const log = await openFresh();
        const revision = (await log.writeLease('contended', { holder: '', data: {} }, 0))!;
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, index) =>
            log.writeLease('contended', { holder: `replica-${index}`, data: { index } }, revision),
          ),
        );
        const winners = outcomes.filter((outcome) => outcome !== null);
        expect(winners).toHaveLength(1);
        const lease = await log.readLease('contended');
        expect(lease?.revision).toBe(winners[0]);
        expect(lease?.holder).toBe(`replica-${lease?.data.index}`);
      });

      it('keeps leases apart by name and across a reopen', async () => {
        const store = await newStore();
        const log = await open(store);
        const a = await log.writeLease('lease-a', { holder: 'x', data: { of: 'a' } }, 0);
        await log.writeLease('lease-b', { holder: 'y', data: { of: 'b' } }, 0);
        await log.close();
        const reopened = await open(store);
        expect(await reopened.readLease('lease-a')).toEqual({ holder: 'x', data: { of: 'a' }, revision: a });
        expect((await reopened.readLease('lease-b'))?.data).toEqual({ of: 'b' });
      });

      it('refuses invalid names and writes', async () => {
        const log = await openFresh();
        await expect(log.readLease('a.b')).rejects.toThrow(TypeError);
        await expect(log.writeLease('', { holder: 'a', data: {} }, 0)).rejects.toThrow(TypeError);
        await expect(log.writeLease('ok', { holder: 'a', data: [] as never }, 0)).rejects.toThrow(TypeError);
        await expect(log.writeLease('ok', { holder: 'a', data: {} }, -1)).rejects.toThrow(RangeError);
        expect(await log.readLease('ok')).toBeNull();
      });
    });

    describe('seen once', () => {
      const key = () => unique('seen').replace(/[^A-Za-z0-9_-]/g, '_');

      it('records a key once: true the first time, false while it lives, keys apart', async () => {
        const log = await openFresh();
        const [a, b] = [key(), key()];
        expect(await log.markSeenOnce(a, 60_000)).toBe(true);
        expect(await log.markSeenOnce(a, 60_000)).toBe(false);
        expect(await log.markSeenOnce(b, 60_000)).toBe(true);
        expect(await log.markSeenOnce(a, 60_000)).toBe(false);
      });

      it('lets exactly one of several concurrent callers record a key', async () => {
        const log = await openFresh();
        const contended = key();
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, () => log.markSeenOnce(contended, 60_000)),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      });

      it('forgets a key once its ttl has passed, and records it again', async () => {
        const log = await openFresh();
        const shortLived = key();
        expect(await log.markSeenOnce(shortLived, 300)).toBe(true);
        expect(await log.markSeenOnce(shortLived, 300)).toBe(false);
        await sleep(500);
        expect(await log.markSeenOnce(shortLived, 60_000)).toBe(true);
        expect(await log.markSeenOnce(shortLived, 60_000)).toBe(false);
      });

      it('remembers across a reopen (a restart) and for a second instance on the same storage (a replica)', async () => {
        const store = await newStore();
        const first = await open(store);
        const [beforeRestart, fromReplica] = [key(), key()];
        expect(await first.markSeenOnce(beforeRestart, 60_000)).toBe(true);
        const replica = await open(store);
        expect(await replica.markSeenOnce(beforeRestart, 60_000)).toBe(false);
        expect(await replica.markSeenOnce(fromReplica, 60_000)).toBe(true);
        expect(await first.markSeenOnce(fromReplica, 60_000)).toBe(false);
        await first.close();
        await replica.close();
        const restarted = await open(store);
        expect(await restarted.markSeenOnce(beforeRestart, 60_000)).toBe(false);
        expect(await restarted.markSeenOnce(fromReplica, 60_000)).toBe(false);
      });

      it('refuses a new key past its capacity instead of forgetting a live one', async () => {
        const log = await openFresh({ ...ROOMY_SETTINGS, seenOnceCapacity: 3 });
        const kept = [key(), key(), key()];
        for (const each of kept) expect(await log.markSeenOnce(each, 60_000)).toBe(true);
        const refusal = log.markSeenOnce(key(), 60_000);
        await expect(refusal).rejects.toThrow(SeenOnceCapacityError);
        await expect(refusal).rejects.toThrow(EventLogUnavailableError);
        // Every live key is still refused: none was evicted to make room.
        for (const each of kept)
          expect(await log.markSeenOnce(each, 60_000).catch(() => 'refused')).not.toBe(true);
        // A refusal does not disturb the other writes of the log.
        const [stored] = await log.publishBatch([message('src-seen')]);
        expect(stored.duplicate).toBe(false);
      });

      it('refuses invalid keys and ttls', async () => {
        const log = await openFresh();
        await expect(log.markSeenOnce('', 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('a.b', 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('x'.repeat(129), 1000)).rejects.toThrow(TypeError);
        await expect(log.markSeenOnce('ok', 0)).rejects.toThrow(RangeError);
        await expect(log.markSeenOnce('ok', 1.5)).rejects.toThrow(RangeError);
        await expect(log.markSeenOnce('ok', MAX_SEEN_ONCE_TTL_MS + 1)).rejects.toThrow(RangeError);
        expect(await log.markSeenOnce('ok', MAX_SEEN_ONCE_TTL_MS)).toBe(true);
      });
    });

    describe('failed attempts', () => {
      const at = (iso: string) => new Date(iso);

      it('remembers nothing until an attempt fails', async () => {
        const log = await openFresh();
        expect(await log.readFailedAttempts('destination-a', 7)).toBeNull();
        await log.forgetFailedAttempts('destination-a', 7);
        expect(await log.readFailedAttempts('destination-a', 7)).toBeNull();
      });

      it('appends each failed attempt and answers the whole history, first failure first', async () => {
        const log = await openFresh();
        const first = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        expect(first).toEqual({
          firstFailedAt: at('2026-03-10T08:00:00.000Z'),
          attempts: [{ at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' }],
        });
        const second = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:02.000Z'),
          outcome: 'timeout after 5000 ms',
        });
        expect(second.firstFailedAt).toEqual(at('2026-03-10T08:00:00.000Z'));
        expect(second.attempts.map((attempt) => attempt.outcome)).toEqual([
          'HTTP 500',
          'timeout after 5000 ms',
        ]);
        expect(await log.readFailedAttempts('destination-a', 7)).toEqual(second);
      });

      it('keeps histories apart by consumer and message, and forgets one when asked', async () => {
        const log = await openFresh();
        const attempt = { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 503' };
        await log.recordFailedAttempt('destination-a', 1, attempt);
        await log.recordFailedAttempt('destination-a', 2, attempt);
        await log.recordFailedAttempt('destination-b', 1, attempt);
        await log.forgetFailedAttempts('destination-a', 1);
        expect(await log.readFailedAttempts('destination-a', 1)).toBeNull();
        expect((await log.readFailedAttempts('destination-a', 2))?.attempts).toHaveLength(1);
        expect((await log.readFailedAttempts('destination-b', 1))?.attempts).toHaveLength(1);
        // A history started again after being forgotten starts a new window.
        const again = await log.recordFailedAttempt('destination-a', 1, {
          at: at('2026-03-10T09:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        expect(again.firstFailedAt).toEqual(at('2026-03-10T09:00:00.000Z'));
      });

      it('survives a reopen (another process continues the history)', async () => {
        const store = await newStore();
        const log = await open(store);
        // Recent times: a history older than the retention may be dropped with its message.
        const firstFailure = new Date(Date.now() - 1_000);
        await log.recordFailedAttempt('destination-a', 3, { at: firstFailure, outcome: 'HTTP 500' });
        await log.close();
        const reopened = await open(store);
        const history = await reopened.recordFailedAttempt('destination-a', 3, {
          at: new Date(),
          outcome: 'HTTP 502',
        });
        expect(history.attempts.map((attempt) => attempt.outcome)).toEqual(['HTTP 500', 'HTTP 502']);
        expect(history.firstFailedAt).toEqual(firstFailure);
      });

      it('loses no attempt when two writers record at once', async () => {
        const store = await newStore();
        const one = await open(store);
        const other = await open(store);
        await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            (index % 2 === 0 ? one : other).recordFailedAttempt('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 0, index)),
              outcome: `attempt ${index}`,
            }),
          ),
        );
        const history = await one.readFailedAttempts('destination-a', 9);
        expect(history?.attempts.map((attempt) => attempt.outcome).sort()).toEqual(
          Array.from({ length: 6 }, (_, index) => `attempt ${index}`),
        );
      });

      it('records a started attempt as unsettled until a failure of the same delivery settles it', async () => {
        const log = await openFresh();
        const started = await log.recordAttemptStarted('destination-a', 7, {
          at: at('2026-03-10T08:00:00.000Z'),
          deliveryCount: 2,
        });
        expect(started).toEqual({
          firstFailedAt: at('2026-03-10T08:00:00.000Z'),
          attempts: [
            {
              at: at('2026-03-10T08:00:00.000Z'),
              outcome: UNSETTLED_ATTEMPT_OUTCOME,
              deliveryCount: 2,
              unsettled: true,
            },
          ],
        });
        // A failure of another delivery (one that recorded no start) is appended beside it.
        await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:01.000Z'),
          outcome: 'HTTP 503',
          deliveryCount: 1,
        });
        const settled = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:05.000Z'),
          outcome: 'timeout after 5000 ms',
          deliveryCount: 2,
        });
        expect(settled.attempts).toEqual([
          { at: at('2026-03-10T08:00:05.000Z'), outcome: 'timeout after 5000 ms', deliveryCount: 2 },
          { at: at('2026-03-10T08:00:01.000Z'), outcome: 'HTTP 503', deliveryCount: 1 },
        ]);
        expect(await log.readFailedAttempts('destination-a', 7)).toEqual(settled);
      });

      it('keeps the attempts of deliveries that never settled, each once, across a reopen', async () => {
        const store = await newStore();
        const log = await open(store);
        const firstStart = new Date(Date.now() - 2_000);
        await log.recordAttemptStarted('destination-a', 4, { at: firstStart, deliveryCount: 2 });
        // The same delivery starting again (a handler called twice for it) is not a second attempt.
        await log.recordAttemptStarted('destination-a', 4, { at: new Date(), deliveryCount: 2 });
        await log.close();
        // The process died there: the next delivery, in another process, finds the start unsettled.
        const reopened = await open(store);
        const history = await reopened.recordAttemptStarted('destination-a', 4, {
          at: new Date(),
          deliveryCount: 3,
        });
        expect(history.firstFailedAt).toEqual(firstStart);
        expect(history.attempts.map((attempt) => [attempt.deliveryCount, attempt.unsettled])).toEqual([
          [2, true],
          [3, true],
        ]);
        // A start of a delivery whose failure is recorded already changes nothing.
        await reopened.recordFailedAttempt('destination-a', 5, {
          at: new Date(),
          outcome: 'HTTP 500',
          deliveryCount: 2,
        });
        const after = await reopened.recordAttemptStarted('destination-a', 5, {
          at: new Date(),
          deliveryCount: 2,
        });
        expect(after.attempts.map((attempt) => attempt.outcome)).toEqual(['HTTP 500']);
        await reopened.forgetFailedAttempts('destination-a', 4);
        expect(await reopened.readFailedAttempts('destination-a', 4)).toBeNull();
      });

      it('loses no start when replicas record starts and failures of one message at once', async () => {
        const store = await newStore();
        const one = await open(store);
        const other = await open(store);
        await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            (index % 2 === 0 ? one : other).recordAttemptStarted('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 0, index)),
              deliveryCount: index + 2,
            }),
          ),
        );
        await Promise.all(
          [2, 3, 4].map((deliveryCount) =>
            (deliveryCount % 2 === 0 ? one : other).recordFailedAttempt('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 1, deliveryCount)),
              outcome: `failure ${deliveryCount}`,
              deliveryCount,
            }),
          ),
        );
        const history = await one.readFailedAttempts('destination-a', 9);
        const byDelivery = [...(history?.attempts ?? [])].sort(
          (a, b) => (a.deliveryCount ?? 0) - (b.deliveryCount ?? 0),
        );
        expect(byDelivery.map((attempt) => [attempt.deliveryCount, attempt.unsettled ?? false])).toEqual([
          [2, false],
          [3, false],
          [4, false],
          [5, true],
          [6, true],
          [7, true],
        ]);
      });

      it('drops every history of a consumer when the consumer is deleted', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'doomed', {}, () => undefined);
        await consumer.subscription.stop();
        await log.recordFailedAttempt('doomed', 1, {
          at: at('2026-03-10T08:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        await log.recordFailedAttempt('kept', 1, { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' });
        await log.deleteConsumer('doomed');
        expect(await log.readFailedAttempts('doomed', 1)).toBeNull();
        expect(await log.readFailedAttempts('kept', 1)).not.toBeNull();
      });

      it('refuses invalid keys and attempts', async () => {
        const log = await openFresh();
        const attempt = { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' };
        await expect(log.recordFailedAttempt('a.b', 1, attempt)).rejects.toThrow(TypeError);
        await expect(log.recordFailedAttempt('ok', 0, attempt)).rejects.toThrow(RangeError);
        await expect(
          log.recordFailedAttempt('ok', 1, { at: new Date('x'), outcome: 'HTTP 500' }),
        ).rejects.toThrow(TypeError);
        await expect(log.recordFailedAttempt('ok', 1, { ...attempt, deliveryCount: 0 })).rejects.toThrow(
          RangeError,
        );
        await expect(log.readFailedAttempts('ok', 1.5)).rejects.toThrow(RangeError);
        await expect(
          log.recordAttemptStarted('a.b', 1, { at: attempt.at, deliveryCount: 2 }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.recordAttemptStarted('ok', 1, { at: new Date('x'), deliveryCount: 2 }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.recordAttemptStarted('ok', 1, { at: attempt.at, deliveryCount: 1.5 }),
        ).rejects.toThrow(RangeError);
        expect(await log.readFailedAttempts('ok', 1)).toBeNull();
      });
    });

    describe('erasure of regulated users', () => {
      /** A consumer from the start of the log: every message still stored, of every source. */
      async function storedMessages(log: EventLog): Promise<Record<string, unknown>[]> {
        const consumerName = unique('everything');
        const all = await record(log, consumerName, { deliverFrom: new Date(0) });
        await waitUntil('the replay consumer is drained', async () => {
          const lag = await log.consumerLag(consumerName);
          return lag.undelivered === 0 && lag.unacknowledged === 0;
        });
        await all.subscription.stop();
        return all.received.map((entry) => entry.delivery.payload);
      }
      const userMessage = (workspaceId: string, sourceId: string, ids: Record<string, string>) => {
        const messageId = unique('msg');
        return {
          workspaceId,
          sourceId,
          messageId,
          payload: { type: 'track', event: 'Paid', messageId, ...ids },
        };
      };

      it("erases a subject's messages, dead letters, attempt histories and Protocols outcomes, in scope only", async () => {
        const log = await openFresh();
        // Protocols outcomes outlive a test's other streams on JetStream: workspaces of their own.
        const ws = unique('ws');
        const otherWs = unique('ws');
        const batch = [
          userMessage(ws, 'src-a', { userId: 'u1' }),
          userMessage(ws, 'src-a', { userId: 'u2' }),
          userMessage(ws, 'src-a', { userId: 'u1' }),
          userMessage(ws, 'src-a', { anonymousId: 'u1' }),
          userMessage(ws, 'src-b', { userId: 'u1' }),
          userMessage(otherWs, 'src-a', { userId: 'u1' }),
        ];
        const outcomes = await log.publishBatch(batch);
        const letter = (index: number): NewDeadLetter => ({
          consumerName: 'destination-a',
          reason: 'retries exhausted',
          attempts: [{ at: new Date(), outcome: 'HTTP 500' }],
          message: {
            ...batch[index],
            sequence: outcomes[index].sequence,
            publishedAt: new Date(),
          },
        });
        await log.deadLetter(letter(0));
        await log.deadLetter(letter(1));
        await log.recordFailedAttempt('destination-a', outcomes[2].sequence, {
          at: new Date(),
          outcome: 'HTTP 503',
        });
        await log.recordFailedAttempt('destination-a', outcomes[1].sequence, {
          at: new Date(),
          outcome: 'HTTP 503',
        });
        await log.recordProtocolsOutcomes(
          [0, 1].map((index) => ({
            workspaceId: ws,
            sourceId: 'src-a',
            messageId: batch[index].messageId,
            outcome: { violations: [], sample: batch[index].payload },
          })),
        );

        const request = {
          workspaceId: ws,
          sourceIds: ['src-a'],
          field: 'userId' as const,
          subjectIds: ['u1'],
        };
        expect(await log.eraseMessages(request)).toEqual({
          messages: 2,
          messageIds: [batch[0].messageId, batch[2].messageId],
          deadLetters: 1,
          protocolsOutcomes: 1,
        });

        const kept = (await storedMessages(log)).map((payload) => payload.messageId);
        expect(kept).toEqual([1, 3, 4, 5].map((index) => batch[index].messageId));
        expect((await log.listDeadLetters()).map((entry) => entry.message.messageId)).toEqual([
          batch[1].messageId,
        ]);
        expect(await log.readFailedAttempts('destination-a', outcomes[2].sequence)).toBeNull();
        expect(await log.readFailedAttempts('destination-a', outcomes[1].sequence)).not.toBeNull();
        const recorded = await log.readProtocolsOutcomes('src-a', new Date(Date.now() - 60_000));
        expect(recorded.map((outcome) => outcome.messageId)).toEqual([batch[1].messageId]);
        // The ids stay known: a client's retry of an erased message is still a duplicate.
        expect((await log.publishBatch([batch[0]]))[0].duplicate).toBe(true);

        // Idempotent: a second run (after a crash midway) finds nothing more.
        expect(await log.eraseMessages(request)).toEqual({
          messages: 0,
          messageIds: [],
          deadLetters: 0,
          protocolsOutcomes: 0,
        });

        // The whole workspace, by anonymousId and then by userId: the other workspace keeps its own.
        expect(
          await log.eraseMessages({ workspaceId: ws, field: 'anonymousId', subjectIds: ['u1'] }),
        ).toMatchObject({ messages: 1 });
        expect(
          await log.eraseMessages({ workspaceId: ws, field: 'userId', subjectIds: ['u1', 'u2'] }),
        ).toMatchObject({
          messages: 2,
          deadLetters: 1,
          protocolsOutcomes: 1,
        });
        expect((await storedMessages(log)).map((payload) => payload.messageId)).toEqual([batch[5].messageId]);
      });

      it('refuses an invalid request', async () => {
        const log = await openFresh();
        await expect(
          log.eraseMessages({ workspaceId: 'a.b', field: 'userId', subjectIds: ['u1'] }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.eraseMessages({ workspaceId: 'ws1', field: 'email' as 'userId', subjectIds: ['u1'] }),
        ).rejects.toThrow(TypeError);
      });
    });

    describe('health', () => {
      it('answers ping while open', async () => {
        const log = await openFresh();
        expect(await log.ping()).toBe(true);
      });
    });
  });
}
