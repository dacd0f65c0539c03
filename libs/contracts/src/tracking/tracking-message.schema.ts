/**
 * Tracking messages: lenient in, normalized out (docs/tracking-api.md §5, §6, §7).
 *
 * The `incoming*` schemas describe what the tracking API tolerates on the wire: ids as strings or numbers,
 * `null` anywhere an optional field may be, unknown keys, timestamps in any form (an unparseable one is
 * treated as absent, never rejected). They only check JSON types; the rules with their own error codes
 * (type, messageId, identity, event) are applied by `@tributary/ingest`.
 *
 * `normalizedMessageSchema` is what ingest produces and what the event log stores: ids are strings, nulls
 * are gone, `context` and `integrations` are always objects, and the four timestamps are RFC 3339 UTC
 * with milliseconds and `Z`.
 */
import { z } from 'zod';

/** Segment's documented cap (docs/tracking-api.md §6.3); longer ids are rejected, never truncated. */
export const MAX_MESSAGE_ID_LENGTH = 100;

/** A JSON object (not an array, not null). Values are data and are never looked into. */
export const jsonObjectSchema = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof jsonObjectSchema>;

/** Ids arrive as strings, or as JSON numbers that Tributary turns into strings (docs/tracking-api.md §6.1). */
export const incomingIdSchema = z.union([z.string(), z.number()]).nullish();

/** One message as a client may send it, inside a batch or as a single-event body. */
export const incomingMessageSchema = z.looseObject({
  /** Checked by ingest (code `invalid_type`); on single-event routes the path decides. */
  type: z.unknown().optional(),
  /** Checked by ingest (code `invalid_message_id`). */
  messageId: z.unknown().optional(),
  userId: incomingIdSchema,
  anonymousId: incomingIdSchema,
  groupId: incomingIdSchema,
  previousId: incomingIdSchema,
  /** Any value: an unparseable timestamp counts as absent (docs/tracking-api.md §7.2). */
  timestamp: z.unknown().optional(),
  sentAt: z.unknown().optional(),
  context: jsonObjectSchema.nullish(),
  integrations: jsonObjectSchema.nullish(),
  properties: jsonObjectSchema.nullish(),
  traits: jsonObjectSchema.nullish(),
  name: z.string().nullish(),
  category: z.string().nullish(),
  /** Required as a string on `track` only (code `missing_event`); other types keep it as an unknown key. */
  event: z.unknown().optional(),
});
export type IncomingMessage = z.infer<typeof incomingMessageSchema>;

/** The `/v1/batch` and `/v1/import` body (docs/tracking-api.md §5.2). Other top-level keys are ignored. */
export const incomingBatchEnvelopeSchema = z.looseObject({
  batch: z.array(z.unknown()),
  writeKey: z.unknown().optional(),
  sentAt: z.unknown().optional(),
  context: jsonObjectSchema.nullish(),
  integrations: jsonObjectSchema.nullish(),
});
export type IncomingBatchEnvelope = z.infer<typeof incomingBatchEnvelopeSchema>;

/** RFC 3339 in UTC with exactly three fraction digits and `Z`: `2026-11-25T21:15:05.320Z`. */
export const utcMillisecondTimestampSchema = z.iso.datetime({ precision: 3 });

const messageIdSchema = z
  .string()
  .min(1)
  .refine((id) => [...id].length <= MAX_MESSAGE_ID_LENGTH, {
    message: `messageId is longer than ${MAX_MESSAGE_ID_LENGTH} characters`,
  });

const commonNormalizedFields = {
  messageId: messageIdSchema,
  userId: z.string().min(1).optional(),
  anonymousId: z.string().min(1).optional(),
  context: jsonObjectSchema,
  integrations: jsonObjectSchema,
  /** Event time corrected for client clock skew (docs/tracking-api.md §7.2). */
  timestamp: utcMillisecondTimestampSchema,
  /** The message's `timestamp` as the client sent it; absent when it sent none that parses. */
  originalTimestamp: utcMillisecondTimestampSchema.optional(),
  /** The batch's `sentAt`, else the message's own; absent when neither parses. */
  sentAt: utcMillisecondTimestampSchema.optional(),
  /** Server clock on arrival, one value per request. */
  receivedAt: utcMillisecondTimestampSchema,
};

export const normalizedTrackMessageSchema = z.looseObject({
  type: z.literal('track'),
  event: z.string(),
  properties: jsonObjectSchema.optional(),
  ...commonNormalizedFields,
});
export const normalizedIdentifyMessageSchema = z.looseObject({
  type: z.literal('identify'),
  traits: jsonObjectSchema.optional(),
  ...commonNormalizedFields,
});
export const normalizedPageMessageSchema = z.looseObject({
  type: z.literal('page'),
  name: z.string().optional(),
  category: z.string().optional(),
  properties: jsonObjectSchema.optional(),
  ...commonNormalizedFields,
});
export const normalizedScreenMessageSchema = z.looseObject({
  type: z.literal('screen'),
  name: z.string().optional(),
  category: z.string().optional(),
  properties: jsonObjectSchema.optional(),
  ...commonNormalizedFields,
});
export const normalizedGroupMessageSchema = z.looseObject({
  type: z.literal('group'),
  groupId: z.string().optional(),
  traits: jsonObjectSchema.optional(),
  ...commonNormalizedFields,
});
export const normalizedAliasMessageSchema = z.looseObject({
  type: z.literal('alias'),
  previousId: z.string().optional(),
  ...commonNormalizedFields,
});

/**
 * A message as stored in the event log. Unknown keys are kept (the objects are loose), and at least one
 * of `userId` and `anonymousId` is present (docs/tracking-api.md §6.1).
 */
export const normalizedMessageSchema = z
  .discriminatedUnion('type', [
    normalizedTrackMessageSchema,
    normalizedIdentifyMessageSchema,
    normalizedPageMessageSchema,
    normalizedScreenMessageSchema,
    normalizedGroupMessageSchema,
    normalizedAliasMessageSchema,
  ])
  .refine((message) => message.userId !== undefined || message.anonymousId !== undefined, {
    message: 'userId or anonymousId is required',
  });
export type NormalizedMessage = z.infer<typeof normalizedMessageSchema>;
export type NormalizedTrackMessage = z.infer<typeof normalizedTrackMessageSchema>;
export type NormalizedIdentifyMessage = z.infer<typeof normalizedIdentifyMessageSchema>;
export type NormalizedPageMessage = z.infer<typeof normalizedPageMessageSchema>;
export type NormalizedScreenMessage = z.infer<typeof normalizedScreenMessageSchema>;
export type NormalizedGroupMessage = z.infer<typeof normalizedGroupMessageSchema>;
export type NormalizedAliasMessage = z.infer<typeof normalizedAliasMessageSchema>;
