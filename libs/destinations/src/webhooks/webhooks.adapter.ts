/**
 * Webhooks (docs/tracking-api.md §12.3): each message is POSTed as JSON to the configured URL. With a shared secret the
 * request carries `X-Signature`, the hex HMAC-SHA1 of the exact body bytes, keyed with the secret, so
 * the receiver can check the request came from us (Segment's receivers already verify it this way).
 *
 * Requests go through an undici `Agent` of the adapter's own (`dispatch` with a handler, keep-alive
 * connections per origin), not fetch nor `node:http`: per message, fetch's Request/Headers/AbortSignal
 * and web streams cost about as much CPU as the rest of the delivery together, and a `node:http`
 * request (ClientRequest, agent bookkeeping, header checks, stream events) about twice an undici
 * dispatch (`BENCH_CPU_PROFILE=1 npm run bench`, phases 3 and 4; BENCHMARKS.md). Redirects are not
 * followed (no redirect interceptor), so a receiver cannot bounce a request past the egress guard.
 *
 * Every connection goes through the egress guard (`../delivery/egress/guarded-dispatcher.ts`): its connector
 * resolves host names with the guard's `lookup`, so a socket connects only to an address the policy
 * allowed, and checks IP literals before the socket is made. What a loopback or private target
 * answers stays out of the reason: the tenant chose the URL, and it may point at one of the operator's
 * own services.
 *
 * With `signature_timestamp` on, the request also carries `X-Signature-Timestamp` (Unix seconds) and the
 * signature covers `<timestamp>.<signed bytes>`, so a receiver can refuse replays of an old request.
 * Off by default: receivers written for Segment check the signature of the body alone.
 *
 * One message per request, always: that is what Segment's webhook destination sends and what receivers
 * written for it parse, and the signature then covers every byte a receiver acts on. (Array batches
 * signed on their first element only were dropped: nothing enabled them, and a receiver could not
 * verify the rest of such a batch.)
 */
import { createHmac } from 'node:crypto';
import { validateHeaderName, validateHeaderValue, type IncomingHttpHeaders } from 'node:http';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  deletionOutcomeOf,
  discard,
  egressDenied,
  retry,
  sameOutcomeForAll,
  type UserDeletionOutcome,
  type UserDeletionRequest,
  type DeliveryAdapter,
  type AttemptResult,
  type DeliveryRequest,
  type DeliveryResult,
} from '../delivery/delivery-adapter.port';
import { classifyHttpStatus } from '../delivery/http-response.classifier';
import { EgressGuard, isEgressDenied } from '../delivery/egress/egress-guard';
import {
  GuardedDispatcher,
  type GuardedRequestController,
  type GuardedRequestHandler,
} from '../delivery/egress/guarded-dispatcher';
import { trimHttpWhitespace } from './http-whitespace';
import { problemWithWebhookHeaders } from './webhook-settings.validator';

/** Segment's webhook timeout (docs/tracking-api.md §12.3). */
export const WEBHOOK_TIMEOUT_MS = 5_000;

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
  'x-signature-timestamp',
]);

/** How much of an error response body is kept in the reason. */
const BODY_EXCERPT_CHARS = 200;

export interface WebhooksAdapterOptions {
  /** Per request, covering the response body too. Default 5 s (docs/tracking-api.md §12.3). */
  timeoutMs?: number;
  /** Requests in flight at once for one `deliver` call. Default 8. */
  maxConcurrentRequests?: number;
  /** The egress guard every connection goes through. Default: the `open` policy. */
  egressGuard?: EgressGuard;
  /** The clock of `X-Signature-Timestamp`, in milliseconds. */
  now?: () => number;
}

/** The webhook settings, checked: a destination that cannot be called gets a reason, not a crash. */
export interface WebhookTarget {
  /**
   * `url` as undici dispatches it (origin, then path with query) and its host name: worked out once per
   * settings object, not per request (reading a URL's parts makes objects and strings every time).
   */
  origin: string;
  path: string;
  hostname: string;
  /**
   * Every request's headers but the signature's, lower-case names: `content-type`, `authorization` from
   * credentials in the URL, then the `headers` setting. Shared by the requests (undici only reads them).
   */
  headers: Readonly<Record<string, string>>;
  sharedSecret?: string;
  /** Sign `<unix seconds>.<body>` and send the seconds as `X-Signature-Timestamp`. */
  signatureTimestamp: boolean;
}

