/**
 * The one entry point both kinds of route use: a request body in, accepted and rejected messages out
 * (docs/tracking-api.md §5, §6.5, §8).
 */
import { type BatchRejection, type NormalizedMessage, type TrackingRoute } from '@tributary/contracts';
import { DEFAULT_INGEST_LIMITS, type IngestLimits } from '../ingest-limits';
import { failure, success, type IngestResult } from '../ingest-result';
import { parseTrackingBody, type ParsedTrackingBody } from '../parse/parse-tracking-body';
import { describeSentMessageId, normalizeMessage } from './normalize-message';

export interface NormalizeRequestInput {
  route: TrackingRoute;
  /** The inflated body, or what `parseTrackingBody` already made of it (to avoid parsing twice). */
  body: Buffer | Uint8Array | string | ParsedTrackingBody;
  /** Server clock on arrival; one value for the whole request (docs/tracking-api.md §7.1). */
  receivedAt: Date;
  /** Returns a fresh UUIDv4 for messages sent without a messageId (the app passes `crypto.randomUUID`). */
  generateId: () => string;
  limits?: IngestLimits;
  /** Client-side requests only: the device's address, for messages without `context.ip`. */
  clientIp?: string;
}

export interface AcceptedMessage {
  /** Position in the request: the `batch` index, or 0 on a single-event route. */
  index: number;
  message: NormalizedMessage;
}

export interface NormalizedRequest {
  route: TrackingRoute;
  /** In request order. Empty for an empty batch, which is still a success. */
  accepted: AcceptedMessage[];
  /** Batch routes only, in request order; the 200 body lists them (docs/tracking-api.md §6.5). Always empty on single routes. */
  rejected: BatchRejection[];
}

/**
 * - Whole-request problems (JSON, shape, sizes) are an error result with their code and status 400.
 * - Batch and import: each invalid message becomes an entry of `rejected` and the rest are accepted;
 *   messages past the 2,500th are rejected with `batch_too_long` without being looked at.
 * - Single-event routes: an invalid message is an error result (400) with the rule's code.
 */
export function normalizeRequest(input: NormalizeRequestInput): IngestResult<NormalizedRequest> {
  const { route, receivedAt, generateId, clientIp, limits = DEFAULT_INGEST_LIMITS } = input;
  if (!(receivedAt instanceof Date) || Number.isNaN(receivedAt.getTime())) {
    throw new TypeError('receivedAt must be a valid Date');
  }

  let parsed: ParsedTrackingBody;
  if (isParsedTrackingBody(input.body)) {
    if (input.body.route !== route) {
      throw new TypeError(`body was parsed for /v1/${input.body.route}, not /v1/${route}`);
    }
    parsed = input.body;
  } else {
    const parsing = parseTrackingBody(route, input.body, limits);
    if (!parsing.ok) return parsing;
    parsed = parsing.value;
  }

  if (parsed.kind === 'single') {
    const result = normalizeMessage(parsed.message, {
      routeType: parsed.route,
      receivedAt,
      generateId,
      clientIp,
    });
    if (!result.ok) return failure(result.code, result.message);
    return success({
      route,
      accepted: [{ index: 0, message: result.message }],
      rejected: [],
    });
  }

  const accepted: AcceptedMessage[] = [];
  const rejected: BatchRejection[] = [];
  parsed.items.forEach((item, index) => {
    if (index >= limits.maxMessagesPerBatch) {
      const messageId = describeSentMessageId(isRecord(item) ? item.messageId : undefined);
      rejected.push({
        index,
        ...(messageId !== undefined && { messageId }),
        code: 'batch_too_long',
        message: `A batch holds at most ${limits.maxMessagesPerBatch} messages; this one was not accepted`,
      });
      return;
    }
    const result = normalizeMessage(item, {
      batchContext: parsed.context,
      batchIntegrations: parsed.integrations,
      batchSentAt: parsed.sentAt,
      receivedAt,
      generateId,
      clientIp,
    });
    if (result.ok) {
      accepted.push({ index, message: result.message });
    } else {
      rejected.push({
        index,
        ...(result.messageId !== undefined && { messageId: result.messageId }),
        code: result.code,
        message: result.message,
      });
    }
  });
  return success({ route, accepted, rejected });
}

function isParsedTrackingBody(body: NormalizeRequestInput['body']): body is ParsedTrackingBody {
  return (
    typeof body === 'object' &&
    !(body instanceof Uint8Array) &&
    (body.kind === 'batch' || body.kind === 'single')
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
