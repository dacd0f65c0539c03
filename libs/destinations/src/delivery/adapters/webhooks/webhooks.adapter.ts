/**
 * Webhooks (spec §12.3): each message is POSTed as JSON to the configured URL. With a shared secret the
 * request carries `X-Signature`, the hex HMAC-SHA1 of the exact body bytes, keyed with the secret, so
 * the receiver can check the request came from us (Segment's receivers already verify it this way).
 *
 * Uses Node's global fetch (undici), whose default dispatcher keeps connections alive between requests.
 */
import { createHmac } from 'node:crypto';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  discard,
  retry,
  sameOutcomeForAll,
  type DeliveryAdapter,
  type DeliveryOutcome,
  type DeliveryRequest,
  type DeliveryResult,
} from '../../delivery-adapter.port';
import { classifyHttpStatus } from '../../http-response.classifier';

/** Segment's webhook timeout (spec §12.3). */
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** Segment's Actions-webhook batch sizes (spec §12.3). */
export const DEFAULT_WEBHOOK_BATCH_SIZE = 1_000;
export const MAX_WEBHOOK_BATCH_SIZE = 4_000;

/**
 * Headers the operator's `headers` setting cannot set: the HTTP layer owns the framing ones, the body is
 * always JSON, and a configured `X-Signature` would forge or mask ours.
 */
const HEADERS_OWNED_BY_THE_ADAPTER = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'x-signature',
]);

/** How much of an error response body is kept in the reason. */
const BODY_EXCERPT_CHARS = 200;

export interface WebhooksAdapterOptions {
  /** Per request, covering the response body too. Default 5 s (spec §12.3). */
  timeoutMs?: number;
  /** Requests in flight at once for one `deliver` call. Default 8. */
  maxConcurrentRequests?: number;
  /**
   * Post JSON arrays of up to `maxBatchSize` messages instead of one message per request. Off by default:
   * the catalog says webhooks does not batch, because receivers written for Segment expect one message.
   * In a batch only `body[0]` is signed (spec §12.3), and the response applies to every message in it.
   */
  batching?: { maxBatchSize?: number };
}

/** The webhook settings, checked: a destination that cannot be called gets a reason, not a crash. */
export interface WebhookTarget {
  url: URL;
  headers: Headers;
  sharedSecret?: string;
}

export class WebhooksDeliveryAdapter implements DeliveryAdapter {
  readonly slug = 'webhooks';
  private readonly timeoutMs: number;
  private readonly maxConcurrentRequests: number;
  private readonly batchSize: number | undefined;

  constructor(options: WebhooksAdapterOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.maxConcurrentRequests = Math.max(1, options.maxConcurrentRequests ?? 8);
    this.batchSize = options.batching
      ? Math.min(
          MAX_WEBHOOK_BATCH_SIZE,
          Math.max(1, options.batching.maxBatchSize ?? DEFAULT_WEBHOOK_BATCH_SIZE),
        )
      : undefined;
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    const target = readWebhookTarget(request.settings);
    if (typeof target === 'string') {
      return sameOutcomeForAll(request.messages, discard(`destination misconfigured: ${target}`));
    }
    if (this.batchSize !== undefined) {
      const batches = chunk(request.messages, this.batchSize);
      const outcomes = await mapWithConcurrency(batches, this.maxConcurrentRequests, (batch) =>
        this.sendBatch(target, batch),
      );
      return batches.flatMap((batch, index) => sameOutcomeForAll(batch, outcomes[index]!));
    }
    const outcomes = await mapWithConcurrency(request.messages, this.maxConcurrentRequests, (message) =>
      this.sendOne(target, message),
    );
    return request.messages.map((message, index) => ({ messageId: message.messageId, ...outcomes[index]! }));
  }

  /** POSTs one message; the signature covers the whole body. */
  sendOne(target: WebhookTarget, message: NormalizedMessage): Promise<DeliveryOutcome> {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    return this.post(target, body, body);
  }

  /** POSTs a JSON array of messages; only the first element's exact bytes are signed (spec §12.3). */
  sendBatch(target: WebhookTarget, messages: readonly NormalizedMessage[]): Promise<DeliveryOutcome> {
    const elements = messages.map((message) => Buffer.from(JSON.stringify(message), 'utf8'));
    const body = Buffer.concat([
      Buffer.from('['),
      ...elements.flatMap((element, index) => (index === 0 ? [element] : [Buffer.from(','), element])),
      Buffer.from(']'),
    ]);
    return this.post(target, body, elements[0] ?? Buffer.alloc(0));
  }

