/**
 * The four timestamps of a message (docs/tracking-api.md §7.1, §7.2).
 */
import { formatUtcMilliseconds, isWritableAsRfc3339, parseLenientTimestamp } from './lenient-timestamp';

export interface TimestampInputs {
  /** The message's `timestamp` as received, any JSON value. */
  messageTimestamp: unknown;
  /** The message's own `sentAt`, any JSON value. */
  messageSentAt: unknown;
  /** The batch envelope's `sentAt`; `undefined` on single-event routes (their body *is* the message). */
  batchSentAt: unknown;
  /** Server clock on arrival; the caller reads it once per request. */
  receivedAt: Date;
}

export interface ResolvedTimestamps {
  timestamp: string;
  originalTimestamp?: string;
  sentAt?: string;
  receivedAt: string;
}

/**
 * | inputs                           | timestamp                                       |
 * |----------------------------------|-------------------------------------------------|
 * | originalTimestamp and sentAt     | receivedAt − (sentAt − originalTimestamp)       |
 * | originalTimestamp only           | originalTimestamp                               |
 * | sentAt only, or neither          | receivedAt                                      |
 *
 * A batch-level `sentAt` wins over the message's; an unparseable one counts as absent, so the message's
 * own is used then. Unparseable values never reject a message.
 */
export function resolveTimestamps(inputs: TimestampInputs): ResolvedTimestamps {
  const receivedAtMs = inputs.receivedAt.getTime();
  if (!isWritableAsRfc3339(receivedAtMs)) {
    throw new RangeError('receivedAt must be a valid Date between years 0000 and 9999');
  }
  const originalMs = parseLenientTimestamp(inputs.messageTimestamp);
  const sentAtMs = parseBatchSentAt(inputs.batchSentAt) ?? parseLenientTimestamp(inputs.messageSentAt);

  let timestampMs: number;
  if (originalMs !== undefined && sentAtMs !== undefined) {
    const corrected = receivedAtMs - (sentAtMs - originalMs);
    // A wildly wrong sentAt (year 0001 against a 9999 timestamp) can push the correction past what RFC 3339
    // can write; the client's own event time is then the better answer than an error.
    timestampMs = isWritableAsRfc3339(corrected) ? corrected : originalMs;
  } else {
    timestampMs = originalMs ?? receivedAtMs;
  }

  return {
    timestamp: formatUtcMilliseconds(timestampMs),
    ...(originalMs !== undefined && { originalTimestamp: formatUtcMilliseconds(originalMs) }),
    ...(sentAtMs !== undefined && { sentAt: formatSentAt(sentAtMs) }),
    receivedAt: formatReceivedAt(receivedAtMs),
  };
}

/**
 * Remembers the last argument and result of a pure function. Every message of a batch has the same
 * batch `sentAt` and `receivedAt`, so these are parsed and formatted once per request instead of once
 * per message: the timestamps showed in the tracking API's CPU profile (BENCHMARKS.md).
 */
function rememberLast<Argument, Result>(
  compute: (argument: Argument) => Result,
): (argument: Argument) => Result {
  let hasLast = false;
  let lastArgument: Argument;
  let lastResult: Result;
  return (argument) => {
    if (!hasLast || !Object.is(argument, lastArgument)) {
      lastResult = compute(argument);
      lastArgument = argument;
      hasLast = true;
    }
    return lastResult;
  };
}

// Strings and numbers are compared by value, so a hit returns exactly what computing again would.
// One memory each: sentAt and receivedAt alternate for every message and would evict each other.
const parseBatchSentAt = rememberLast(parseLenientTimestamp);
const formatSentAt = rememberLast(formatUtcMilliseconds);
const formatReceivedAt = rememberLast(formatUtcMilliseconds);
