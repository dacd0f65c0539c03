/**
 * One message, lenient in, normalized out (docs/tracking-api.md §6, §7). Pure: the clock reading and the id generator
 * come from the caller.
 */
import {
  EVENT_TYPES,
  MAX_MESSAGE_ID_LENGTH,
  isEventType,
  type EventType,
  type JsonObject,
  type MessageRejectionCode,
  type NormalizedMessage,
} from '@tributary/contracts';
import { describeJsonType, isJsonObject } from '../parse/parse-tracking-body';
import { resolveTimestamps } from '../timestamps/resolve-timestamps';

export interface MessageNormalizationContext {
  /** Single-event routes: the type named by the path, which overrides the body's. Batches: undefined. */
  routeType?: EventType;
  /** Batch-level `context` and `integrations`, merged under the message's own (its keys win). */
  batchContext?: JsonObject;
  batchIntegrations?: JsonObject;
  /** Batch-level `sentAt` as sent; it wins over the message's own when it parses. */
  batchSentAt?: unknown;
  /** Server clock on arrival, read once per request by the caller. */
  receivedAt: Date;
  /** Returns a fresh UUIDv4 (the app passes `crypto.randomUUID`). */
  generateId: () => string;
  /**
   * The sending device's address, given only for requests from client-side libraries (browser,
   * mobile): it becomes `context.ip` when the message carries none, as Segment does. A server-side
   * library's address is its server's, not its user's, so those requests pass nothing.
   */
  clientIp?: string;
}

export type MessageNormalization =
  | {
      ok: true;
      message: NormalizedMessage;
    }
  | {
      ok: false;
      code: MessageRejectionCode;
      message: string;
      /** The messageId as sent (numbers as strings), to help the client find the message. */
      messageId?: string;
    };

/** Ids that may arrive as JSON numbers and are stored as strings (docs/tracking-api.md §6.1). */
const ID_FIELDS = ['userId', 'anonymousId', 'groupId', 'previousId'] as const;

/**
 * The JSON types `incomingMessageSchema` (the contract) requires of known fields, in its order, so the
 * first mistyped field named here is the one zod would name. Checked by hand on the hot path: zod walks
 * every key of `context` and `properties` to check a record, ~5 % of the tracking API's CPU in
 * `npm run bench`. A property test holds the two to the same verdicts (normalize-message.spec.ts).
 */
const KNOWN_FIELD_TYPES: ReadonlyArray<readonly [field: string, expected: ExpectedJsonType]> = [
  ['userId', 'id'],
  ['anonymousId', 'id'],
  ['groupId', 'id'],
  ['previousId', 'id'],
  ['context', 'object'],
  ['integrations', 'object'],
  ['properties', 'object'],
  ['traits', 'object'],
  ['name', 'string'],
  ['category', 'string'],
];

type ExpectedJsonType = 'id' | 'object' | 'string';

const EXPECTED_JSON_TYPE_NAMES: Readonly<Record<ExpectedJsonType, string>> = {
  id: 'a string or a number',
  object: 'a JSON object',
  string: 'a string',
};

