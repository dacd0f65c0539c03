import type { NatsConnection } from '@nats-io/nats-core';

/**
 * A whole batch of JetStream publishes as one write of NATS protocol frames.
 *
 * `connection.publish` per message builds its `HPUB` line as a string and encodes it, its headers and a
 * string payload each with `TextEncoder#encode`, which allocates a fresh ArrayBuffer per call however
 * short the text (Node 24 still does: several times the cost of `Buffer.from`, BENCHMARKS.md). Writing the documented frame
 * `HPUB <subject> <reply> <header bytes> <total bytes>\r\nNATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n<payload>\r\n`
 * for all messages at once, encoded once, is measurably cheaper per message (BENCHMARKS.md, phase 2).
 *
 * The write goes through the client's own outbound buffer (`protocol.sendCommand`, what `publish` itself
 * calls), so ordering, flushing and reconnect buffering stay the client's. That method is part of the
 * connection class but not of the `NatsConnection` interface: `rawFrameWriter` returns null when it is
 * missing (a future client), and callers then publish message by message. The `@nats-io/*` packages
 * are pinned to an exact version and pipelined-publisher.spec.ts fails on that fallback, so a client
 * upgrade cannot make it happen unnoticed.
 */
export type RawFrameWriter = (frames: Uint8Array) => void;

interface ConnectionInternals {
  protocol?: { sendCommand?: (command: Uint8Array) => void; noMorePublishing?: boolean };
}

export function rawFrameWriter(connection: NatsConnection): RawFrameWriter | null {
  const protocol = (connection as NatsConnection & ConnectionInternals).protocol;
  if (typeof protocol?.sendCommand !== 'function') return null;
  return (frames) => {
    // The checks `publish` makes before writing: a closed or draining connection takes no more messages.
    if (connection.isClosed() || protocol.noMorePublishing === true) {
      throw new Error('the NATS connection is closed or draining');
    }
    protocol.sendCommand!(frames);
  };
}

export interface FramedPublish {
  subject: string;
  messageId: string;
  /** The JSON text; it goes on the wire as UTF-8. */
  payload: string;
}

/** What makes a header value unusable in a frame: CR or LF would end the header early. */
const LINE_BREAK = /[\r\n]/;

/**
 * The frames of all `messages`, as one UTF-8 buffer, the reply subject of each being `replyPrefix` and
 * its index. Throws (writing nothing) when a message cannot be framed: a line break in its id, or a size
 * over the server's `max_payload`.
 */
export function encodePublishFrames(
  messages: readonly FramedPublish[],
  replyPrefix: string,
  maxPayloadBytes: number,
): Buffer {
  const frames = new Array<string>(messages.length);
  for (let index = 0; index < messages.length; index += 1) {
    const { subject, messageId, payload } = messages[index];
    if (LINE_BREAK.test(messageId)) throw new TypeError('a messageId cannot contain CR or LF');
    const headerBlock = `NATS/1.0\r\nNats-Msg-Id: ${messageId}\r\n\r\n`;
    const headerBytes = Buffer.byteLength(headerBlock, 'utf8');
    const totalBytes = headerBytes + Buffer.byteLength(payload, 'utf8');
    if (totalBytes > maxPayloadBytes) {
      throw new RangeError(
        `message ${messageId} is ${totalBytes} bytes with its headers; the server takes at most ${maxPayloadBytes}`,
      );
    }
    frames[index] =
      `HPUB ${subject} ${replyPrefix}${index} ${headerBytes} ${totalBytes}\r\n${headerBlock}${payload}\r\n`;
  }
  return Buffer.from(frames.join(''), 'utf8');
}