  async close(): Promise<void> {
    // Nothing to release: the global dispatcher's idle keep-alive sockets time out on their own.
  }

  private async post(target: WebhookTarget, body: Buffer, signedBytes: Buffer): Promise<DeliveryOutcome> {
    const headers = new Headers(target.headers);
    headers.set('content-type', 'application/json');
    if (target.sharedSecret !== undefined) {
      headers.set('x-signature', createHmac('sha1', target.sharedSecret).update(signedBytes).digest('hex'));
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await fetch(target.url, { method: 'POST', headers, body, signal, redirect: 'manual' });
      const succeeded = response.status >= 200 && response.status < 300;
      // A success's body is drained so the connection can be reused; a failure's keeps an excerpt.
      const excerpt = succeeded ? (await drain(response), '') : await readExcerpt(response);
      return classifyHttpStatus(response.status, response.headers.get('retry-after'), excerpt);
    } catch (error) {
      return this.outcomeOfRequestError(error, signal);
    }
  }

  private outcomeOfRequestError(error: unknown, signal: AbortSignal): DeliveryOutcome {
    if (signal.aborted || (error as { name?: unknown } | null)?.name === 'TimeoutError') {
      return retry(`timeout after ${this.timeoutMs} ms`);
    }
    return retry(`connection error: ${describeFetchError(error)}`);
  }
}

/** The checked settings, or why the destination cannot be called. */
export function readWebhookTarget(settings: Readonly<Record<string, unknown>>): WebhookTarget | string {
  const rawUrl = settings['url'];
  if (typeof rawUrl !== 'string' || rawUrl.trim() === '') return 'setting "url" is not set';
  let url: URL;
  try {
    url = new URL(rawUrl.trim());
  } catch {
    return 'setting "url" is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'setting "url" must be an http(s) URL';

  const headers = new Headers();
  // fetch refuses URLs with credentials; a `https://user:pass@host/` URL means Basic authentication.
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`);
    url.username = '';
    url.password = '';
  }
  const configuredHeaders = settings['headers'];
  if (configuredHeaders !== undefined && configuredHeaders !== null) {
    if (typeof configuredHeaders !== 'object' || Array.isArray(configuredHeaders)) {
      return 'setting "headers" must be a map of strings';
    }
    for (const [name, value] of Object.entries(configuredHeaders)) {
      if (typeof value !== 'string') return `header ${JSON.stringify(name)} must be a string`;
      if (HEADERS_OWNED_BY_THE_ADAPTER.has(name.trim().toLowerCase())) continue;
      try {
        headers.set(name, value);
      } catch {
        return `header ${JSON.stringify(name)} is not a valid HTTP header name and value`;
      }
    }
  }

  const secret = settings['shared_secret'];
  if (secret !== undefined && secret !== null && typeof secret !== 'string') {
    return 'setting "shared_secret" must be a string';
  }
  return { url, headers, ...(typeof secret === 'string' && secret !== '' ? { sharedSecret: secret } : {}) };
}

async function drain(response: Response): Promise<void> {
  try {
    await response.arrayBuffer();
  } catch {
    // The status already decided the outcome; a body cut short does not change it.
  }
}

/** The first characters of the body, whitespace collapsed, without reading a huge body to the end. */
async function readExcerpt(response: Response): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    while (bytes < BODY_EXCERPT_CHARS * 4) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      bytes += value.byteLength;
    }
  } catch {
    // Keep what arrived.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

/**
 * undici reports network failures as `TypeError: fetch failed` with the system error as its cause. Read
 * by shape, not `instanceof`: the errors may come from another realm (jest's sandbox, for one).
 */
function describeFetchError(error: unknown): string {
  const { message, cause } = (error ?? {}) as { message?: unknown; cause?: unknown };
  if (cause !== null && typeof cause === 'object') {
    const { code, message: causeMessage } = cause as { code?: unknown; message?: unknown };
    const text = typeof causeMessage === 'string' ? causeMessage : String(cause);
    return typeof code === 'string' && !text.includes(code) ? `${code} (${text})` : text;
  }
  return typeof message === 'string' ? message : String(error);
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** `map` with at most `limit` calls of `work` pending at once; results keep the input order. */
async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
