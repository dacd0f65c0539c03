/**
 * Size and count limits of the tracking API (docs/tracking-api.md §8.3). All byte limits apply to the inflated body.
 */
import { isBatchRoute, type TrackingRoute } from '@tributary/contracts';

export interface IngestLimits {
  /** Largest batch or import body, after inflating. Only "larger than" is refused. */
  maxBatchBodyBytes: number;
  /** Largest single-event body (`/v1/track` and the others), after inflating. */
  maxSingleEventBodyBytes: number;
  /** Largest message inside a batch, measured on its compact re-serialisation. */
  maxMessageBytes: number;
  /** Messages past this many in one batch are reported as rejected (`batch_too_long`). */
  maxMessagesPerBatch: number;
}

/**
 * 512 KiB rather than Segment's 500 KB: legitimate Ruby (≈ 512,050 B) and Python (≈ 508 KB) batches
 * exceed the strict figure, and both clients drop a batch for good on a 400 (docs/tracking-api.md §8.3).
 */
export const MIN_BATCH_BODY_BYTES = 512 * 1024;

export const DEFAULT_INGEST_LIMITS: Readonly<IngestLimits> = Object.freeze({
  maxBatchBodyBytes: MIN_BATCH_BODY_BYTES,
  maxSingleEventBodyBytes: 32 * 1024,
  maxMessageBytes: 32 * 1024,
  maxMessagesPerBatch: 2500,
});

/**
 * Applies configured overrides. The batch limit may be raised but never lowered below 512 KiB, since a
 * lower one loses real clients' batches; a lower value is a configuration mistake and throws.
 */
export function resolveIngestLimits(overrides: Partial<IngestLimits> = {}): IngestLimits {
  const limits: IngestLimits = { ...DEFAULT_INGEST_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`ingest limit ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  if (limits.maxBatchBodyBytes < MIN_BATCH_BODY_BYTES) {
    throw new RangeError(
      `ingest limit maxBatchBodyBytes must be at least ${MIN_BATCH_BODY_BYTES} (512 KiB), got ${limits.maxBatchBodyBytes}`,
    );
  }
  return limits;
}

/** The largest inflated body a route accepts; also the gzip-bomb guard's stopping point. */
export function maxBodyBytesFor(route: TrackingRoute, limits: IngestLimits = DEFAULT_INGEST_LIMITS): number {
  return isBatchRoute(route) ? limits.maxBatchBodyBytes : limits.maxSingleEventBodyBytes;
}
