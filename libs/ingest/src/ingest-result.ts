/**
 * Ingest never throws for bad input: every refusal is a value that carries the spec's error code and the
 * HTTP status to answer with, so the HTTP layer only has to render it (docs/tracking-api.md §9).
 * Thrown errors are reserved for programming mistakes (an invalid `receivedAt`, a limit set too low).
 */
import {
  TRACKING_ERROR_STATUS,
  type TrackingErrorCode,
  type TrackingErrorStatus,
} from '@tributary/contracts';

export interface TrackingRequestError {
  code: TrackingErrorCode;
  /** The status that goes with `code` in docs/tracking-api.md §9.2. */
  status: TrackingErrorStatus;
  /** A sentence for the developer; the HTTP layer sends it as both `message` and `error`. */
  message: string;
}

export type IngestResult<T> = { ok: true; value: T } | { ok: false; error: TrackingRequestError };

export function requestError(code: TrackingErrorCode, message: string): TrackingRequestError {
  return { code, status: TRACKING_ERROR_STATUS[code], message };
}

export function success<T>(value: T): IngestResult<T> {
  return { ok: true, value };
}

export function failure<T = never>(code: TrackingErrorCode, message: string): IngestResult<T> {
  return { ok: false, error: requestError(code, message) };
}
