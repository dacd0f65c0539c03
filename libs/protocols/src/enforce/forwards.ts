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
): TrackingMessage {
  const context = isObject(original.context) ? original.context : {};
  return {
    ...original,
    forwardedFromProject: sourceId,
    context: {
      ...context,
      // Exactly these three (R11): the forwarded copy reports where it came from and why, nothing else.
      protocols: { sourceId, violations, blocked_reason: reason },
    },
  };
}

/** R12: one `Violation Generated` track per violation, for `forwarding_violations_to`. */
export function violationForwards(
  message: TrackingMessage,
  violations: readonly Violation[],
  origin: ForwardingOrigin,
): TrackingMessage[] {
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
  return violations.map((violation, index) => ({
    type: 'track',
    event: 'Violation Generated',
    userId: 'schema-violations',
    messageId: violationMessageId(origin.source.id, message.messageId, index),
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
      violationType: violation.type,
      violationField: violation.field,
      violationDescription: violation.description,
    },
  }));
}

/**
 * `sch-` and 27 base62 characters derived from (source, message, violation index): the same
 * violation of the same message always gets the same id, so the log's dedupe drops a re-forward.
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
