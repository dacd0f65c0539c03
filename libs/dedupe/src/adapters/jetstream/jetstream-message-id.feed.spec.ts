import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { createInbox, headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import fc from 'fast-check';
import type { MessageIdBatch } from '../../message-id.feed';
import { NatsServerProcess } from '@tributary/event-log/testing';
import { TRACKING_STREAM } from '@tributary/event-log';
import { JetStreamMessageIdFeed, parseIdMessage, type IdMessage } from './jetstream-message-id.feed';

const TRACKING_SUBJECTS = ['tracking.>'];

/** Ids as the tracking API lets them through: printable, no line breaks, no edge spaces. */
const messageIdArbitrary = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 80 })
  .filter((text) => !/[\u0000-\u001f\u007f]/.test(text) && text.trim() === text && text.length > 0);

describe('JetStreamMessageIdFeed on a real nats-server', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;
  let manager: JetStreamManager;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url });
    manager = await jetstreamManager(connection);
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  /** A new stream: a purge would keep the duplicate window, which refuses an id an earlier run used. */
  async function recreateStream(): Promise<void> {
    await manager.streams.delete(TRACKING_STREAM).catch(() => undefined);
    await manager.streams.add({ name: TRACKING_STREAM, subjects: TRACKING_SUBJECTS, duplicate_window: 1e9 });
  }

  beforeEach(recreateStream);

  async function publish(messageIds: readonly string[], extraHeader = false): Promise<void> {
    const client = jetstream(connection);
    for (const [position, messageId] of messageIds.entries()) {
      const headers = natsHeaders();
      if (extraHeader && position % 2 === 0) headers.set('X-Before', `value ${position}`);
      await client.publish(`tracking.w.s`, '{}', { msgID: messageId, headers });
    }
  }

  /** What the client's own accessors read from a headers-only consumer's messages. */
  async function readWithClient(count: number): Promise<IdMessage[]> {
    const consumer = await jetstream(connection).consumers.get(TRACKING_STREAM, { headers_only: true });
    const read: IdMessage[] = [];
    for await (const message of await consumer.consume()) {
      read.push({
        streamSequence: message.seq,
        deliverySequence: message.info.deliverySequence,
        pending: message.info.pending,
        messageId: message.headers?.get('Nats-Msg-Id') ?? '',
      });
      if (read.length === count) break;
    }
    return read;
  }

  /** The same messages read raw by `parseIdMessage`, from a push consumer like the feed's. */
  async function readRaw(count: number): Promise<IdMessage[]> {
    const inbox = createInbox();
    const read: IdMessage[] = [];
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const subscription = connection.subscribe(inbox, {
      callback: (_error, message: Msg) => {
        const parsed: IdMessage = { streamSequence: 0, deliverySequence: 0, pending: 0, messageId: '' };
        if (!parseIdMessage(message, parsed)) return;
        read.push(parsed);
        if (read.length === count) done();
      },
    });
    const info = await manager.consumers.add(TRACKING_STREAM, {
      deliver_subject: inbox,
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.None,
      headers_only: true,
    });
    await finished;
    subscription.unsubscribe();
    await manager.consumers.delete(TRACKING_STREAM, info.name);
    return read;
  }

  it('reads sequences, pending counts and Nats-Msg-Id from the raw bytes as the client reads them', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(messageIdArbitrary, { minLength: 1, maxLength: 20 }),
        fc.boolean(),
        async (messageIds, extraHeader) => {
          await recreateStream();
          await publish(messageIds, extraHeader);
          const raw = await readRaw(messageIds.length);
          expect(raw).toEqual(await readWithClient(messageIds.length));
          expect(raw.map((message) => message.messageId)).toEqual(messageIds);
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);

  it('hands every id over once and in order to a reader slower than the log (flow control held back)', async () => {
    const client = jetstream(connection);
    const messageIds = Array.from({ length: 20_000 }, (_, index) => `slow-${index}`);
    for (let start = 0; start < messageIds.length; start += 500) {
      await Promise.all(
        messageIds
          .slice(start, start + 500)
          .map((messageId) => client.publish('tracking.w.s', '{}', { msgID: messageId })),
      );
    }
    const feed = await JetStreamMessageIdFeed.connect(server.url);
    const read: string[] = [];
    const subscription = await feed.follow(1, async (batch) => {
      // Slow at first, so that the ids the consumer pushes pile up beyond what the feed buffers.
      if (read.length < 6_000) await new Promise((resolve) => setTimeout(resolve, 100));
      read.push(...batch.messageIds);
    });
    try {
      await waitUntil(() => read.length >= messageIds.length, 30_000);
      expect(read).toEqual(messageIds);
    } finally {
      await subscription.stop();
      await feed.close();
    }
  }, 60_000);

  it('describes the newest message still stored: the erased tail is no hole to wait for, an empty log is 0', async () => {
    const feed = await JetStreamMessageIdFeed.connect(server.url);
    try {
      expect(await feed.describe()).toMatchObject({ firstSequence: 0, lastSequence: 0 });
      await publish(['kept-1', 'erased-2', 'kept-3', 'erased-4', 'erased-5']);
      // A regulation erases messages anywhere in the log, its newest ones too.
      for (const sequence of [2, 4, 5]) await manager.streams.deleteMessage(TRACKING_STREAM, sequence, true);
      expect(await feed.describe()).toMatchObject({ firstSequence: 1, lastSequence: 3 });
      for (const sequence of [1, 3]) await manager.streams.deleteMessage(TRACKING_STREAM, sequence, true);
      expect(await feed.describe()).toMatchObject({ firstSequence: 0, lastSequence: 0 });
    } finally {
      await feed.close();
    }
  });

  it('goes on after the last id read, none lost or repeated, when its consumer is deleted', async () => {
    const feed = await JetStreamMessageIdFeed.connect(server.url);
    const first = Array.from({ length: 50 }, (_, index) => `first-${index}`);
    const second = Array.from({ length: 50 }, (_, index) => `second-${index}`);
    await publish(first);
    const batches: MessageIdBatch[] = [];
    const subscription = await feed.follow(1, async (batch) => {
      batches.push(batch);
    });
    const readIds = () => batches.flatMap((batch) => batch.messageIds);
    try {
      await waitUntil(() => readIds().length === first.length);
      const consumers = await (await manager.consumers.list(TRACKING_STREAM)).next();
      expect(consumers).toHaveLength(1);
      await manager.consumers.delete(TRACKING_STREAM, consumers[0].name);
      await publish(second);
      await waitUntil(() => readIds().length >= first.length + second.length, 20_000);
      expect(readIds()).toEqual([...first, ...second]);
      expect(batches.flatMap((batch) => batch.sequences)).toEqual(
        Array.from({ length: 100 }, (_, index) => index + 1),
      );
      expect(batches[batches.length - 1].remaining).toBe(0);
    } finally {
      await subscription.stop();
      await feed.close();
    }
  }, 30_000);
});

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
