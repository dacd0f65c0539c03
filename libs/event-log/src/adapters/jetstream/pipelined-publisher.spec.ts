import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { EventLogUnavailableError } from '../../event-log.port';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { parsePubAck, PipelinedJetStreamPublisher } from './pipelined-publisher';

describe('parsePubAck', () => {
  it.each([
    // Exactly as nats-server 2.x writes them (read off a real server).
    ['{"stream":"TRACKING", "seq":1}', { sequence: 1, duplicate: false }],
    ['{"stream":"TRACKING", "seq":1,"duplicate": true}', { sequence: 1, duplicate: true }],
    ['{"stream":"TRACKING","seq":9007199254740991}', { sequence: 9007199254740991, duplicate: false }],
    // Other shapes take the JSON.parse path and mean the same.
    ['{"stream":"TRACKING", "domain":"hub", "seq":7}', { sequence: 7, duplicate: false }],
    ['{"seq":3, "stream":"TRACKING", "duplicate":true}', { sequence: 3, duplicate: true }],
  ])('reads %s', (text, expected) => {
    expect(parsePubAck(text)).toEqual(expected);
  });

  it.each([
    [
      '{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"},"stream":"TRACKING","seq":0}',
    ],
    ['{"stream":"TRACKING"}'],
    ['not json'],
    [''],
  ])('refuses %s as not stored', (text) => {
    expect(parsePubAck(text)).toBeInstanceOf(EventLogUnavailableError);
  });
});

describe('PipelinedJetStreamPublisher on a real nats-server', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url });
    await (await jetstreamManager(connection)).streams.add({ name: 'FRAMES', subjects: ['frames.>'] });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  /** What the stream holds for a sequence: the payload text and the Nats-Msg-Id header. */
  async function stored(sequence: number): Promise<{ payload: string; messageId: string | undefined }> {
    const message = await (
      await jetstreamManager(connection)
    ).streams.getMessage('FRAMES', { seq: sequence });
    return { payload: message!.string(), messageId: message!.header.get('Nats-Msg-Id') };
  }

  const batch = (prefix: string) => [
    {
      subject: 'frames.a',
      payload: '{"city":"São Paulo","note":"東京 🚀"}',
      messageId: `${prefix}-événement-𝄞`,
    },
    { subject: 'frames.b', payload: '{"plain":true}', messageId: `${prefix}-plain` },
  ];

  it.each([
    ['one write of HPUB frames', (nc: NatsConnection) => nc],
    // A client without the internal writer: the publisher falls back to connection.publish per message.
    [
      'message by message',
      (nc: NatsConnection) =>
        new Proxy(nc, {
          get: (target, key) => {
            if (key === 'protocol') return undefined;
            const value: unknown = Reflect.get(target, key, target);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }),
    ],
  ])('%s: stores every payload and id byte for byte and answers duplicates', async (way, wrap) => {
    const publisher = new PipelinedJetStreamPublisher(wrap(connection), 2000);
    try {
      const messages = batch(way);
      const acks = await publisher.publishAll(messages);
      expect(acks.map((ack) => ack.duplicate)).toEqual([false, false]);
      for (const [index, ack] of acks.entries()) {
        expect(await stored(ack.sequence)).toEqual({
          payload: messages[index].payload,
          messageId: messages[index].messageId,
        });
      }
      const again = await publisher.publishAll(messages.slice(0, 1));
      expect(again).toEqual([{ sequence: acks[0].sequence, duplicate: true }]);
    } finally {
      publisher.close();
    }
  });

  it('refuses a message over the server max_payload before writing any of its batch', async () => {
    const publisher = new PipelinedJetStreamPublisher(connection, 2000);
    try {
      const tooLarge = 'x'.repeat(connection.info!.max_payload);
      const small = { subject: 'frames.a', payload: '{}', messageId: 'before-the-large-one' };
      await expect(
        publisher.publishAll([small, { subject: 'frames.a', payload: tooLarge, messageId: 'large' }]),
      ).rejects.toThrow(RangeError);
      const [ack] = await publisher.publishAll([small]);
      expect(ack.duplicate).toBe(false);
    } finally {
      publisher.close();
    }
  });
});
