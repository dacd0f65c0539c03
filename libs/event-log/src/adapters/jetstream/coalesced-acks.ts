import type { JsMsg } from '@nats-io/jetstream';

/**
 * Acks gathered and sent together once the current turn of the event loop has handled its I/O. The
 * NATS client flushes its outbound buffer in a microtask after each publish; deliveries finish on
 * separate socket callbacks, so acks sent as they come would cost one socket write each. Sent in a
 * `setImmediate`, every ack of one poll phase shares one write.
 */
export class CoalescedAcks {
  private pending: JsMsg[] = [];
  private scheduled = false;

  ack(message: JsMsg): void {
    this.pending.push(message);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Sends what is queued now (a subscription stopping must not leave acks behind). */
  flush(): void {
    this.scheduled = false;
    const messages = this.pending;
    this.pending = [];
    for (const message of messages) {
      try {
        message.ack();
      } catch {
        // The connection is closed: the message comes back after the ack wait, as after a crash.
      }
    }
  }
}
