import {
  AckPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { NatsServerProcess } from '../../testing/nats-server.process';
import { TRACKING_STREAM } from './jetstream-event-log.adapter';
import { JetStreamDelivery, SubjectTokens, type DeliverySettling } from './jetstream-delivery';
import { readReplyInfo, type ReplyInfo } from './raw-consumer-message';

/** What the client's own accessors say about a message, as the consumer read it before. */
function byClient(message: JsMsg) {
  const [, workspaceId, sourceId] = message.subject.split('.');
  return {
    workspaceId,
    sourceId,
    messageId: message.headers?.get('Nats-Msg-Id') ?? '',
    sequence: message.seq,
    deliveryCount: message.info.deliveryCount,
    publishedAt: message.time.getTime(),
    payload: message.json<Record<string, unknown>>(),
    storedPayload: Buffer.from(message.data).toString('utf8'),
  };
}

function byDelivery(delivery: JetStreamDelivery) {
  return {
    workspaceId: delivery.workspaceId,
    sourceId: delivery.sourceId,
    messageId: delivery.messageId,
    sequence: delivery.sequence,
    deliveryCount: delivery.deliveryCount,
    publishedAt: delivery.publishedAt.getTime(),
    payload: delivery.payload,
    storedPayload: Buffer.from(delivery.storedPayload).toString('utf8'),
  };
}

/** Records what a delivery asked its consumer to do. */
function recordingSettling(): DeliverySettling & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    ack: async (message) => {
      calls.push(`ack ${message.seq}`);
    },
    nak: async (message, delayMs) => {
      calls.push(`nak ${message.seq} ${delayMs}`);
    },
    term: async (message, reason) => {
      calls.push(`term ${message.seq} ${reason}`);
    },
  };
}

describe('JetStreamDelivery on a real nats-server', () => {
  let server: NatsServerProcess;
  let connection: NatsConnection;
  let manager: JetStreamManager;

  beforeAll(async () => {
    server = await NatsServerProcess.start();
    connection = await connect({ servers: server.url });
    manager = await jetstreamManager(connection);
    await manager.streams.add({ name: TRACKING_STREAM, subjects: ['tracking.>'] });
    const client = jetstream(connection);
    const messages = [
      { subject: 'tracking.w1.s1', id: 'plain-id', payload: { type: 'track', event: 'Signed Up' } },
      {
        subject: 'tracking.w1.s1',
        id: 'ünïcödé id 🚀',
        payload: { type: 'identify', traits: { name: 'Zoë' } },
      },
      { subject: 'tracking.w1.s2', id: 'other source', payload: { type: 'page', name: 'Home' } },
      { subject: 'tracking.w2.s1', id: 'with: colon', payload: { type: 'track', event: 'x' } },
    ];
    for (const [index, message] of messages.entries()) {
      const headers = natsHeaders();
      // A header before the id, as another publisher might add one.
      if (index % 2 === 1) headers.set('X-Before', `value ${index}`);
      await client.publish(message.subject, JSON.stringify(message.payload), { msgID: message.id, headers });
    }
    await manager.consumers.add(TRACKING_STREAM, {
      durable_name: 'reader',
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30e9,
    });
  });

  afterAll(async () => {
    await connection?.close();
    await server?.dispose();
  });

  it('reads each message as the client does, first delivery and redelivery, across subject changes', async () => {
    const consumer = await jetstream(connection).consumers.get(TRACKING_STREAM, 'reader');
    const subjects = new SubjectTokens();
    const settling = recordingSettling();
    const compared: Array<{ expected: unknown; actual: unknown }> = [];
    let nakedOnce = false;
    for await (const message of await consumer.consume({ max_messages: 10 })) {
      const delivery = JetStreamDelivery.of(message, settling, subjects);
      compared.push({ expected: byClient(message), actual: byDelivery(delivery) });
      if (message.seq === 2 && !nakedOnce) {
        nakedOnce = true;
        await delivery.nak();
        message.nak();
      } else {
        await delivery.ack();
        message.ack();
      }
      if (compared.length === 5) break;
    }
    for (const { expected, actual } of compared) expect(actual).toEqual(expected);
    expect(compared.map(({ actual }) => (actual as { deliveryCount: number }).deliveryCount)).toContain(2);
    expect(compared.map(({ actual }) => (actual as { sourceId: string }).sourceId)).toEqual(
      expect.arrayContaining(['s1', 's2']),
    );
    expect(settling.calls).toContain('nak 2 0');
    expect(settling.calls.filter((call) => call.startsWith('ack'))).toHaveLength(4);
  });

  it("falls back on the client's accessors when the raw fields are not where it expects them", async () => {
    await manager.consumers.add(TRACKING_STREAM, {
      durable_name: 'fallback',
      ack_policy: AckPolicy.Explicit,
    });
    const consumer = await jetstream(connection).consumers.get(TRACKING_STREAM, 'fallback');
    const message = await consumer.next();
    expect(message).not.toBeNull();
    const expected = byClient(message!);
    // As another client version might hand it over: the public accessors, no raw fields behind them.
    const real = message!;
    const accessorsOnly = {
      get subject() {
        return real.subject;
      },
      get data() {
        return real.data;
      },
      get headers() {
        return real.headers;
      },
      get seq() {
        return real.seq;
      },
      get info() {
        return real.info;
      },
      get time() {
        return real.time;
      },
    } as unknown as JsMsg;
    const settling = recordingSettling();
    const delivery = JetStreamDelivery.of(accessorsOnly, settling, new SubjectTokens());
    await delivery.term('not wanted');
    real.term();
    expect(byDelivery(delivery)).toEqual(expected);
    expect(settling.calls).toEqual([`term ${expected.sequence} not wanted`]);
  });
});

describe('readReplyInfo', () => {
  const info = (): ReplyInfo => ({
    deliveryCount: 0,
    streamSequence: 0,
    deliverySequence: 0,
    storedAtMs: 0,
    pending: 0,
  });

  it('reads both reply layouts', () => {
    const read = info();
    expect(readReplyInfo(Buffer.from('$JS.ACK.TRACKING.c1.3.120.45.1732712345678901234.7'), read)).toBe(true);
    expect(read).toEqual({
      deliveryCount: 3,
      streamSequence: 120,
      deliverySequence: 45,
      storedAtMs: 1732712345678,
      pending: 7,
    });
    expect(
      readReplyInfo(Buffer.from('$JS.ACK.hub.ACCHASH.TRACKING.c1.1.9.8.1732712345000000000.0.token'), read),
    ).toBe(true);
    expect(read).toEqual({
      deliveryCount: 1,
      streamSequence: 9,
      deliverySequence: 8,
      storedAtMs: 1732712345000,
      pending: 0,
    });
  });

  it('refuses what is not a stored message', () => {
    for (const reply of [
      '',
      '_INBOX.abc.def',
      '$JS.ACK.TRACKING.c1.3.120',
      '$JS.ACK.TRACKING.c1.x.120.45.1732712345678901234.7',
      '$JS.ACK.TRACKING.c1.0.120.45.1732712345678901234.7',
      '$JS.ACK.TRACKING.c1.1..45.1732712345678901234.7',
      '$JS.ACK.a.b.c.d.e.f.g.h.i.j.k.l.m',
    ]) {
      expect(readReplyInfo(Buffer.from(reply), info())).toBe(false);
    }
  });
});
