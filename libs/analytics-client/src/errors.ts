/**
 * Every error the client reports is an `AnalyticsError` with a stable `code`, so callers can branch on the
 * code instead of parsing messages.
 */

export abstract class AnalyticsError extends Error {
  abstract readonly code: string;
}

export type AnalyticsValidationCode =
  | 'invalid_options'
  | 'invalid_argument'
  | 'missing_user_or_anonymous_id'
  | 'missing_user_id'
  | 'missing_previous_id'
  | 'missing_event'
  | 'missing_group_id'
  | 'invalid_field'
  | 'invalid_timestamp'
  | 'invalid_message_id'
  | 'not_serializable'
  | 'message_too_large';

/**
 * A call (or the client's options) is wrong. Thrown synchronously by the call that was given it, before
 * anything is queued: it is a programming mistake, found where it was made.
 */
export class AnalyticsValidationError extends AnalyticsError {
  override readonly name = 'AnalyticsValidationError';
  constructor(
    readonly code: AnalyticsValidationCode,
    message: string,
    /** The offending field, when one field is to blame. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * A valid message was not queued: the queue holds `maxQueueSize` messages already (`queue_full`), or the
 * client was closed (`client_closed`). Reported through the call's result and `onError`, never thrown.
 */
export class AnalyticsQueueError extends AnalyticsError {
  override readonly name = 'AnalyticsQueueError';
  constructor(
    readonly code: 'queue_full' | 'client_closed',
    message: string,
  ) {
    super(message);
  }
}

/** How a delivery failed. */
export type AnalyticsDeliveryFailure =
  /** The server answered with a status that is not a success. */
  | 'http_status'
  /** No answer: connection refused or reset, DNS failure and the like. */
  | 'network'
  /** No answer within `timeout` ms. */
  | 'timeout'
  /** No OAuth access token could be had from the token endpoint; the batch was never sent (docs/tracking-api.md §11.5). */
  | 'oauth';

/**
 * A batch could not be delivered: the server refused it for good (a 4xx other than 429), every attempt
 * failed (`maxRetries` retries of 429, 5xx, network errors and timeouts), or no OAuth access token could
 * be had for it (`failure: 'oauth'`; `status` is then the token endpoint's).
 */
export class AnalyticsDeliveryError extends AnalyticsError {
  override readonly name = 'AnalyticsDeliveryError';
  readonly code = 'delivery_failed';
  constructor(
    message: string,
    readonly details: {
      failure: AnalyticsDeliveryFailure;
      /** How many requests were made for this batch. */
      attempts: number;
      /** The HTTP status of the last answer, for `http_status` failures. */
      status?: number;
      /** The `code` of the tracking API's JSON error body (e.g. `invalid_write_key`), when there was one. */
      serverCode?: string;
      /** The raw text of the last answer's body (at most 1,000 characters). */
      responseBody?: string;
      /** The underlying error, for network failures. */
      cause?: unknown;
      /** For `oauth` failures: the token endpoint's RFC 6749 `error` (e.g. `invalid_client`), when it sent one. */
      oauthError?: string;
      /** For `oauth` failures: its `error_description`. */
      oauthErrorDescription?: string;
    },
  ) {
    super(message);
  }

  get status(): number | undefined {
    return this.details.status;
  }

  get attempts(): number {
    return this.details.attempts;
  }
}

/** One entry of the tracking API's `rejected` array (docs/tracking-api.md §6.5). */
export interface ServerRejection {
  index: number;
  messageId?: string;
  code: string;
  message: string;
}

/**
 * The server accepted the request (200) but refused some of its messages, listing them in `rejected`
 * (docs/tracking-api.md §6.5). The other messages of the batch were stored. Not retried: the same message would be
 * refused again.
 */
export class AnalyticsRejectedError extends AnalyticsError {
  override readonly name = 'AnalyticsRejectedError';
  readonly code = 'rejected_by_server';
  constructor(
    message: string,
    readonly rejections: readonly ServerRejection[],
  ) {
    super(message);
  }
}
