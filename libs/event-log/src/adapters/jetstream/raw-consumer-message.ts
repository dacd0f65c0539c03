import type { Msg } from '@nats-io/nats-core';

/**
 * A consumer message's facts read from the raw bytes the NATS client received, instead of through its
 * accessors: `JsMsg.info` decodes the reply subject into a string, splits it and builds an object,
 * `headers` decodes the header block into a map of arrays, and `subject` decodes another string, all
 * per message (the NATS client's per-message parsing was ~4 % of the router's CPU in the webhook
 * phases, BENCHMARKS.md). A reader returns false when the client does not hold the raw fields where
 * expected (another client version) or the message is not a stored message; the caller then uses the
 * client's accessors.
 */
export interface ReplyInfo {
  /** 1 on the first delivery. */
  deliveryCount: number;
  streamSequence: number;
  deliverySequence: number;
  /** When the stream stored the message, in milliseconds since the epoch. */
  storedAtMs: number;
  /** Messages the stream held beyond this one for the consumer. */
  pending: number;
}

/** The client's message fields read here (nats-core's `MsgImpl`). */
interface RawMessage {
  _msg?: { hdr?: number; reply?: Uint8Array; subject?: Uint8Array };
  _rdata?: Uint8Array;
}

const DOT = 0x2e;
const CARRIAGE_RETURN = 0x0d;
const ACK_PREFIX = Buffer.from('$JS.ACK.');
/** Where each token of a reply subject after the first starts; 12 tokens at most are read. */
const TOKEN_STARTS = new Int32Array(12);

/** The raw fields of a client message, or undefined when the client keeps them elsewhere. */
export function rawFieldsOf(
  message: Msg | undefined,
):
  | { reply: Uint8Array; subject: Uint8Array | undefined; headerLength: number; data: Uint8Array | undefined }
  | undefined {
  const raw = (message as unknown as RawMessage | undefined)?._msg;
  const reply = raw?.reply;
  if (!reply || !(reply instanceof Uint8Array) || typeof raw.hdr !== 'number') return undefined;
  const subject = raw.subject instanceof Uint8Array ? raw.subject : undefined;
  return { reply, subject, headerLength: raw.hdr, data: (message as unknown as RawMessage)._rdata };
}

/**
 * Reads a consumer message's reply subject,
 * `$JS.ACK.[<domain>.<account>.]<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>[.<token>]`,
 * into `into`. False when it is not one (a status message: heartbeat, flow control, error).
 */
export function readReplyInfo(reply: Uint8Array, into: ReplyInfo): boolean {
  if (reply.length < ACK_PREFIX.length) return false;
  for (let position = 0; position < ACK_PREFIX.length; position += 1)
    if (reply[position] !== ACK_PREFIX[position]) return false;
  // Token boundaries, kept in a reused array: the two layouts have 9 or 12 tokens (11 without the
  // trailing token).
  let dots = 0;
  for (let position = 0; position < reply.length && dots < TOKEN_STARTS.length; position += 1)
    if (reply[position] === DOT) TOKEN_STARTS[dots++] = position + 1;
  const tokens = dots + 1;
  let first: number;
  if (tokens === 9) first = 4;
  else if (tokens === 11 || tokens === 12) first = 6;
  else return false;
  const token = (index: number) =>
    parseDigits(reply, TOKEN_STARTS[index - 1], index < dots ? TOKEN_STARTS[index] - 1 : reply.length);
  into.deliveryCount = token(first);
  into.streamSequence = token(first + 1);
  into.deliverySequence = token(first + 2);
  // Nanoseconds beyond 2^53 lose their last digits in a double; milliseconds keep every digit.
  into.storedAtMs = Math.floor(token(first + 3) / 1e6);
  into.pending = token(first + 4);
  return (
    into.deliveryCount >= 1 &&
    into.streamSequence >= 0 &&
    into.deliverySequence >= 0 &&
    into.storedAtMs >= 0 &&
    into.pending >= 0
  );
}

/** The decimal number in `bytes[start, end)`; -1 if it is not one. */
function parseDigits(bytes: Uint8Array, start: number, end: number): number {
  if (end <= start) return -1;
  let value = 0;
  for (let position = start; position < end; position += 1) {
    const digit = bytes[position] - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The value of the header whose `\r\nName:` is `name` within the first `length` bytes of `data` (the
 * header block); '' if absent.
 */
export function headerValue(data: Uint8Array, length: number, name: Uint8Array): string {
  const end = Math.min(length, data.length);
  const first = name[0];
  search: for (let position = 0; position + name.length <= end; position += 1) {
    if (data[position] !== first) continue;
    for (let offset = 1; offset < name.length; offset += 1)
      if (data[position + offset] !== name[offset]) continue search;
    let valueStart = position + name.length;
    while (valueStart < end && (data[valueStart] === 0x20 || data[valueStart] === 0x09)) valueStart += 1;
    let valueEnd = valueStart;
    while (valueEnd < end && data[valueEnd] !== CARRIAGE_RETURN) valueEnd += 1;
    while (valueEnd > valueStart && (data[valueEnd - 1] === 0x20 || data[valueEnd - 1] === 0x09))
      valueEnd -= 1;
    // The client hands over slices of the socket's Buffers: decoded in place, without a view per id.
    return utf8Text(data, valueStart, valueEnd);
  }
  return '';
}

/** `bytes[start, end)` as UTF-8 text, without a view when `bytes` is a Buffer. */
export function utf8Text(bytes: Uint8Array, start: number, end: number): string {
  return bytes instanceof Buffer
    ? bytes.toString('utf8', start, end)
    : Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
}
