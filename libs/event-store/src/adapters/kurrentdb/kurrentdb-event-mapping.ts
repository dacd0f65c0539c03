import {
  ANY,
  type AppendStreamState,
  type CurrentStreamState,
  ErrorType,
  NO_STREAM,
  type ResolvedEvent as KurrentResolvedEvent,
  type AllStreamResolvedEvent,
} from '@kurrent/kurrentdb-client';
import type { EventMetadata, ExpectedRevision, RecordedEvent } from '../../event-store.port';

/** Translation between our port's vocabulary and the KurrentDB client's; pure, so it is unit-tested. */

export function toKurrentStreamState(expectedRevision: ExpectedRevision): AppendStreamState {
  if (expectedRevision === 'no_stream') return NO_STREAM;
  if (expectedRevision === 'any') return ANY;
  return BigInt(expectedRevision);
}

/** The client reports the stream's actual state as `'no_stream'` or a bigint revision. */
export function fromKurrentCurrentState(actual: CurrentStreamState | undefined): number | 'no_stream' {
  if (typeof actual === 'bigint' && actual >= 0n) return Number(actual);
  return 'no_stream';
}

// Checked by `type` rather than `instanceof` so that an error from a second copy of the client package
// (or one rebuilt by the Rust bridge path) is still recognised.
export function isWrongExpectedVersionError(
  error: unknown,
): error is Error & { type: ErrorType.WRONG_EXPECTED_VERSION; actualState?: CurrentStreamState } {
  return hasErrorType(error, ErrorType.WRONG_EXPECTED_VERSION);
}

export function isStreamNotFoundError(error: unknown): boolean {
  return hasErrorType(error, ErrorType.STREAM_NOT_FOUND);
}

export function isAccessDeniedError(error: unknown): boolean {
  return hasErrorType(error, ErrorType.ACCESS_DENIED);
}

function hasErrorType(error: unknown, type: ErrorType): boolean {
  return typeof error === 'object' && error !== null && (error as { type?: unknown }).type === type;
}

/**
 * Positions at or above 2^63 are not positions: servers before 22.6 answer stream reads with the
 * largest unsigned 64-bit value where they do not know the commit position.
 */
const UNKNOWN_POSITION_FLOOR = 1n << 63n;

/** The commit position of an event, when the server told us. */
export function commitPositionOf(
  resolved: KurrentResolvedEvent | AllStreamResolvedEvent,
): bigint | undefined {
  const candidates = [resolved.commitPosition, resolved.event?.position?.commit];
  for (const candidate of candidates) {
    if (candidate === undefined || candidate === null) continue;
    const position = BigInt(candidate);
    if (position >= 0n && position < UNKNOWN_POSITION_FLOOR) return position;
  }
  return undefined;
}

/** System events (`$`-types, `$`-streams) and events that we cannot have written (not JSON objects). */
export function isForeignOrSystemEvent(resolved: KurrentResolvedEvent | AllStreamResolvedEvent): boolean {
  const event = resolved.event;
  if (!event) return true;
  if (event.type.startsWith('$') || event.streamId.startsWith('$')) return true;
  return !event.isJson || !isJsonObject(event.data);
}

/**
 * Converts an event that passed `isForeignOrSystemEvent`; `position` is given by the caller because
 * where it comes from (and what to do when it is missing) differs between reads and subscriptions.
 */
export function toRecordedEvent(
  resolved: KurrentResolvedEvent | AllStreamResolvedEvent,
  position: bigint,
): RecordedEvent {
  const event = resolved.event;
  if (!event) throw new Error('toRecordedEvent: resolved event without an event');
  return {
    streamName: event.streamId,
    type: event.type,
    data: event.data as Record<string, unknown>,
    metadata: toEventMetadata(event.metadata, event.created),
    revision: Number(event.revision),
    position,
  };
}

function toEventMetadata(metadata: unknown, created: Date | undefined): EventMetadata {
  if (isJsonObject(metadata)) return metadata as unknown as EventMetadata;
  // Only an event written by someone else lacks our metadata; say so instead of inventing an actor.
  return { actor: 'unknown', requestId: '', time: (created ?? new Date(0)).toISOString() };
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
