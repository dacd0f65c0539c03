import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { NoRespondersError, TimeoutError, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { ConfirmedAcks } from './confirmed-acks';

describe('ConfirmedAcks', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url, noAsyncTraces: true });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  it('resolves each ack once the server has recorded it, several sent in one turn', async () => {
    const manager = await jetstreamManager(connection);
    await manager.streams.add({ name: 'ACKS', subjects: ['acks.>'] });
    await manager.consumers.add('ACKS', { durable_name: 'reader', ack_policy: AckPolicy.Explicit });
    const client = jetstream(connection);
    for (let index = 0; index < 5; index += 1) await client.publish('acks.one', `message ${index}`);
    const consumer = await client.consumers.get('ACKS', 'reader');
    const batch = await consumer.fetch({ max_messages: 5, expires: 2_000 });
    const replies: string[] = [];
    for await (const message of batch) replies.push((message as unknown as { reply: string }).reply);
    expect(replies).toHaveLength(5);
    expect((await consumer.info()).num_ack_pending).toBe(5);

    const acks = new ConfirmedAcks(connection, 2_000);
    // A reply subject as the client's string or as the bytes it received.
    await Promise.all(replies.map((reply, index) => acks.ack(index % 2 === 0 ? reply : Buffer.from(reply))));

    const info = await consumer.info();
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(5);
  });

  /** `count` messages published to `stream` and fetched by a new durable consumer, unacked. */
  async function deliveredReplies(stream: string, consumerName: string, count: number) {
    const manager = await jetstreamManager(connection);
    await manager.streams
      .add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] })
      .catch(() => undefined);
    await manager.consumers.add(stream, {
      durable_name: consumerName,
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${stream.toLowerCase()}.${consumerName}`,
    });
    const client = jetstream(connection);
    for (let index = 0; index < count; index += 1)
      await client.publish(`${stream.toLowerCase()}.${consumerName}`, `message ${index}`);
    const consumer = await client.consumers.get(stream, consumerName);
    const replies: string[] = [];
    for await (const message of await consumer.fetch({ max_messages: count, expires: 2_000 }))
      replies.push((message as unknown as { reply: string }).reply);
    expect(replies).toHaveLength(count);
    return { consumer, replies };
  }

  /** Counts the answers the server sends to any inbox, as another connection sees them. */
  async function countAnswers(during: () => Promise<unknown>): Promise<number> {
    const observer = await connect({ servers: server.url });
    try {
      let answers = 0;
      observer.subscribe('_INBOX.>', { callback: () => (answers += 1) });
      await observer.flush();
      await during();
      // The observer's copies were sent before the awaited answers; one round trip more to read them.
      await observer.flush();
      return answers;
    } finally {
      await observer.close();
    }
  }

  it("answers one consumer's acks of one turn once, the last ack's answer settling them all", async () => {
    const { consumer, replies } = await deliveredReplies('RUNS', 'one', 20);
    const acks = new ConfirmedAcks(connection, 2_000);
    const answers = await countAnswers(() =>
      Promise.all(
        replies.map((reply, index) => acks.ack(index % 2 === 0 ? reply : Buffer.from(reply), 'one')),
      ),
    );
    expect(answers).toBe(1);
    const info = await consumer.info();
    expect(info.num_ack_pending).toBe(0);
    expect(info.ack_floor.stream_seq).toBe(20);
  });

  it('answers each consumer of a turn apart, and each ack without a consumer', async () => {
    const first = await deliveredReplies('RUNS', 'first', 6);
    const second = await deliveredReplies('RUNS', 'second', 6);
    const alone = await deliveredReplies('RUNS', 'alone', 3);
    const acks = new ConfirmedAcks(connection, 2_000);
    const answers = await countAnswers(() =>
      Promise.all(
        first.replies.flatMap((reply, index) => [
          acks.ack(reply, 'first'),
          acks.ack(second.replies[index]!, 'second'),
          ...(index < 3 ? [acks.ack(alone.replies[index]!)] : []),
        ]),
      ),
    );
    expect(answers).toBe(2 + 3);
    for (const { consumer } of [first, second, alone])
      expect((await consumer.info()).num_ack_pending).toBe(0);
  });

  it('rejects every ack of a run whose answer says nothing listens', async () => {
    const { replies } = await deliveredReplies('RUNS', 'refused', 3);
    const acks = new ConfirmedAcks(connection, 2_000);
    const outcomes = await Promise.allSettled([
      ...replies.map((reply) => acks.ack(reply, 'refused')),
      acks.ack('$JS.ACK.NOSUCH.nobody.1.1.1.0.0', 'refused'),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'rejected',
      'rejected',
      'rejected',
      'rejected',
    ]);
    for (const outcome of outcomes)
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(NoRespondersError);
  });

  it('answers acks queued after a flush apart from those before it', async () => {
    const { consumer, replies } = await deliveredReplies('RUNS', 'flushed', 4);
    const acks = new ConfirmedAcks(connection, 2_000);
    const answers = await countAnswers(async () => {
      const before = replies.slice(0, 2).map((reply) => acks.ack(reply, 'flushed'));
      acks.flush();
      const after = replies.slice(2).map((reply) => acks.ack(reply, 'flushed'));
      await Promise.all([...before, ...after]);
    });
    expect(answers).toBe(2);
    expect((await consumer.info()).num_ack_pending).toBe(0);
  });

  it('rejects with NoRespondersError when nothing listens on the ack subject', async () => {
    const acks = new ConfirmedAcks(connection, 2_000);
    await expect(acks.ack('$JS.ACK.NOSUCH.nobody.1.1.1.0.0')).rejects.toBeInstanceOf(NoRespondersError);
  });

  it('rejects with TimeoutError when no answer comes within the timeout', async () => {
    const silent = connection.subscribe('silent.responder', { callback: () => undefined });
    try {
      const acks = new ConfirmedAcks(connection, 200);
      const startedAt = Date.now();
      await expect(acks.ack('silent.responder')).rejects.toBeInstanceOf(TimeoutError);
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(200);
    } finally {
      silent.unsubscribe();
    }
  });

  it('resolves at once for a message without a reply subject, as ackAck does', async () => {
    const acks = new ConfirmedAcks(connection, 2_000);
    await expect(acks.ack(undefined)).resolves.toBeUndefined();
  });
});
