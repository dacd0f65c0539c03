import {
  MAX_SEEN_ONCE_TTL_MS,
  type EventLogSettings,
  type LeaseValue,
  type MessagesToErase,
  type MessageToPublish,
  type TailOptions,
} from './event-log.port';

/**
 * Checks shared by both adapters, so that a value the embedded log accepts is never refused by
 * JetStream (whose subjects and consumer names have a restricted alphabet).
 */

/** A subject token: no separators (`.`), wildcards (`*`, `>`) or whitespace. */
const SUBJECT_TOKEN = /^[^\s.*>]+$/u;
/** JetStream durable names also exclude path separators; we keep to a plain, portable alphabet. */
const CONSUMER_NAME = /^[A-Za-z0-9_-]{1,128}$/;

export function assertValidSettings(settings: EventLogSettings): void {
  const { dedupeWindowMs, retentionMs } = settings;
  if (!Number.isFinite(dedupeWindowMs) || dedupeWindowMs <= 0) {
    throw new RangeError(`dedupe window must be a positive number of milliseconds, got ${dedupeWindowMs}`);
  }
  if (!Number.isFinite(retentionMs) || retentionMs <= 0) {
    throw new RangeError(`retention must be a positive number of milliseconds, got ${retentionMs}`);
  }
  if (settings.seenOnceCapacity !== undefined)
    assertPositiveInteger('seenOnceCapacity', settings.seenOnceCapacity);
  // An id remembered longer than its message is kept would point at nothing (JetStream refuses it too).
  if (dedupeWindowMs > retentionMs) {
    throw new RangeError(
      `dedupe window (${dedupeWindowMs} ms) must not exceed retention (${retentionMs} ms)`,
    );
  }
}

export function assertSubjectToken(kind: 'workspaceId' | 'sourceId' | 'functionId', value: string): void {
  if (typeof value !== 'string' || !SUBJECT_TOKEN.test(value)) {
    throw new TypeError(`${kind} ${JSON.stringify(value)} is empty or contains '.', '*', '>' or whitespace`);
  }
}

export function assertMessagesToErase(request: MessagesToErase): void {
  assertSubjectToken('workspaceId', request.workspaceId);
  request.sourceIds?.forEach((sourceId) => assertSubjectToken('sourceId', sourceId));
  if (request.field !== 'userId' && request.field !== 'anonymousId') {
    throw new TypeError(`messages are erased by userId or anonymousId, not ${JSON.stringify(request.field)}`);
  }
  if (!Array.isArray(request.subjectIds) || request.subjectIds.some((id) => typeof id !== 'string')) {
    throw new TypeError('subjectIds must be strings');
  }
}

export function assertConsumerName(consumerName: string): void {
  if (typeof consumerName !== 'string' || !CONSUMER_NAME.test(consumerName)) {
    throw new TypeError(
      `consumer name ${JSON.stringify(consumerName)} must be 1-128 characters of A-Z a-z 0-9 _ -`,
    );
  }
}

const LINE_BREAK = /[\r\n]/;

/**
 * Every message of a batch is checked; the subject tokens only where they change, since a request's
 * messages nearly always share one source, and two regex tests per message are on the hot path.
 */
export function assertValidMessages(messages: readonly MessageToPublish[]): void {
  let checked: MessageToPublish | undefined;
  for (const message of messages) {
    if (checked?.workspaceId !== message.workspaceId || checked.sourceId !== message.sourceId) {
      assertSubjectToken('workspaceId', message.workspaceId);
      assertSubjectToken('sourceId', message.sourceId);
      checked = message;
    }
    if (typeof message.messageId !== 'string' || message.messageId.length === 0) {
      throw new TypeError('messageId must be a non-empty string');
    }
    // It travels as the Nats-Msg-Id header, where a line break would end the header early.
    if (LINE_BREAK.test(message.messageId)) {
      throw new TypeError(`messageId ${JSON.stringify(message.messageId)} must not contain CR or LF`);
    }
    if (message.payload === null || typeof message.payload !== 'object' || Array.isArray(message.payload)) {
      throw new TypeError(`payload of message ${message.messageId} must be a JSON object`);
    }
  }
}

export function assertPositiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
}

export function assertLeaseName(name: string): void {
  if (typeof name !== 'string' || !CONSUMER_NAME.test(name)) {
    throw new TypeError(`lease name ${JSON.stringify(name)} must be 1-128 characters of A-Z a-z 0-9 _ -`);
  }
}

export function assertLeaseWrite(value: LeaseValue, expectedRevision: number): void {
  if (typeof value?.holder !== 'string') throw new TypeError('lease holder must be a string');
  if (value.data === null || typeof value.data !== 'object' || Array.isArray(value.data)) {
    throw new TypeError('lease data must be a JSON object');
  }
  if (!Number.isInteger(expectedRevision) || expectedRevision < 0) {
    throw new RangeError(`expected lease revision must be an integer >= 0, got ${expectedRevision}`);
  }
}

export function assertSeenOnce(key: string, ttlMs: number): void {
  if (typeof key !== 'string' || !CONSUMER_NAME.test(key)) {
    throw new TypeError(`seen-once key ${JSON.stringify(key)} must be 1-128 characters of A-Z a-z 0-9 _ -`);
  }
  if (!Number.isInteger(ttlMs) || ttlMs <= 0 || ttlMs > MAX_SEEN_ONCE_TTL_MS) {
    throw new RangeError(`seen-once ttl must be an integer of 1..${MAX_SEEN_ONCE_TTL_MS} ms, got ${ttlMs}`);
  }
}

export function assertTailOptions(options: TailOptions): void {
  assertSubjectToken('sourceId', options.sourceId);
  const after = options.afterSequence;
  if (after !== undefined && (!Number.isSafeInteger(after) || after < 0)) {
    throw new RangeError(`afterSequence must be a non-negative integer, got ${after}`);
  }
}
