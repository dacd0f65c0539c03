import {
  createInbox,
  NoRespondersError,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/nats-core';
import { encodeAckFrames, textOf, type AckFrame, type ReplySubject } from './ack-frames';
import { rawFrameWriter, type RawFrameWriter } from './hpub-frames';

const ACK = new TextEncoder().encode('+ACK');

/**
 * The acks of one consumer queued in one turn: sent in order, the last alone asking for an answer,
 * and all settled by that answer.
 */
interface AckRun {
  subjects: ReplySubject[];
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

interface Waiting {
  sentAt: number;
  run: AckRun;
}

/**
 * Acks whose recording the server confirms (what `JsMsg.ackAck` does), without a request object, a
 * timer and an error per ack: `ackAck` makes a `RequestOne` whose settling always builds a
 * `RequestError` with its stack, which a replay paid for every message it sent. Here each answered ack
 * carries a reply subject under one inbox subscription shared by all, one timer checks for the
 * overdue, and the acks of one turn of the event loop share one socket write (as `CoalescedAcks` sends
 * plain ones).
 *
 * Of one consumer's acks in that write, only the last asks for an answer, and its answer settles them
 * all. nats-server queues a consumer's acks in the order they arrive on a connection and handles them
 * one at a time, answering an ack after it has recorded it (`pushAck` and `processAck` in its
 * `consumer.go`): the answer to the last of a run written together proves every ack before it
 * recorded. The server builds, and the client reads, one answer per run instead of one per ack: in
 * a consume-and-ack loop alone (`test/bench/consume-ack.measure.ts`), about 1.3 µs less CPU per
 * message in the client and 2.5 in nats-server (BENCHMARKS.md). Callers name the consumer (`group`);
 * acks without one are answered each.
 *
 * Those acks go as one buffer of `PUB` frames where the client allows it (`encodeAckFrames`, written as
 * the pipelined publisher's batches are). Without the writer, each ack is published on its own, in the
 * same order.
 */
export class ConfirmedAcks {
  private readonly inbox = createInbox();
  private readonly writeFrames: RawFrameWriter | null;
  private readonly waiting = new Map<string, Waiting>();
  /** This turn's runs, in the order their first ack came; an ack without a group is a run of its own. */
  private queued: AckRun[] = [];
  private readonly queuedOf = new Map<string, AckRun>();
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
   * `group` names the consumer the message came from: the acks of one consumer queued in the same turn
   * share one answer, and so one outcome.
   */
  ack(replySubject: ReplySubject | undefined, group?: string): Promise<void> {
    if (!replySubject || replySubject.length === 0) return Promise.resolve();
    this.listen();
    let run = group === undefined ? undefined : this.queuedOf.get(group);
    if (!run) {
      run = newRun();
      this.queued.push(run);
      if (group !== undefined) this.queuedOf.set(group, run);
    }
    run.subjects.push(replySubject);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return run.promise;
  }

  /** Sends what is queued now (a subscription stopping must not leave acks behind). */
  flush(): void {
    this.scheduled = false;
    const queued = this.queued;
    this.queued = [];
    this.queuedOf.clear();
    if (queued.length === 0) return;
    const sentAt = Date.now();
    const tokens = queued.map((run) => {
      const token = String(this.nextToken++);
      this.waiting.set(token, { sentAt, run });
      return token;
    });
    if (this.writeFrames) {
      this.writeAll(this.writeFrames, queued, tokens);
      return;
    }
    queued.forEach((run, index) => {
      const token = tokens[index]!;
      try {
        const last = run.subjects.length - 1;
        run.subjects.forEach((subject, position) =>
          this.connection.publish(
            textOf(subject),
            ACK,
            position === last ? { reply: `${this.inbox}.${token}` } : undefined,
          ),
        );
      } catch (error) {
        this.settle(token, error);
      }
    });
  }

  /** Every ack of the turn in one write, the last of each run asking for its answer. */
  private writeAll(write: RawFrameWriter, queued: readonly AckRun[], tokens: readonly string[]): void {
    const frames: AckFrame[] = [];
    queued.forEach((run, index) => {
      const last = run.subjects.length - 1;
      run.subjects.forEach((subject, position) =>
        frames.push(
          position === last ? { subject, answerTo: `${this.inbox}.${tokens[index]}` } : { subject },
        ),
      );
    });
    try {
      write(encodeAckFrames(frames));
    } catch (error) {
      // Closed or draining: nothing was written, as `publish` would have thrown for each.
      for (const token of tokens) this.settle(token, error);
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
      reply.headers?.code === 503 ? new NoRespondersError(textOf(waiting.run.subjects.at(-1)!)) : undefined,
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
    if (error === undefined) waiting.run.resolve();
    else waiting.run.reject(error);
  }
}

function newRun(): AckRun {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((resolveRun, rejectRun) => {
    resolve = resolveRun;
    reject = rejectRun;
  });
  return { subjects: [], promise, resolve, reject };
}
