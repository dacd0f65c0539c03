import { createInbox, Msg, MsgHdrsImpl, NatsConnection, Subscription } from '@nats-io/nats-core';
import { EventLogUnavailableError } from '../../event-log.port';
import { encodePublishFrames, rawFrameWriter, type FramedPublish, type RawFrameWriter } from './hpub-frames';

/** One message to publish: its subject, its id (`Nats-Msg-Id`) and its JSON text. */
export type PipelinedPublish = FramedPublish;

/**
 * How a batch reaches the server: `frames`, one write of HPUB frames through the client's internal
 * writer (hpub-frames.ts), or `message-by-message`, the fallback through the public `publish`.
 */
export type PublishPath = 'frames' | 'message-by-message';

export interface PubAck {
  sequence: number;
  duplicate: boolean;
}

/** One `publishAll` call: its acknowledgements arrive in any order and settle it together. */
interface PendingBatch {
  acks: PubAck[];
  remaining: number;
  deadline: number;
  resolve(acks: PubAck[]): void;
  reject(error: Error): void;
}

/**
 * Publishes to JetStream with many messages in flight over one reply subscription.
 *
 * The client's `js.publish` is a request per message: its own reply bookkeeping, a timer and an
 * Error object each, which under load cost more CPU than the publishing itself (BENCHMARKS.md).
 * Here every publish carries `Nats-Msg-Id` and a reply subject `<inbox>.<batch>.<index>` under one
 * wildcard inbox, so a batch of messages costs one promise and one bookkeeping entry; one sweep expires
 * batches not fully acknowledged in time.
 *
 * Two client internals are relied on: the connection's `protocol.sendCommand` (hpub-frames.ts) and the
 * header class `MsgHdrsImpl` (see `Utf8Headers`). Neither is in the client's public interface, so no
 * semver range promises them: package.json pins every `@nats-io/*` package to an exact version, and
 * pipelined-publisher.spec.ts fails when the installed client no longer takes the fast path (the
 * fallback works, only slower, so nothing else would notice). Raise the pin only with that test green.
 */
export class PipelinedJetStreamPublisher {
  private readonly inbox = createInbox();
  private readonly pending = new Map<number, PendingBatch>();
  private readonly subscription: Subscription;
  private readonly sweeper: NodeJS.Timeout;
  /** One write per batch where the client allows it (see hpub-frames.ts); null: message by message. */
  private readonly writeFrames: RawFrameWriter | null;
  private nextBatchId = 1;
  /** Batches written each way since the start: a fallback to `message-by-message` shows here. */
  readonly batchesWritten: Record<PublishPath, number> = { frames: 0, 'message-by-message': 0 };

  constructor(
    private readonly connection: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.subscription = connection.subscribe(`${this.inbox}.*.*`, {
      callback: (error, message) => this.onReply(error, message),
    });
    this.sweeper = setInterval(() => this.expireOverdue(), Math.max(10, Math.min(250, timeoutMs / 4)));
    this.sweeper.unref();
    this.writeFrames = rawFrameWriter(connection);
  }

  /** The path every batch takes, fixed at construction by what the client offers. */
  get path(): PublishPath {
    return this.writeFrames ? 'frames' : 'message-by-message';
  }

  /** Resolves with one PubAck per message, in order, once JetStream has stored (or deduplicated) them all. */
  publishAll(messages: readonly PipelinedPublish[]): Promise<PubAck[]> {
    if (messages.length === 0) return Promise.resolve([]);
    const batchId = this.nextBatchId++;
    return new Promise((resolve, reject) => {
      const batch: PendingBatch = {
        acks: new Array<PubAck>(messages.length),
        remaining: messages.length,
        deadline: Date.now() + this.timeoutMs,
        resolve,
        reject,
      };
      this.pending.set(batchId, batch);
      const replyPrefix = `${this.inbox}.${batchId}.`;
      try {
        if (this.writeFrames) {
          // The server's limit, as `publish` checks it; 1 MiB is nats-server's default before it has told us.
          const maxPayloadBytes = this.connection.info?.max_payload ?? 1024 * 1024;
          this.writeFrames(encodePublishFrames(messages, replyPrefix, maxPayloadBytes));
          this.batchesWritten.frames += 1;
        } else {
          this.publishOneByOne(messages, replyPrefix);
          this.batchesWritten['message-by-message'] += 1;
        }
      } catch (error) {
        // Those already written may still be stored; the caller must treat the batch as not acknowledged.
        this.pending.delete(batchId);
        reject(
          error instanceof TypeError || error instanceof RangeError
            ? error
            : new EventLogUnavailableError('publish failed: NATS connection unusable', { cause: error }),
        );
      }
    });
  }

