/**
 * From the inflated request body to a batch envelope or a single message (docs/tracking-api.md §5, §8), enforcing the
 * size limits that decide the whole request. Per-message rules (type, identity, ...) come later, in
 * `normalizeRequest`, because a batch keeps its valid messages.
 */
import {
  isBatchRoute,
  type BatchRoute,
  type JsonObject,
  type SingleEventRoute,
  type TrackingRoute,
} from '@tributary/contracts';
import { DEFAULT_INGEST_LIMITS, maxBodyBytesFor, type IngestLimits } from '../ingest-limits';
import { failure, success, type IngestResult } from '../ingest-result';
import { scanJsonLayout, type BatchItemsLayout } from './scan-json-layout';

export interface ParsedBatchBody {
  kind: 'batch';
  route: BatchRoute;
  /** The whole parsed JSON object, for write-key resolution (`resolveWriteKey`). */
  body: JsonObject;
  /** The `batch` array as sent; each item is checked and normalized on its own. */
  items: unknown[];
  /** Envelope `sentAt` as sent (any JSON value); it applies to every item when it parses. */
  sentAt: unknown;
  /** Envelope `context` and `integrations`, merged under each item's own; absent when missing or null. */
  context?: JsonObject;
  integrations?: JsonObject;
}

export interface ParsedSingleBody {
  kind: 'single';
  route: SingleEventRoute;
  /** The whole parsed JSON object, for write-key resolution (`resolveWriteKey`). */
  body: JsonObject;
  /** The message itself: on single-event routes the body is the message (plus `writeKey`). */
  message: JsonObject;
}

export type ParsedTrackingBody = ParsedBatchBody | ParsedSingleBody;

/**
 * Deeper JSON is refused with `invalid_request` [decision]. Nothing real nests this deep, and a deeper
 * value would make `JSON.stringify` (used to measure messages here and to store them later) overflow the
 * stack, turning bad input into a 500.
 */
export const MAX_JSON_NESTING_DEPTH = 512;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Order of checks: body size, UTF-8, JSON syntax, nesting, body shape, then (batch) each item's size.
 * Every failure refuses the whole request with 400; a message over the limit inside a batch also does,
 * as Segment documents.
 */
export function parseTrackingBody(
  route: TrackingRoute,
  rawBody: Buffer | Uint8Array | string,
  limits: IngestLimits = DEFAULT_INGEST_LIMITS,
): IngestResult<ParsedTrackingBody> {
  const maxBodyBytes = maxBodyBytesFor(route, limits);
  const byteLength = typeof rawBody === 'string' ? Buffer.byteLength(rawBody, 'utf8') : rawBody.byteLength;
  if (byteLength > maxBodyBytes) {
    return failure(
      'payload_too_large',
      `Request body is ${byteLength} bytes; the limit for /v1/${route} is ${maxBodyBytes} bytes`,
    );
  }

  let text: string;
  let bytes: Uint8Array;
  if (typeof rawBody === 'string') {
    text = rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody;
    bytes = Buffer.from(text, 'utf8');
  } else {
    bytes = rawBody;
    try {
      text = UTF8.decode(rawBody);
    } catch {
      return failure('invalid_json', 'Request body is not valid UTF-8');
    }
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return failure('invalid_json', `Request body is not valid JSON: ${(error as Error).message}`);
  }
  const layout = scanJsonLayout(bytes, MAX_JSON_NESTING_DEPTH);
  if (layout.maxDepth > MAX_JSON_NESTING_DEPTH) {
    return failure('invalid_request', `Request body nests deeper than ${MAX_JSON_NESTING_DEPTH} levels`);
  }
  if (!isJsonObject(parsed)) {
    return failure('invalid_request', `Request body must be a JSON object, got ${describeJsonType(parsed)}`);
  }

  if (!isBatchRoute(route)) {
    return success({ kind: 'single', route, body: parsed, message: parsed });
  }
  return parseBatchEnvelope(route, parsed, limits, layout.batchItems);
}

function parseBatchEnvelope(
  route: BatchRoute,
  body: JsonObject,
  limits: IngestLimits,
  itemsAsSent: BatchItemsLayout | null,
): IngestResult<ParsedTrackingBody> {
  const items = body.batch;
  if (!Array.isArray(items)) {
    return failure(
      'invalid_request',
      items === undefined || items === null
        ? 'Request body has no "batch" array'
        : `"batch" must be an array, got ${describeJsonType(items)}`,
    );
  }
  for (const field of ['context', 'integrations'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && !isJsonObject(value)) {
      return failure(
        'invalid_request',
        `Batch "${field}" must be a JSON object, got ${describeJsonType(value)}`,
      );
    }
  }

  // Measured on the compact re-serialisation, which the spec allows: it is never larger than what the
  // client measured (Python adds spaces and \u escapes), so a message the client accepted is never refused.
  // Re-serialising every item is costly, and only needed for some: without a number written with an
  // exponent, the compact form is never longer than the item as sent, so an item that fits as sent fits.
  const measuredAsSent = itemsAsSent?.byteLengths.length === items.length ? itemsAsSent : null;
  for (let index = 0; index < items.length; index += 1) {
    if (
      measuredAsSent !== null &&
      !measuredAsSent.hasExponent[index] &&
      measuredAsSent.byteLengths[index] <= limits.maxMessageBytes
    ) {
      continue;
    }
    const itemBytes = Buffer.byteLength(JSON.stringify(items[index]), 'utf8');
    if (itemBytes > limits.maxMessageBytes) {
      return failure(
        'payload_too_large',
        `Message at batch index ${index} is ${itemBytes} bytes; the limit is ${limits.maxMessageBytes} bytes`,
      );
    }
  }

  return success({
    kind: 'batch',
    route,
    body,
    items,
    sentAt: body.sentAt,
    ...(isJsonObject(body.context) && { context: body.context }),
    ...(isJsonObject(body.integrations) && { integrations: body.integrations }),
  });
}

/** A JSON object as `JSON.parse` builds it: not null, not an array. */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}
