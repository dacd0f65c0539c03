/**
 * Response bodies of the tracking API (docs/tracking-api.md §6.5, §9).
 *
 * Every client reads these differently: Python needs `code` and `message` on every error or it retries,
 * Ruby needs a JSON object and reads `error`, Node ignores bodies. So the error body carries all three.
 */
import { z } from 'zod';

/** Codes that name why one message was refused (docs/tracking-api.md §6.5). */
export const MESSAGE_REJECTION_CODES = [
  'no_user_anon_id',
  'missing_event',
  'invalid_type',
  'invalid_message_id',
  // Tributary's own: a message that is not a JSON object, or whose known fields have the wrong JSON type
  // (for example `"context": "x"`). The spec's code table already uses `invalid_request` for a bad shape.
  'invalid_request',
] as const;
export type MessageRejectionCode = (typeof MESSAGE_REJECTION_CODES)[number];

/** Codes that can appear in a batch's `rejected` list: the message codes plus the 2,500-message cap. */
export const BATCH_REJECTION_CODES = [...MESSAGE_REJECTION_CODES, 'batch_too_long'] as const;
export type BatchRejectionCode = (typeof BATCH_REJECTION_CODES)[number];

/** Every error body `code` with its HTTP status (docs/tracking-api.md §9.2). */
export const TRACKING_ERROR_STATUS = Object.freeze({
  invalid_json: 400,
  invalid_request: 400,
  payload_too_large: 400,
  invalid_write_key: 401,
  unauthorized: 401,
  no_user_anon_id: 400,
  missing_event: 400,
  invalid_type: 400,
  invalid_message_id: 400,
  wrong_region: 400,
  // Tributary's own: no such route, or no source for the write key a settings request names.
  not_found: 404,
  // Tributary's own: a browser request from an origin the source does not list in `allowed_origins`.
  origin_not_allowed: 403,
  // Tributary's own: a tracking route asked with another method than POST (docs/tracking-api.md §3: wrong method 405).
  method_not_allowed: 405,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const);
export type TrackingErrorCode = keyof typeof TRACKING_ERROR_STATUS;
export type TrackingErrorStatus = (typeof TRACKING_ERROR_STATUS)[TrackingErrorCode];
export const TRACKING_ERROR_CODES = Object.keys(TRACKING_ERROR_STATUS) as [
  TrackingErrorCode,
  ...TrackingErrorCode[],
];

export const trackingErrorCodeSchema = z.enum(TRACKING_ERROR_CODES);

/** `{"success":false,"code":…,"message":…,"error":…}`: the only error shape the tracking API sends. */
export const trackingErrorBodySchema = z.strictObject({
  success: z.literal(false),
  code: trackingErrorCodeSchema,
  message: z.string(),
  error: z.string(),
});
export type TrackingErrorBody = z.infer<typeof trackingErrorBodySchema>;

/**
 * Builds the error body. `error` repeats `message` because Ruby reports only `error` to the developer,
 * and the explanation is what helps them.
 */
export function trackingErrorBody(code: TrackingErrorCode, message: string): TrackingErrorBody {
  return { success: false, code, message, error: message };
}

/** One refused message of a batch, by its 0-based position in the request's `batch` array. */
export const batchRejectionSchema = z.strictObject({
  index: z.number().int().nonnegative(),
  /** The messageId as the client sent it (numbers as strings); absent when it sent none usable. */
  messageId: z.string().optional(),
  code: z.enum(BATCH_REJECTION_CODES),
  message: z.string(),
});
export type BatchRejection = z.infer<typeof batchRejectionSchema>;

/**
 * The 200 body. `rejected` appears only when some message was refused. It has no `error` key on purpose:
 * Ruby treats a 200 body with `error` as a failure.
 */
export const trackingSuccessBodySchema = z.strictObject({
  success: z.literal(true),
  rejected: z.array(batchRejectionSchema).min(1).optional(),
});
export type TrackingSuccessBody = z.infer<typeof trackingSuccessBodySchema>;

export function trackingSuccessBody(rejected: readonly BatchRejection[] = []): TrackingSuccessBody {
  return rejected.length === 0 ? { success: true } : { success: true, rejected: [...rejected] };
}