  private publishOneByOne(messages: readonly PipelinedPublish[], replyPrefix: string): void {
    for (let index = 0; index < messages.length; index += 1) {
      const { subject, payload, messageId } = messages[index];
      const messageHeaders = new Utf8Headers();
      messageHeaders.set('Nats-Msg-Id', messageId);
      // Buffer.from, not the client's TextEncoder (see Utf8Headers).
      this.connection.publish(subject, Buffer.from(payload, 'utf8'), {
        reply: replyPrefix + index,
        headers: messageHeaders,
      });
    }
  }

  /** Fails every batch still waiting for acknowledgements (the connection dropped: they may or may not be stored). */
  failPending(reason: string): void {
    const error = new EventLogUnavailableError(reason);
    for (const batch of this.pending.values()) batch.reject(error);
    this.pending.clear();
  }

  close(): void {
    clearInterval(this.sweeper);
    this.subscription.unsubscribe();
    this.failPending('the JetStream event log is closed');
  }

  private onReply(error: Error | null, message: Msg): void {
    const [batchText, indexText] = message.subject.slice(this.inbox.length + 1).split('.');
    const batchId = Number(batchText);
    const batch = this.pending.get(batchId);
    const index = Number(indexText);
    if (!batch || !(index >= 0 && index < batch.acks.length) || batch.acks[index] !== undefined) return;
    const ack = error
      ? new EventLogUnavailableError('publish failed', { cause: error })
      : readPubAck(message);
    if (ack instanceof Error) {
      this.pending.delete(batchId);
      return batch.reject(ack);
    }
    batch.acks[index] = ack;
    batch.remaining -= 1;
    if (batch.remaining === 0) {
      this.pending.delete(batchId);
      batch.resolve(batch.acks);
    }
  }

  private expireOverdue(): void {
    const now = Date.now();
    // Insertion order is deadline order (one timeout for all), so the scan stops at the first live one.
    for (const [batchId, batch] of this.pending) {
      if (batch.deadline > now) return;
      this.pending.delete(batchId);
      batch.reject(
        new EventLogUnavailableError(
          `no JetStream acknowledgement within ${this.timeoutMs} ms for ${batch.remaining} of ${batch.acks.length} messages`,
        ),
      );
    }
  }
}

/**
 * Headers encoded with `Buffer.from` instead of the client's `TextEncoder#encode`, which allocates a
 * fresh ArrayBuffer per call (on Node 24 too), however short the text, and ran once per message.
 * Same bytes: both write UTF-8.
 */
class Utf8Headers extends MsgHdrsImpl {
  override encode(): Uint8Array {
    return Buffer.from(this.toString(), 'utf8');
  }
}

/** What nats-server writes: `{"stream":"TRACKING", "seq":42}`, then `,"duplicate": true` for a duplicate. */
const PUB_ACK = /^\{"stream":\s*"[^"\\]*",\s*"seq":\s*(\d+)\s*(,\s*"duplicate":\s*true\s*)?\}$/;

/** The PubAck in a reply, or why the message was not stored. */
function readPubAck(message: Msg): PubAck | EventLogUnavailableError {
  // A status message instead of a PubAck: 503 means no stream listens on the subject.
  const status = message.headers?.code ?? 0;
  if (status >= 400) {
    return new EventLogUnavailableError(`JetStream answered ${status} ${message.headers?.description ?? ''}`);
  }
  return parsePubAck(message.string());
}

/**
 * The common shapes are read with one regex (a JSON.parse of every ack shows in the tracking API's CPU
 * profile, BENCHMARKS.md); anything else (a domain, an error) goes through JSON.parse.
 */
export function parsePubAck(text: string): PubAck | EventLogUnavailableError {
  const common = PUB_ACK.exec(text);
  if (common) return { sequence: Number(common[1]), duplicate: common[2] !== undefined };
  try {
    const ack = JSON.parse(text) as { seq?: number; duplicate?: boolean; error?: { description?: string } };
    if (ack.error || typeof ack.seq !== 'number') {
      return new EventLogUnavailableError(
        `JetStream refused the message: ${ack.error?.description ?? 'no sequence'}`,
      );
    }
    return { sequence: ack.seq, duplicate: ack.duplicate === true };
  } catch (parseError) {
    return new EventLogUnavailableError('unreadable JetStream acknowledgement', { cause: parseError });
  }
}
