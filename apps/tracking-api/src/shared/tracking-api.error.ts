import { TRACKING_ERROR_STATUS, TrackingErrorCode } from '@tributary/contracts';

/** An error meant for the client as it is, in the tracking API's `{success, code, message, error}` shape. */
export class TrackingApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: TrackingErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'TrackingApiError';
    this.status = TRACKING_ERROR_STATUS[code];
  }
}
