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
  private pending: Array<{ message: JsMsg; frame: AckFrame | undefined }> = [];
  private scheduled = false;

  constructor(connection: NatsConnection) {
    this.writeFrames = rawFrameWriter(connection);
  }

  /** `reply`: the message's reply subject as the client received it, where it was read. */
  ack(message: JsMsg, reply?: Uint8Array): void {
    // A pulled message's reply subject is where its ack goes (`JsMsg` only types it on the class).
    const subject = reply ?? (message as JsMsg & { reply?: string }).reply;
    this.pending.push({ message, frame: subject ? { subject } : undefined });
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
    if (this.writeFrames && pending.every(({ frame }) => frame !== undefined)) {
      try {
        this.writeFrames(encodeAckFrames(pending.map(({ frame }) => frame!)));
      } catch {
        // The connection is closed: the messages come back after the ack wait, as after a crash.
      }
      return;
    }
    for (const { message } of pending) {
      try {
        message.ack();
      } catch {
        // The connection is closed: the message comes back after the ack wait, as after a crash.
      }
    }
  }
}
