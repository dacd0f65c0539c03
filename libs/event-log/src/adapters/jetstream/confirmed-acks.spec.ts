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
