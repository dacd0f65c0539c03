/**
 * Turns a call's parameters into the wire message of the tracking API (docs/tracking-api.md §6), or refuses it with an
 * `AnalyticsValidationError`. Pure: the id generator and the clock are passed in.
 */
import { AnalyticsValidationError, type AnalyticsValidationCode } from './errors';
import { LIBRARY_NAME, VERSION } from './version';

export type EventType = 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias';

/** Ids may be numbers; they are sent as strings. */
export type Id = string | number;
export type JsonMap = Record<string, unknown>;
/** A Date is sent as UTC ISO-8601 (`…Z`); a string is sent exactly as given, its offset included. */
export type Timestamp = Date | string;

export interface CommonParams {
  /** Required unless `anonymousId` is given. */
  userId?: Id;
  /** Required unless `userId` is given. */
  anonymousId?: Id;
  context?: JsonMap;
  /** Destination name to on/off (or to destination options), e.g. `{ All: false, Mixpanel: true }`. */
  integrations?: JsonMap;
  /** When the event happened. Default: the time of the call. */
  timestamp?: Timestamp;
  /** The deduplication key: at most 100 characters. Default: a fresh UUIDv4. */
  messageId?: string;
}

export interface IdentifyParams extends CommonParams {
  traits?: JsonMap;
}

export interface TrackParams extends CommonParams {
  /** The event's name. Required, a non-empty string. */
  event: string;
  properties?: JsonMap;
}

export interface PageParams extends CommonParams {
  name?: string;
  category?: string;
  properties?: JsonMap;
}

export type ScreenParams = PageParams;

export interface GroupParams extends CommonParams {
  /** Required. */
  groupId: Id;
  traits?: JsonMap;
}

export interface AliasParams extends Omit<CommonParams, 'userId'> {
  /** The identity to alias to. Required. */
  userId: Id;
  /** The identity to alias from. Required. */
  previousId: Id;
}

export interface ParamsByType {
  identify: IdentifyParams;
  track: TrackParams;
  page: PageParams;
  screen: ScreenParams;
  group: GroupParams;
  alias: AliasParams;
}

/** A message as it is sent. */
export interface AnalyticsMessage {
  type: EventType;
  messageId: string;
  timestamp: string;
  userId?: string;
  anonymousId?: string;
  context: JsonMap & { library: { name: string; version: string } };
  integrations: JsonMap;
  event?: string;
  name?: string;
  category?: string;
  properties?: JsonMap;
  traits?: JsonMap;
  groupId?: string;
  previousId?: string;
}

/** A built message with its compact JSON and that JSON's size in UTF-8 bytes. */
export interface SerializedMessage {
  message: AnalyticsMessage;
  json: string;
  bytes: number;
}

/** The tracking API's per-message limit (docs/tracking-api.md §8.3): only larger messages are refused. */
export const MAX_MESSAGE_BYTES = 32 * 1024;
/** Segment's and Tributary's messageId limit, in characters (docs/tracking-api.md §6.3). */
export const MAX_MESSAGE_ID_LENGTH = 100;

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function refuse(code: AnalyticsValidationCode, text: string, field?: string): never {
  throw new AnalyticsValidationError(code, text, field);
}

function isPlainObject(value: unknown): value is JsonMap {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** An id as the wire wants it; absent for undefined, null and "" (an empty id identifies nobody). */
function readId(type: EventType, params: Record<string, unknown>, field: string): string | undefined {
  const value = params[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return refuse(
    'invalid_field',
    `${type}: "${field}" must be a string or a finite number, got ${describe(value)}`,
    field,
  );
}

function readObject(type: EventType, params: Record<string, unknown>, field: string): JsonMap | undefined {
  const value = params[field];
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value))
    refuse('invalid_field', `${type}: "${field}" must be a plain object, got ${describe(value)}`, field);
  return value;
}

function readString(type: EventType, params: Record<string, unknown>, field: string): string | undefined {
  const value = params[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    refuse('invalid_field', `${type}: "${field}" must be a string, got ${describe(value)}`, field);
  return value;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date';
  return typeof value === 'object'
    ? 'a non-plain object'
    : `${typeof value} ${JSON.stringify(value) ?? String(value)}`;
}

function readTimestamp(type: EventType, value: unknown, now: () => Date): string {
  if (value === undefined || value === null) return now().toISOString();
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime()))
      refuse('invalid_timestamp', `${type}: "timestamp" is an invalid Date`, 'timestamp');
    return value.toISOString();
  }
  if (typeof value === 'string') {
    // Sent verbatim, so an offset such as "-05:00" reaches the server as the caller wrote it.
    if (value.trim() === '' || Number.isNaN(Date.parse(value))) {
      refuse(
        'invalid_timestamp',
        `${type}: "timestamp" ${JSON.stringify(value)} is not an ISO-8601 date`,
        'timestamp',
      );
    }
    return value;
  }
  return refuse(
    'invalid_timestamp',
    `${type}: "timestamp" must be a Date or an ISO-8601 string, got ${describe(value)}`,
    'timestamp',
  );
}