export class WebhooksDeliveryAdapter implements DeliveryAdapter {
  readonly slug = 'webhooks';
  private readonly timeoutMs: number;
  private readonly maxConcurrentRequests: number;
  private readonly now: () => number;
  /**
   * Connections kept open between requests, per origin (undici honours the receiver's `Keep-Alive:
   * timeout`). New connections resolve through the guard; a kept-alive one stays with the address
   * checked when it opened.
   */
  private readonly dispatcher: GuardedDispatcher;
  /**
   * The checked target of a settings object. The router hands the same frozen settings object to every
   * delivery of a destination until its config changes, so the settings are read and checked once.
   */
  private readonly targets = new WeakMap<object, WebhookTarget | string>();

  constructor(options: WebhooksAdapterOptions = {}) {
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    // IP literals and resolved names alike are checked when a connection is made (see the dispatcher).
    this.dispatcher = new GuardedDispatcher(options.egressGuard ?? new EgressGuard(), {
      timeoutMs: this.timeoutMs,
    });
    this.maxConcurrentRequests = Math.max(1, options.maxConcurrentRequests ?? 8);
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    const target = this.targetOf(request.settings);
    if (typeof target === 'string') {
      return sameOutcomeForAll(request.messages, discard(`destination misconfigured: ${target}`));
    }
    if (request.messages.length === 1) {
      // The router's case: one message per call, without the concurrency machinery.
      const [message] = request.messages;
      const outcome = await this.sendOne(target, message!, request.storedPayload?.[0]);
      return [{ messageId: message!.messageId, ...outcome }];
    }
    const outcomes = await mapWithConcurrency(
      request.messages.map((message, index) => ({ message, storedPayload: request.storedPayload?.[index] })),
      this.maxConcurrentRequests,
      ({ message, storedPayload }) => this.sendOne(target, message, storedPayload),
    );
    return request.messages.map((message, index) => ({ messageId: message.messageId, ...outcomes[index]! }));
  }

  /**
   * POSTs one message; the signature covers the whole body. The body is the message's stored JSON when
   * the caller has it (`DeliveryRequest.storedPayload`), which is the same JSON without serializing again.
   */
  sendOne(
    target: WebhookTarget,
    message: NormalizedMessage,
    storedPayload?: Uint8Array,
  ): Promise<AttemptResult> {
    const body = storedPayload ?? Buffer.from(JSON.stringify(message), 'utf8');
    return this.post(target, body);
  }

  /**
   * One POST per user of `{"type":"delete","userId","timestamp","messageId"}`, with the destination's
   * headers and signed as a message is (Segment's webhook delete, docs/regulations.md §4). Stops at
   * the first user that is not accepted: the regulation tries the destination again as a whole, and
   * a receiver sees the same `messageId` for a user each time.
   */
  async deleteUsers(request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    const target = this.targetOf(request.settings);
    if (typeof target === 'string')
      return { outcome: 'failed', reason: `destination misconfigured: ${target}` };
    for (const { userId, messageId } of request.users) {
      const body = { type: 'delete', userId, timestamp: request.timestamp, messageId };
      const outcome = deletionOutcomeOf(await this.post(target, Buffer.from(JSON.stringify(body), 'utf8')));
      if (outcome.outcome !== 'deleted') return outcome;
    }
    return { outcome: 'deleted' };
  }

  private targetOf(settings: Readonly<Record<string, unknown>>): WebhookTarget | string {
    let target = this.targets.get(settings);
    if (target === undefined) {
      target = readWebhookTarget(settings);
      // Only settings that cannot change under the cache are kept.
      if (Object.isFrozen(settings)) this.targets.set(settings, target);
    }
    return target;
  }

  async close(): Promise<void> {
    // Busy connections too: the router calls this once its deliveries are done. The port lets an
    // adapter deliver after `close()`; later requests open new connections.
    await this.dispatcher.close();
  }

  /** Never rejects; the timeout covers the whole exchange, response body included. */
  private post(target: WebhookTarget, body: Uint8Array): Promise<AttemptResult> {
    let headers = target.headers;
    if (target.sharedSecret !== undefined) {
      const signed: Record<string, string> = { ...target.headers };
      const hmac = createHmac('sha1', target.sharedSecret);
      if (target.signatureTimestamp) {
        const timestamp = String(Math.floor(this.now() / 1000));
        signed['x-signature-timestamp'] = timestamp;
        hmac.update(`${timestamp}.`);
      }
      signed['x-signature'] = hmac.update(body).digest('hex');
      headers = signed;
    }
    return new Promise<AttemptResult>((resolve) => {
      const exchange = new WebhookExchange(resolve, this.timeoutMs, () =>
        this.dispatcher.mayShowResponseOf(target.hostname),
      );
      this.dispatcher.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers, body },
        exchange,
      );
    });
  }
}

