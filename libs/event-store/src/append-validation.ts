import type { ExpectedRevision, NewEvent } from './event-store.port';

/**
 * Checks every adapter makes before touching its engine, so that a programming error fails the same
 * way everywhere instead of depending on what the engine happens to accept (KurrentDB takes an empty
 * append as a no-op, SQLite would write nothing and have no revision to report).
 */
export function assertAppendable(
  streamName: string,
  events: NewEvent[],
  expectedRevision: ExpectedRevision,
): void {
  if (typeof streamName !== 'string' || streamName.length === 0) {
    throw new TypeError('append: streamName must be a non-empty string');
  }
  if (!Array.isArray(events) || events.length === 0) {
    throw new RangeError(`append to ${streamName}: at least one event is required`);
  }
  if (
    expectedRevision !== 'no_stream' &&
    expectedRevision !== 'any' &&
    !(Number.isSafeInteger(expectedRevision) && expectedRevision >= 0)
  ) {
    throw new RangeError(
      `append to ${streamName}: expected revision must be 'no_stream', 'any' or a non-negative integer, got ${String(expectedRevision)}`,
    );
  }
}

/** Serializes one event's payloads; throws (before anything is written) when they are not JSON. */
export function serializeEventPayloads(event: NewEvent): { data: string; metadata: string } {
  const data = JSON.stringify(event.data);
  const metadata = JSON.stringify(event.metadata);
  if (typeof data !== 'string' || typeof metadata !== 'string') {
    throw new TypeError(`event ${event.type}: data and metadata must be JSON objects`);
  }
  return { data, metadata };
}

/** A page read must ask for at least one event, and a count every engine can take. */
export function assertPageSize(maxCount: number): void {
  if (!Number.isSafeInteger(maxCount) || maxCount < 1) {
    throw new RangeError(`readAllBackwards: maxCount must be a positive integer, got ${String(maxCount)}`);
  }
}
