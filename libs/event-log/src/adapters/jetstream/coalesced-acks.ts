import type { JsMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { encodeAckFrames, type AckFrame } from './ack-frames';
import { rawFrameWriter, type RawFrameWriter } from './hpub-frames';

/**
 * Acks gathered and sent together once the current turn of the event loop has handled its I/O. The
 * NATS client flushes its outbound buffer in a microtask after each publish; deliveries finish on
 * separate socket callbacks, so acks sent as they come would cost one socket write each. Sent in a
 * `setImmediate`, every ack of one poll phase shares one write.
 *
 * That write is one buffer of `PUB` frames (`encodeAckFrames`), as `ConfirmedAcks` writes its own,
 * where `message.ack()` per message built and encoded a protocol line each, and decoded the reply
 * subject the client had received as bytes. Without a raw writer (a future client), each message is
 * acked through the client.
 */
export class CoalescedAcks {
  private readonly writeFrames: RawFrameWriter | null;
  /** Each a frame as it is (its reply subject), and the message for a client without a raw writer. */
  private pending: Array<AckFrame & { message: JsMsg }> = [];
  private scheduled = false;

  constructor(connection: NatsConnection) {
    this.writeFrames = rawFrameWriter(connection);
  }

  /** `reply`: the message's reply subject as the client received it, where it was read. */
  ack(message: JsMsg, reply?: Uint8Array): void {
    // A pulled message's reply subject is where its ack goes (`JsMsg` only types it on the class).
    const subject = reply ?? (message as JsMsg & { reply?: string }).reply;
    // Without one there is nowhere to send it (`message.ack()` sends nothing either).
    if (!subject) return;
    this.pending.push({ subject, message });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued now (a subscription stopping must not leave acks behind). */
  flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = [];
    if (pending.length === 0) return;
    try {
      if (this.writeFrames) this.writeFrames(encodeAckFrames(pending));
      else for (const { message } of pending) message.ack();
    } catch {
      // The connection is closed: the messages come back after the ack wait, as after a crash.
    }
  }
}