function readMessageId(type: EventType, value: unknown, generateId: () => string): string {
  if (value === undefined || value === null || value === '') return generateId();
  if (typeof value !== 'string') {
    refuse(
      'invalid_message_id',
      `${type}: "messageId" must be a string, got ${describe(value)}`,
      'messageId',
    );
  }
  if (CONTROL_CHARACTER.test(value)) {
    refuse('invalid_message_id', `${type}: "messageId" must not contain control characters`, 'messageId');
  }
  const length = [...value].length;
  if (length > MAX_MESSAGE_ID_LENGTH) {
    refuse(
      'invalid_message_id',
      `${type}: "messageId" is ${length} characters long; the limit is ${MAX_MESSAGE_ID_LENGTH}`,
      'messageId',
    );
  }
  return value;
}

export interface BuildEnvironment {
  generateId: () => string;
  now: () => Date;
}

/** Validates a call and builds its wire message. Throws `AnalyticsValidationError`. */
export function buildMessage<T extends EventType>(
  type: T,
  params: ParamsByType[T],
  environment: BuildEnvironment,
): AnalyticsMessage {
  if (!isPlainObject(params))
    refuse('invalid_argument', `${type} needs an object of parameters, got ${describe(params)}`);
  const fields = params as unknown as Record<string, unknown>;

  const userId = readId(type, fields, 'userId');
  const anonymousId = readId(type, fields, 'anonymousId');
  if (type === 'alias') {
    if (userId === undefined)
      refuse('missing_user_id', 'alias needs "userId", the identity to alias to', 'userId');
    if (readId(type, fields, 'previousId') === undefined) {
      refuse('missing_previous_id', 'alias needs "previousId", the identity to alias from', 'previousId');
    }
  } else if (userId === undefined && anonymousId === undefined) {
    refuse('missing_user_or_anonymous_id', `${type} needs a non-empty "userId" or "anonymousId"`, 'userId');
  }

  const message: AnalyticsMessage = {
    type,
    messageId: readMessageId(type, fields.messageId, environment.generateId),
    timestamp: readTimestamp(type, fields.timestamp, environment.now),
    ...(userId !== undefined && { userId }),
    ...(anonymousId !== undefined && { anonymousId }),
    // The library's own name and version replace any caller value: they say which client sent the message.
    context: { ...readObject(type, fields, 'context'), library: { name: LIBRARY_NAME, version: VERSION } },
    integrations: readObject(type, fields, 'integrations') ?? {},
  };

  switch (type) {
    case 'track': {
      const event = fields.event;
      if (typeof event !== 'string' || event.trim() === '') {
        refuse(
          'missing_event',
          `track needs "event", the event's name, as a non-empty string; got ${describe(event)}`,
          'event',
        );
      }
      message.event = event;
      message.properties = readObject(type, fields, 'properties') ?? {};
      break;
    }
    case 'page':
    case 'screen': {
      const name = readString(type, fields, 'name');
      const category = readString(type, fields, 'category');
      if (name !== undefined) message.name = name;
      if (category !== undefined) message.category = category;
      message.properties = readObject(type, fields, 'properties') ?? {};
      break;
    }
    case 'identify':
      message.traits = readObject(type, fields, 'traits') ?? {};
      break;
    case 'group': {
      const groupId = readId(type, fields, 'groupId');
      if (groupId === undefined) refuse('missing_group_id', 'group needs "groupId"', 'groupId');
      message.groupId = groupId;
      message.traits = readObject(type, fields, 'traits') ?? {};
      break;
    }
    case 'alias':
      message.previousId = readId(type, fields, 'previousId');
      break;
  }
  return message;
}

/**
 * Serializes a message and measures it in UTF-8 bytes, the unit of the server's limit (a character
 * count would let multi-byte text through the check and fail at the server).
 */
export function serializeMessage(message: AnalyticsMessage): SerializedMessage {
  let json: string;
  try {
    json = JSON.stringify(message);
  } catch (error) {
    refuse(
      'not_serializable',
      `${message.type}: the message cannot be serialized to JSON (${(error as Error).message})`,
    );
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) {
    refuse(
      'message_too_large',
      `${message.type}: the message is ${bytes} bytes of JSON; the limit is ${MAX_MESSAGE_BYTES} bytes`,
    );
  }
  return { message, json, bytes };
}