function hasJsonType(value: unknown, expected: ExpectedJsonType): boolean {
  if (expected === 'string') return typeof value === 'string';
  if (expected === 'object') return isJsonObject(value);
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** The first known field whose value has the wrong JSON type (null counts as absent), with what it must be. */
export function findMistypedField(message: JsonObject): { field: string; expected: string } | undefined {
  for (const [field, expected] of KNOWN_FIELD_TYPES) {
    const value = message[field];
    if (value !== undefined && value !== null && !hasJsonType(value, expected)) {
      return { field, expected: EXPECTED_JSON_TYPE_NAMES[expected] };
    }
  }
  return undefined;
}

/**
 * Top-level keys that never reach the stored message:
 * - `writeKey`: a credential (single-event bodies carry it), so it must not be stored or forwarded.
 * - `_metadata`: Node's `{nodeVersion, jsRuntime}` describes the sending runtime, not the event. The spec
 *   says to tolerate it with no need to store it; dropping it keeps it out of every destination [decision].
 * - `receivedAt`, `originalTimestamp`: set by Tributary only (docs/tracking-api.md §7.1); a client's values are replaced.
 * `options` (Ruby's legacy field) is kept like any unknown key.
 */
const SERVER_OWNED_OR_DROPPED_KEYS = new Set(['writeKey', '_metadata', 'receivedAt', 'originalTimestamp']);

/** Keys written explicitly into the normalized message, so not copied over with the other fields. */
const RESOLVED_KEYS = new Set([
  'type',
  'messageId',
  'timestamp',
  'sentAt',
  'context',
  'integrations',
  ...ID_FIELDS,
]);

/**
 * Checks, in this order, each with its code: the message is a JSON object (`invalid_request`); its type
 * (`invalid_type`); its messageId (`invalid_message_id`); the JSON types of known fields (`invalid_request`);
 * `userId` or `anonymousId` present (`no_user_anon_id`); a track's string `event` (`missing_event`).
 */
export function normalizeMessage(raw: unknown, context: MessageNormalizationContext): MessageNormalization {
  if (!isJsonObject(raw)) {
    return {
      ok: false,
      code: 'invalid_request',
      message: `A message must be a JSON object, got ${describeJsonType(raw)}`,
    };
  }
  // null means absent for every top-level field (docs/tracking-api.md §6.4). Known fields are read in place rather than
  // copied (none of their names exists on Object.prototype, so a missing one reads as undefined).
  const field = (key: string): unknown => (raw[key] === null ? undefined : raw[key]);
  const sentMessageId = describeSentMessageId(field('messageId'));
  const reject = (code: MessageRejectionCode, text: string): MessageNormalization => ({
    ok: false,
    code,
    message: text,
    ...(sentMessageId !== undefined && { messageId: sentMessageId }),
  });

  const sentType = field('type');
  const type = context.routeType ?? sentType;
  if (!isEventType(type)) {
    return reject(
      'invalid_type',
      sentType === undefined
        ? `The message has no "type"; it must be one of ${EVENT_TYPES.join(', ')}`
        : `Unknown type ${JSON.stringify(sentType)}; it must be one of ${EVENT_TYPES.join(', ')}`,
    );
  }

  const messageIdCheck = checkMessageId(field('messageId'));
  if (!messageIdCheck.ok) return reject('invalid_message_id', messageIdCheck.problem);

  const mistyped = findMistypedField(raw);
  if (mistyped) {
    const value = raw[mistyped.field];
    const got = typeof value === 'number' ? 'a non-finite number' : describeJsonType(value);
    return reject('invalid_request', `Field "${mistyped.field}" must be ${mistyped.expected}, got ${got}`);
  }

  const ids: Partial<Record<(typeof ID_FIELDS)[number], string>> = {};
  for (const idField of ID_FIELDS) {
    const value = field(idField);
    // An empty id identifies nobody; keeping "" would merge every such user in destinations [decision].
    if (value !== undefined && value !== '') ids[idField] = String(value);
  }
  if (ids.userId === undefined && ids.anonymousId === undefined) {
    return reject('no_user_anon_id', 'A message needs a non-empty "userId" or "anonymousId"');
  }
  if (type === 'track' && typeof field('event') !== 'string') {
    return reject('missing_event', 'A track message needs "event" as a string');
  }

  const messageId = messageIdCheck.messageId ?? generateMessageId(context.generateId);
  const timestamps = resolveTimestamps({
    messageTimestamp: field('timestamp'),
    messageSentAt: field('sentAt'),
    batchSentAt: context.batchSentAt,
    receivedAt: context.receivedAt,
  });

  // Built in the order the stored JSON shows: type, messageId, ids, the client's other fields as sent,
  // then what Tributary merged and resolved.
  const normalized: JsonObject = { type, messageId, ...ids };
  for (const key in raw) {
    const value = raw[key];
    if (value === null || SERVER_OWNED_OR_DROPPED_KEYS.has(key) || RESOLVED_KEYS.has(key)) continue;
    // Plain assignment of "__proto__" would set the prototype instead of adding the key.
    if (key === '__proto__')
      Object.defineProperty(normalized, key, { value, enumerable: true, writable: true, configurable: true });
    else normalized[key] = value;
  }
  // Merged by top-level key, the message's own keys winning (docs/tracking-api.md §5.2). Spread copies own keys as data
  // properties, so "__proto__" inside these objects stays harmless too.
  normalized.context = mergeUnder(context.batchContext, field('context') as JsonObject | undefined);
  normalized.integrations = mergeUnder(
    context.batchIntegrations,
    field('integrations') as JsonObject | undefined,
  );
  if (context.clientIp !== undefined) fillClientIp(normalized.context as JsonObject, context.clientIp);
  Object.assign(normalized, timestamps);

  return {
    ok: true,
    message: normalized as NormalizedMessage,
  };
}

/**
 * The batch's object with the message's own keys over it. With nothing to merge the message's own object
 * is used as it is (it was parsed for this request alone), saving a copy per message.
 */
function mergeUnder(batchLevel: JsonObject | undefined, own: JsonObject | undefined): JsonObject {
  if (batchLevel === undefined) return own ?? {};
  return { ...batchLevel, ...own };
}

/** `context.ip` as sent wins; an absent, null or empty one is the client's address. */
function fillClientIp(messageContext: JsonObject, clientIp: string): void {
  const sent = messageContext.ip;
  if (sent === undefined || sent === null || sent === '') messageContext.ip = clientIp;
}

function generateMessageId(generateId: () => string): string {
  const id = generateId();
  if (typeof id !== 'string' || id === '' || [...id].length > MAX_MESSAGE_ID_LENGTH) {
    throw new TypeError(
      `generateId must return a non-empty string of at most ${MAX_MESSAGE_ID_LENGTH} characters`,
    );
  }
  return id;
}

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

type MessageIdCheck = { ok: true; messageId: string | undefined } | { ok: false; problem: string };

/** Absent, null or "": none sent, one will be generated. A finite number becomes a string. */
function checkMessageId(value: unknown): MessageIdCheck {
  if (value === undefined || value === '') return { ok: true, messageId: undefined };
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, messageId: String(value) };
  if (typeof value !== 'string') {
    return { ok: false, problem: `"messageId" must be a string, got ${describeJsonType(value)}` };
  }
  // The id becomes JetStream's Nats-Msg-Id header, whose client refuses CR and LF: accepting one would turn a
  // bad id into a 503 that every client retries forever. No real client puts control characters in an id,
  // so all of C0 and DEL are refused, on every adapter alike [decision].
  if (CONTROL_CHARACTER.test(value)) {
    return {
      ok: false,
      problem: '"messageId" must not contain control characters (U+0000 to U+001F, U+007F)',
    };
  }
  // Rejected rather than truncated: truncation could merge distinct ids into one dedupe key (docs/tracking-api.md §6.3).
  // Code points, not UTF-16 units; an id no longer than the limit in units is within it in code points.
  const length = value.length <= MAX_MESSAGE_ID_LENGTH ? value.length : [...value].length;
  if (length > MAX_MESSAGE_ID_LENGTH) {
    return {
      ok: false,
      problem: `"messageId" is ${length} characters long; the limit is ${MAX_MESSAGE_ID_LENGTH}`,
    };
  }
  return { ok: true, messageId: value };
}

/** The client's messageId for a rejection report, when it sent a usable-looking one. */
export function describeSentMessageId(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
