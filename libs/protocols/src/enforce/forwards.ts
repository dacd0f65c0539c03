import { createHash } from 'node:crypto';
import { isObject } from '../plan/compile-plan';
import type { BlockedReason, TrackingMessage, Violation } from '../protocols.types';

/** Who forwards: the source whose message was judged, and the plan it was judged by. */
export interface ForwardingOrigin {
  source: { id: string; slug: string; name: string };
  plan: { id: string; name: string };
  /** Processing time, RFC 3339 with milliseconds: `timestamp` and `receivedAt` of violation tracks. */
  now: string;
}

/** What Segment's Go clients send for a time that was never set. */
const ZERO_TIME = '0001-01-01T00:00:00Z';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const VIOLATION_ID_LENGTH = 27;

/**
 * R11: the copy of a blocked message for `forwarding_blocked_events_to`: the message as it came in
 * (before any omission), same `messageId` (so a client's retry is absorbed by dedupe), marked with
 * the source it came from and why it was blocked.
 */
export function blockedForward(
  original: TrackingMessage,
  sourceId: string,
  reason: BlockedReason,
  violations: readonly Violation[],
  violationsTruncated = 0,
): TrackingMessage {
  const context = isObject(original.context) ? original.context : {};
  return {
    ...original,
    forwardedFromProject: sourceId,
    context: {
      ...context,
      // The forwarded copy reports where it came from and why, nothing else (R11).
      protocols: {
        sourceId,
        violations,
        ...(violationsTruncated > 0 ? { violations_truncated: violationsTruncated } : {}),
        blocked_reason: reason,
      },
    },
  };
}

/**
 * R12: the `Violation Generated` track for `forwarding_violations_to`: one per message with
 * violations, whatever their number, so a message costs the violations source one append. Its
 * `violationType`, `violationField` and `violationDescription` are the first violation's, as in
 * Segment's one-per-violation tracks; `violations` lists them all (at most
 * `MAX_VIOLATIONS_PER_MESSAGE`) and `violationCount` says how many there were.
 */
export function violationForwards(
  message: TrackingMessage,
  violations: readonly Violation[],
  origin: ForwardingOrigin,
  violationsTruncated = 0,
): TrackingMessage[] {
  if (violations.length === 0) return [];
  const context = isObject(message.context) ? message.context : {};
  const app = isObject(context.app) ? context.app : null;
  const eventName =
    message.type === 'track'
      ? String(message.event ?? '')
      : message.type === 'page' || message.type === 'screen'
        ? typeof message.name === 'string'
          ? message.name
          : ''
        : '';
  const [first] = violations;
  return [
    {
      type: 'track',
      event: 'Violation Generated',
      userId: 'schema-violations',
      messageId: violationMessageId(origin.source.id, message.messageId, 0),
      integrations: {},
      context: { app: context.app ?? null, library: context.library },
      forwardedFromProject: origin.source.id,
      timestamp: origin.now,
      receivedAt: origin.now,
      properties: {
        appVersion: app && typeof app.version === 'string' ? app.version : '',
        eventMessageID: message.messageId,
        eventName,
        eventSentAt: typeof message.sentAt === 'string' ? message.sentAt : ZERO_TIME,
        eventTimestamp: typeof message.originalTimestamp === 'string' ? message.originalTimestamp : ZERO_TIME,
        eventType: message.type,
        sourceID: origin.source.id,
        sourceName: origin.source.name,
        sourceSlug: origin.source.slug,
        trackingPlanID: origin.plan.id,
        trackingPlanName: origin.plan.name,
        violationType: first.type,
        violationField: first.field,
        violationDescription: first.description,
        violations: violations.map(({ type, field, description }) => ({ type, field, description })),
        violationCount: violations.length + violationsTruncated,
      },
    },
  ];
}

/**
 * `sch-` and 27 base62 characters derived from (source, message, index): the same message always
 * gets the same id for its violations track (index 0), so the log's dedupe drops a re-forward.
 */
export function violationMessageId(sourceId: string, messageId: string, index: number): string {
  const digest = createHash('sha256').update(`${sourceId}\u0000${messageId}\u0000${index}`).digest();
  let value = BigInt(`0x${digest.subarray(0, 21).toString('hex')}`);
  let encoded = '';
  for (let position = 0; position < VIOLATION_ID_LENGTH; position += 1) {
    encoded = BASE62[Number(value % 62n)] + encoded;
    value /= 62n;
  }
  return `sch-${encoded}`;
}
