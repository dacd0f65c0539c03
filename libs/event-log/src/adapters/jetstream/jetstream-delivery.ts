import type { JsMsg } from '@nats-io/jetstream';
import type { Msg } from '@nats-io/nats-core';
import type { Delivery } from '../../event-log.port';
import { headerValue, rawFieldsOf, readReplyInfo, utf8Text, type ReplyInfo } from './raw-consumer-message';

const MESSAGE_ID_HEADER = Buffer.from('\r\nNats-Msg-Id:');

/** How a consumer settles its deliveries: shared by all of them, not closures per message. */
export interface DeliverySettling {
  /** `reply`: the message's reply subject as the client received it, where it was read (no decoding). */
  ack(message: JsMsg, reply?: Uint8Array): Promise<void>;
  nak(message: JsMsg, delayMs: number): Promise<void>;
  term(message: JsMsg, reason: string): Promise<void>;
}

/**
 * The subject last seen by a consumer and its tokens: a destination's consumer reads one source, so
 * its messages nearly all carry the same subject, decoded and split once rather than per message.
 */
export class SubjectTokens {
  private bytes: Uint8Array | undefined;
  private workspaceId = '';
  private sourceId = '';

  /** `tracking.<workspaceId>.<sourceId>` of the message (validated at publish). */
  read(message: JsMsg, raw: Uint8Array | undefined, into: { workspaceId: string; sourceId: string }): void {
    if (raw && this.bytes && sameBytes(raw, this.bytes)) {
      into.workspaceId = this.workspaceId;
      into.sourceId = this.sourceId;
      return;
    }
    const [, workspaceId = '', sourceId = ''] = message.subject.split('.');
    into.workspaceId = workspaceId;
    into.sourceId = sourceId;
    if (raw) {
      // A copy: the client's bytes are a view of a socket buffer.
      this.bytes = Uint8Array.from(raw);
      this.workspaceId = workspaceId;
      this.sourceId = sourceId;
    }
  }
}

/**
 * One delivery of a stored tracking message from a JetStream consumer. Its facts are read from the
 * bytes the client received (`raw-consumer-message.ts`), its payload parsed when first read, and its
 * settling goes through the consumer's shared `DeliverySettling`: one object per message, where the
 * client's accessors and a literal with three closures made a dozen.
 */
export class JetStreamDelivery implements Delivery {
  workspaceId = '';
  sourceId = '';
  messageId = '';
  sequence = 0;
  deliveryCount = 0;
  readonly storedPayload: Uint8Array;
  private storedAtMs = 0;
  private parsed: Record<string, unknown> | undefined;
  private publishedAtDate: Date | undefined;
  private reply: Uint8Array | undefined;

  private constructor(
    private readonly message: JsMsg,
    private readonly settling: DeliverySettling,
  ) {
    // A view of the bytes read from the socket, which nothing reuses; no copy.
    this.storedPayload = message.data;
  }

  static of(message: JsMsg, settling: DeliverySettling, subjects: SubjectTokens): JetStreamDelivery {
    const delivery = new JetStreamDelivery(message, settling);
    // `JsMsg` wraps the core message, which holds the raw fields.
    const raw = rawFieldsOf((message as unknown as { msg?: Msg }).msg);
    subjects.read(message, raw?.subject, delivery);
    if (raw && readReplyInfo(raw.reply, REPLY_INFO)) {
      delivery.reply = raw.reply;
      delivery.sequence = REPLY_INFO.streamSequence;
      delivery.deliveryCount = REPLY_INFO.deliveryCount;
      delivery.storedAtMs = REPLY_INFO.storedAtMs;
      delivery.messageId =
        raw.headerLength > 0 && raw.data ? headerValue(raw.data, raw.headerLength, MESSAGE_ID_HEADER) : '';
    } else {
      // The client keeps its raw fields elsewhere: its own accessors.
      delivery.sequence = message.seq;
      delivery.deliveryCount = message.info.deliveryCount;
      delivery.storedAtMs = message.time.getTime();
      delivery.messageId = message.headers?.get('Nats-Msg-Id') ?? '';
    }
    return delivery;
  }

  get payload(): Record<string, unknown> {
    if (this.parsed === undefined) {
      const data = this.storedPayload;
      this.parsed = JSON.parse(utf8Text(data, 0, data.length)) as Record<string, unknown>;
    }
    return this.parsed;
  }

  get publishedAt(): Date {
    this.publishedAtDate ??= new Date(this.storedAtMs);
    return this.publishedAtDate;
  }

  ack(): Promise<void> {
    return this.settling.ack(this.message, this.reply);
  }

  nak(delayMs = 0): Promise<void> {
    return this.settling.nak(this.message, delayMs);
  }

  term(reason: string): Promise<void> {
    return this.settling.term(this.message, reason);
  }
}

/** Reused for every message: read into, then copied onto the delivery. */
const REPLY_INFO: ReplyInfo = {
  deliveryCount: 0,
  streamSequence: 0,
  deliverySequence: 0,
  storedAtMs: 0,
  pending: 0,
};

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index += 1) if (a[index] !== b[index]) return false;
  return true;
}
