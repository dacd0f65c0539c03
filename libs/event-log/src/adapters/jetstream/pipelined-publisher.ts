import { createInbox, headers, Msg, NatsConnection, Subscription } from '@nats-io/nats-core';
import { EventLogUnavailableError } from '../../event-log.port';

interface PendingAck {
  resolve(ack: { sequence: number; duplicate: boolean }): void;
  reject(error: Error): void;
  deadline: number;
}

/**
 * Publishes to JetStream with many messages in flight over one reply subscription.
 *
 * The client's `js.publish` is a request per message: its own reply bookkeeping, a timer and an
 * Error object each, which under load cost more CPU than the publishing itself (`npm run bench`).
 * Here every publish carries `Nats-Msg-Id` and a reply subject under one wildcard inbox; PubAcks
 * are matched by a counter, and one sweep expires those not answered in time.
 */
export class PipelinedJetStreamPublisher {
  private readonly inbox = createInbox();
  private readonly pending = new Map<number, PendingAck>();
  private readonly subscription: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  private nextReplyId = 1;

  constructor(
    private readonly connection: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.subscription = connection.subscribe(`${this.inbox}.*`, {
      callback: (error, message) => this.onReply(error, message),
    });
    this.sweeper = setInterval(() => this.expireOverdue(), Math.max(10, Math.min(250, timeoutMs / 4)));
    this.sweeper.unref();
  }

  publish(
    subject: string,
    payload: string,
    messageId: string,
  ): Promise<{ sequence: number; duplicate: boolean }> {
    const replyId = this.nextReplyId++;
    const messageHeaders = headers();
    messageHeaders.set('Nats-Msg-Id', messageId);
    return new Promise((resolve, reject) => {
      this.pending.set(replyId, { resolve, reject, deadline: Date.now() + this.timeoutMs });
      try {
        this.connection.publish(subject, payload, {
          reply: `${this.inbox}.${replyId}`,
          headers: messageHeaders,
        });
      } catch (error) {
        this.pending.delete(replyId);
        reject(new EventLogUnavailableError('publish failed: NATS connection unusable', { cause: error }));
      }
    });
  }

  /** Fails every publish still waiting for its acknowledgement (the connection dropped: they may or may not be stored). */
  failPending(reason: string): void {
    const error = new EventLogUnavailableError(reason);
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    this.failPending('the JetStream event log is closed');
  }

  private onReply(error: Error | null, message: Msg): void {
    const replyId = Number(message.subject.slice(this.inbox.length + 1));
    const pending = this.pending.get(replyId);
    if (!pending) return;
    this.pending.delete(replyId);
    if (error) return pending.reject(new EventLogUnavailableError('publish failed', { cause: error }));
    // A status message instead of a PubAck: 503 means no stream listens on the subject.
    const status = message.headers?.code ?? 0;
    if (status >= 400) {
      return pending.reject(
        new EventLogUnavailableError(`JetStream answered ${status} ${message.headers?.description ?? ''}`),
      );
    }
    try {
      const ack = JSON.parse(message.string()) as {
        seq?: number;
        duplicate?: boolean;
        error?: { description?: string };
      };
      if (ack.error || typeof ack.seq !== 'number') {
        return pending.reject(
          new EventLogUnavailableError(
            `JetStream refused the message: ${ack.error?.description ?? 'no sequence'}`,
          ),
        );
      }
      pending.resolve({ sequence: ack.seq, duplicate: ack.duplicate === true });
    } catch (parseError) {
      pending.reject(
        new EventLogUnavailableError('unreadable JetStream acknowledgement', { cause: parseError }),
      );
    }
  }

  private expireOverdue(): void {
    const now = Date.now();
    // Insertion order is deadline order (one timeout for all), so the scan stops at the first live one.
    for (const [replyId, pending] of this.pending) {
      if (pending.deadline > now) return;
      this.pending.delete(replyId);
      pending.reject(
        new EventLogUnavailableError(`no JetStream acknowledgement within ${this.timeoutMs} ms`),
      );
    }
  }
}
