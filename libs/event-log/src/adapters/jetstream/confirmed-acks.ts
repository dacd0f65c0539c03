import {
  createInbox,
  NoRespondersError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/nats-core';
import { rawFrameWriter, type RawFrameWriter } from './hpub-frames';

const ACK = new TextEncoder().encode('+ACK');
const FRAME_START = Buffer.from('PUB ');
const FRAME_END = Buffer.from(' 4\r\n+ACK\r\n');
const SPACE = 0x20;
const utf8 = new TextDecoder();

function textOf(subject: ReplySubject): string {
  return typeof subject === 'string' ? subject : utf8.decode(subject);
}

/** A delivery's reply subject: its bytes as the client received them, or the client's string. */
type ReplySubject = Uint8Array | string;

interface Waiting {
  sentAt: number;
  subject: ReplySubject;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Acks whose recording the server confirms (what `JsMsg.ackAck` does), without a request object, a
 * timer and an error per ack: `ackAck` makes a `RequestOne` whose settling always builds a
 * `RequestError` with its stack, which a replay paid for every message it sent. Here each ack carries a
 * reply subject under one inbox subscription shared by all, one timer checks for the overdue, and the
 * acks of one turn of the event loop share one socket write (as `CoalescedAcks` sends plain ones).
 *
 * Those acks go as one buffer of `PUB` frames where the client allows it (`rawFrameWriter`, as the
 * pipelined publisher's batches do): `publish` per ack built and encoded its protocol line with
 * `TextEncoder` and copied it into the outbound buffer: the acks were 6.5 % of the server's self time in
 * the PostgreSQL drain, 1.8 % as frames (BENCHMARKS.md). Without the writer, each ack is published on
 * its own. A delivery's reply subject is copied as the bytes the client received, not decoded into a
 * string per message (the client's `reply` accessor, 1.1 % of the same drain).
 */
export class ConfirmedAcks {
  private readonly inbox = createInbox();
  private readonly writeFrames: RawFrameWriter | null;
  private readonly waiting = new Map<string, Waiting>();
  private queued: Array<{ subject: ReplySubject; token: string }> = [];
  private scheduled = false;
  private nextToken = 0;
  private subscription: Subscription | undefined;
  private overdueTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.writeFrames = rawFrameWriter(connection);
  }

  /**
   * Acks the message delivered with this reply subject. Resolves once the server has recorded the ack
   * (at once for a message without one, as `ackAck` does); rejects after `timeoutMs` without an answer.
   */
  ack(replySubject: ReplySubject | undefined): Promise<void> {
    if (!replySubject || replySubject.length === 0) return Promise.resolve();
    this.listen();
    const token = String(this.nextToken++);
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(token, { sentAt: Date.now(), subject: replySubject, resolve, reject });
      this.queued.push({ subject: replySubject, token });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Sends what is queued now (a subscription stopping must not leave acks behind). */
  flush(): void {
    this.scheduled = false;
    const queued = this.queued;
    this.queued = [];
    if (queued.length === 0) return;
    if (this.writeFrames) {
      this.writeAll(this.writeFrames, queued);
      return;
    }
    for (const { subject, token } of queued) {
      try {
        this.connection.publish(textOf(subject), ACK, { reply: `${this.inbox}.${token}` });
      } catch (error) {
        this.settle(token, error);
      }
    }
  }

  /**
   * `PUB <subject> <reply> 4` and `+ACK` per ack, one buffer for all: what `publish` writes for each.
   * Subjects come from the server (a delivery's reply subject) and the inbox, so they hold no space or
   * line break; the size counts the payload's bytes alone.
   */
  private writeAll(
    write: RawFrameWriter,
    queued: ReadonlyArray<{ subject: ReplySubject; token: string }>,
  ): void {
    // The inbox and the tokens are ASCII (a NUID and digits): one byte per character.
    const inbox = `${this.inbox}.`;
    let size = 0;
    for (const { subject, token } of queued) {
      const subjectBytes = typeof subject === 'string' ? Buffer.byteLength(subject, 'utf8') : subject.length;
      size += FRAME_START.length + subjectBytes + 1 + inbox.length + token.length + FRAME_END.length;
    }
    const frames = Buffer.allocUnsafe(size);
    let offset = 0;
    for (const { subject, token } of queued) {
      offset += FRAME_START.copy(frames, offset);
      if (typeof subject === 'string') offset += frames.write(subject, offset, 'utf8');
      else {
        frames.set(subject, offset);
        offset += subject.length;
      }
      frames[offset++] = SPACE;
      offset += frames.write(inbox, offset, 'latin1');
      offset += frames.write(token, offset, 'latin1');
      offset += FRAME_END.copy(frames, offset);
    }
    try {
      write(frames);
    } catch (error) {
      // Closed or draining: nothing was written, as `publish` would have thrown for each.
      for (const { token } of queued) this.settle(token, error);
    }
  }

  private listen(): void {
    if (!this.subscription) {
      this.subscription = this.connection.subscribe(`${this.inbox}.*`, {
        callback: (error, reply) => this.answered(error, reply),
      });
    }
    if (!this.overdueTimer) {
      this.overdueTimer = setInterval(() => this.rejectOverdue(), Math.max(50, this.timeoutMs / 4));
      this.overdueTimer.unref();
    }
  }

  private answered(error: Error | null, reply: Msg): void {
    if (error) {
      // The subscription itself ended (the connection closed): no answer will come.
      for (const token of [...this.waiting.keys()]) this.settle(token, error);
      this.subscription = undefined;
      return;
    }
    const token = reply.subject.slice(this.inbox.length + 1);
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    this.settle(
      token,
      reply.headers?.code === 503 ? new NoRespondersError(textOf(waiting.subject)) : undefined,
    );
  }

  private rejectOverdue(): void {
    const overdueBefore = Date.now() - this.timeoutMs;
    for (const [token, waiting] of this.waiting) {
      if (waiting.sentAt <= overdueBefore) this.settle(token, new TimeoutError());
    }
    if (this.waiting.size === 0 && this.queued.length === 0) {
      clearInterval(this.overdueTimer);
      this.overdueTimer = undefined;
    }
  }

  private settle(token: string, error: unknown): void {
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    this.waiting.delete(token);
    if (error === undefined) waiting.resolve();
    else waiting.reject(error);
  }
}
