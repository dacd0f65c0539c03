/**
 * The `/v1/batch` body, `{"batch":[…],"sentAt":"…","writeKey":"…"}` (docs/tracking-api.md §5.2), assembled from the
 * messages' JSON as serialized at call time, so that its size is known exactly before it is built.
 */
import type { SerializedMessage } from './message-builder';

/** Segment's documented batch limit; Tributary accepts 512 KiB, so this leaves room (docs/tracking-api.md §8). */
export const MAX_BATCH_BYTES = 500_000;

/** `Date#toISOString()` is always 24 characters (years 0 to 9999). */
const SENT_AT_LENGTH = 24;

export function buildEnvelope(
  messages: readonly SerializedMessage[],
  sentAt: Date,
  writeKey: string,
): string {
  return `{"batch":[${messages.map((entry) => entry.json).join(',')}],"sentAt":"${sentAt.toISOString()}","writeKey":${JSON.stringify(writeKey)}}`;
}

/** Bytes of the envelope around the messages: everything but their JSON and the commas between them. */
export function envelopeOverheadBytes(writeKey: string): number {
  return (
    Buffer.byteLength(`{"batch":[],"sentAt":"","writeKey":${JSON.stringify(writeKey)}}`, 'utf8') +
    SENT_AT_LENGTH
  );
}

/**
 * How many messages from the head of `queue` go into the next request: at most `batchSize`, and no more
 * than fit in `maxBatchBytes` with the envelope. Always at least one when the queue is not empty (a single
 * message is at most 32 KiB, far below the batch limit).
 */
export function nextBatchLength(
  queue: readonly SerializedMessage[],
  limits: { batchSize: number; maxBatchBytes: number; overheadBytes: number },
): number {
  let bytes = limits.overheadBytes;
  let count = 0;
  while (count < queue.length && count < limits.batchSize) {
    const added = queue[count].bytes + (count === 0 ? 0 : 1);
    if (count > 0 && bytes + added > limits.maxBatchBytes) break;
    bytes += added;
    count += 1;
  }
  return count;
}