/**
 * One POST as undici reports it, settled once by whatever comes first: the whole answer, an error, the
 * timeout. A success's body is read to its end so the connection can be reused; an error's first bytes
 * become the excerpt of the reason (`BODY_EXCERPT_CHARS`), and a long one is cut off with its connection.
 */
class WebhookExchange implements GuardedRequestHandler {
  private controller: GuardedRequestController | undefined;
  private status = 0;
  private retryAfter: string | undefined;
  /** An error response's first bytes; absent for a success, whose body is not wanted. */
  private excerptChunks: Buffer[] | undefined;
  private excerptBytes = 0;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly resolve: (outcome: AttemptResult) => void,
    private readonly timeoutMs: number,
    private readonly mayShowResponse: () => boolean,
  ) {
    this.timer = setTimeout(() => {
      this.settle(retry(`timeout after ${this.timeoutMs} ms`));
      this.controller?.abort(new Error('the webhook timed out'));
    }, timeoutMs);
  }

  onRequestStart(controller: GuardedRequestController): void {
    this.controller = controller;
    // Timed out while waiting for a connection: not sent at all.
    if (this.settled) controller.abort(new Error('the webhook timed out'));
  }

  onResponseStart(
    _controller: GuardedRequestController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    // 1xx answers come before the real one.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.retryAfter = headerText(headers['retry-after']);
    if (statusCode >= 300) this.excerptChunks = [];
  }

  onResponseData(controller: GuardedRequestController, chunk: Buffer): void {
    if (this.excerptChunks === undefined) return;
    this.excerptChunks.push(chunk);
    this.excerptBytes += chunk.length;
    if (this.excerptBytes >= BODY_EXCERPT_CHARS * 4) {
      this.finish();
      // The rest is not wanted; the connection goes with it.
      controller.abort(new Error('the rest of the response is not read'));
    }
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_controller: GuardedRequestController, error: Error): void {
    // A body cut short keeps the outcome its status decided, with what arrived of it.
    if (this.status !== 0) {
      this.finish();
      return;
    }
    this.settle(
      isEgressDenied(error)
        ? egressDenied(error.detail)
        : retry(`connection error: ${describeRequestError(error)}`),
    );
  }

  private finish(): void {
    if (this.settled) return;
    const excerpt = this.excerptChunks && this.mayShowResponse() ? excerptOf(this.excerptChunks) : '';
    this.settle(classifyHttpStatus(this.status, this.retryAfter, excerpt));
  }

  private settle(outcome: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(outcome);
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

  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // A `https://user:pass@host/` URL means Basic authentication; the URL itself is sent without them.
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers['authorization'] = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const configuredHeaders = settings['headers'];
  if (configuredHeaders !== undefined && configuredHeaders !== null) {
    // Checked at write time too; settings stored before those checks meet them here.
    const problem = problemWithWebhookHeaders(configuredHeaders);
    if (problem !== null) return problem;
    for (const [name, value] of Object.entries(configuredHeaders as Record<string, string>)) {
      const headerName = name.trim().toLowerCase();
      if (HEADERS_OWNED_BY_THE_ADAPTER.has(headerName)) continue;
      // Leading and trailing whitespace is not part of a header value (RFC 9110 §5.5).
      const headerValue = trimHttpWhitespace(value);
      try {
        validateHeaderName(headerName);
        validateHeaderValue(headerName, headerValue);
      } catch {
        return `header ${JSON.stringify(name)} is not a valid HTTP header name and value`;
      }
      headers[headerName] = headerValue;
    }
  }

  const secret = settings['shared_secret'];
  if (secret !== undefined && secret !== null && typeof secret !== 'string') {
    return 'setting "shared_secret" must be a string';
  }
  const signatureTimestamp = settings['signature_timestamp'];
  if (
    signatureTimestamp !== undefined &&
    signatureTimestamp !== null &&
    typeof signatureTimestamp !== 'boolean'
  ) {
    return 'setting "signature_timestamp" must be a boolean';
  }
  return {
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    hostname: url.hostname,
    headers,
    signatureTimestamp: signatureTimestamp === true,
    ...(typeof secret === 'string' && secret !== '' ? { sharedSecret: secret } : {}),
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The first characters of a body, whitespace collapsed. */
function excerptOf(chunks: Buffer[]): string {
  const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

/** `ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:9)` and the like: the system error's code and message. */
function describeRequestError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code} (${text})` : text;
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
