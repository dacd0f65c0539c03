/** A delivery's reply subject: its bytes as the client received them, or the client's string. */
export type ReplySubject = Uint8Array | string;

/** One ack to write: the delivery's reply subject, and where the server's answer goes (none asked). */
export interface AckFrame {
  subject: ReplySubject;
  /** ASCII (an inbox and a token). */
  answerTo?: string;
}

const FRAME_START = Buffer.from('PUB ');
const FRAME_END = Buffer.from(' 4\r\n+ACK\r\n');
const SPACE = 0x20;
const utf8 = new TextDecoder();

export function textOf(subject: ReplySubject): string {
  return typeof subject === 'string' ? subject : utf8.decode(subject);
}

/**
 * `PUB <subject> 4` (or `PUB <subject> <answerTo> 4`) and `+ACK` per ack, one buffer for all: what
 * `publish` writes for each, for a `RawFrameWriter` (`hpub-frames.ts`). `publish` per ack builds and
 * encodes its protocol line with `TextEncoder` and copies it into the outbound buffer: the acks were
 * 6.5 % of the server's self time in the PostgreSQL drain, 1.8 % as frames (BENCHMARKS.md). A reply
 * subject received as bytes is copied as such, not decoded into a string per message (the client's
 * `reply` accessor, 1.1 % of the same drain). Subjects come from the server (a delivery's reply
 * subject) and from an inbox, so they hold no space or line break.
 */
export function encodeAckFrames(acks: readonly AckFrame[]): Buffer {
  let size = 0;
  for (const { subject, answerTo } of acks) {
    const subjectBytes = typeof subject === 'string' ? Buffer.byteLength(subject, 'utf8') : subject.length;
    size += FRAME_START.length + subjectBytes + FRAME_END.length;
    if (answerTo !== undefined) size += 1 + answerTo.length;
  }
  const frames = Buffer.allocUnsafe(size);
  let offset = 0;
  for (const { subject, answerTo } of acks) {
    offset += FRAME_START.copy(frames, offset);
    if (typeof subject === 'string') offset += frames.write(subject, offset, 'utf8');
    else {
      frames.set(subject, offset);
      offset += subject.length;
    }
    if (answerTo !== undefined) {
      frames[offset++] = SPACE;
      offset += frames.write(answerTo, offset, 'latin1');
    }
    offset += FRAME_END.copy(frames, offset);
  }
  return frames;
}
