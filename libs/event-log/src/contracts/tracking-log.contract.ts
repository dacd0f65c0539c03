import {
  ConsumerMismatchError,
  ConsumerNotFoundError,
  EventLogUnavailableError,
  type EventLog,
  type TailHandler,
  type TailSubscription,
  type TailedMessage,
} from '../event-log.port';
import {
  message,
  sleep,
  waitUntil,
  eventLogHarness,
  type EventLogContractFactory,
} from './event-log-harness.contract';

/** What every engine's `TrackingLog` must do (see the port's documentation). */
export function describeTrackingLogContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`TrackingLog contract: ${adapterName}`, () => {
    const { newStore, open, openFresh, record } = eventLogHarness(getFactory);

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

      // A router restarted with other ROUTER_ACK_WAIT or ROUTER_MAX_IN_FLIGHT settings, or a destination
      // given an insert function; a destination's consumer starts at the destination's creation time.
      it.each([
        ['when a consumer is consumed again', 'adjustable', undefined],
        ['to a consumer that starts at a time', 'from-a-time', new Date(Date.now() - 60_000)],
      ])('applies a new ackWait and maxInFlight %s', async (_, consumerName, deliverFrom) => {
        const log = await openFresh();
        const narrow = await record(
          log,
          consumerName,
          { deliverFrom, maxInFlight: 1, ackWaitMs: 300 },
          () => undefined,
        );
        await log.publishBatch([message('src-a'), message('src-a'), message('src-a')]);
        await waitUntil('one delivery', () => narrow.received.length >= 1);
        await sleep(200);
        expect(narrow.received).toHaveLength(1);
        await narrow.subscription.stop();

        // The message outstanding from the first run may or may not come again soon (JetStream applies
        // the new ack wait to it too); the two others must come at once, since three may be outstanding.
        const wide = await record(
          log,
          consumerName,
          { deliverFrom, maxInFlight: 3, ackWaitMs: 10_000 },
          () => undefined,
        );
        const firstSequence = narrow.received[0].delivery.sequence;
        await waitUntil('the two other messages outstanding', () => {
          const sequences = new Set(wide.received.map((entry) => entry.delivery.sequence));
          sequences.delete(firstSequence);
          return sequences.size >= 2;
        });
        expect(await log.consumerLag(consumerName)).toEqual({ undelivered: 0, unacknowledged: 3 });
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

    describe('health', () => {
      it('answers ping while open', async () => {
        const log = await openFresh();
        expect(await log.ping()).toBe(true);
      });
    });
  });
}
