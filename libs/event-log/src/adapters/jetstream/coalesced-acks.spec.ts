import { AckPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { CoalescedAcks } from './coalesced-acks';

describe('CoalescedAcks', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url, noAsyncTraces: true });
    const manager = await jetstreamManager(connection);
    await manager.streams.add({ name: 'PLAIN', subjects: ['plain.>'] });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  async function delivered(consumerName: string, count: number) {
    const manager = await jetstreamManager(connection);
    await manager.consumers.add('PLAIN', {
      durable_name: consumerName,
      ack_policy: AckPolicy.Explicit,
      filter_subject: `plain.${consumerName}`,
    });
    const client = jetstream(connection);
    for (let index = 0; index < count; index += 1) await client.publish(`plain.${consumerName}`, `m${index}`);
    const consumer = await client.consumers.get('PLAIN', consumerName);
    const messages: JsMsg[] = [];
    for await (const message of await consumer.fetch({ max_messages: count, expires: 2_000 }))
      messages.push(message);
    expect(messages).toHaveLength(count);
    expect((await consumer.info()).num_ack_pending).toBe(count);
    return { consumer, messages };
  }

  /** Waits until the server has recorded every ack (they are not answered). */
  async function ackPendingReaches(consumer: { info(): Promise<{ num_ack_pending: number }> }) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      if ((await consumer.info()).num_ack_pending === 0) return 0;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return (await consumer.info()).num_ack_pending;
  }

  it('writes the acks of one turn together, from reply subjects given as bytes or read from the message', async () => {
    const { consumer, messages } = await delivered('mixed', 10);
    const acks = new CoalescedAcks(connection);
    messages.forEach((message, index) =>
      acks.ack(
        message,
        index % 2 === 0 ? Buffer.from((message as JsMsg & { reply: string }).reply) : undefined,
      ),
    );
    expect(await ackPendingReaches(consumer)).toBe(0);
    expect((await consumer.info()).ack_floor.stream_seq).toBeGreaterThanOrEqual(10);
  });

  it('sends what is queued on flush, and a closed connection loses the acks without throwing', async () => {
    const { consumer, messages } = await delivered('flushed', 3);
    const acks = new CoalescedAcks(connection);
    acks.ack(messages[0]!);
    acks.flush();
    await connection.flush();
    expect((await consumer.info()).num_ack_pending).toBe(2);

    const other = await connect({ servers: server.url });
    const closing = new CoalescedAcks(other);
    await other.close();
    closing.ack(messages[1]!);
    expect(() => closing.flush()).not.toThrow();
    expect((await consumer.info()).num_ack_pending).toBe(2);
  });
});
