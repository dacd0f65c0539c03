/**
 * Webhooks (docs/tracking-api.md §12.3): each message is POSTed as JSON to the configured URL. With a shared secret the
 * request carries `X-Signature`, the hex HMAC-SHA1 of the exact body bytes, keyed with the secret, so
 * the receiver can check the request came from us (Segment's receivers already verify it this way).
 *
 * Requests go through `node:http`/`node:https` with keep-alive agents of the adapter's own, not fetch:
 * per message, fetch's Request/Headers/AbortSignal and web streams cost about as much CPU as the rest
 * of the delivery together (`BENCH_CPU_PROFILE=1 npm run bench`, phases 3 and 4). Redirects are not
 * followed by `node:http` either, so a receiver cannot bounce a request past the egress guard.
 *
 * Every connection goes through the egress guard (`../../egress/egress-guard.ts`): the agents resolve
 * host names with its `lookup`, so a socket connects only to an address the policy allowed, and IP
 * literals are checked before the request. What a loopback or private target answers stays out of the
 * reason: the tenant chose the URL, and it may point at one of the operator's own services.
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
import {
  Agent as HttpAgent,
  request as httpRequest,
  validateHeaderName,
  validateHeaderValue,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import type { NormalizedMessage } from '@tributary/contracts';
import {
  discard,
  egressDenied,
  retry,
  sameOutcomeForAll,
  type DeliveryAdapter,
  type DeliveryOutcome,
  type DeliveryRequest,
  type DeliveryResult,
} from '../../delivery-adapter.port';
import { classifyHttpStatus } from '../../http-response.classifier';
import { EgressGuard, isEgressDenied } from '../../egress/egress-guard';
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
  url: URL;
  /**
   * `url` as `node:http` request options, and its host name: worked out once per settings object,
   * not per request (reading a URL's parts, as `http.request(url)` does, made objects and strings for
   * every message).
   */
  requestOptions: Readonly<RequestOptions>;
  hostname: string;
  /** Lower-case names; `authorization` from credentials in the URL, then the `headers` setting. */
  headers: Readonly<Record<string, string>>;
  sharedSecret?: string;
  /** Sign `<unix seconds>.<body>` and send the seconds as `X-Signature-Timestamp`. */
  signatureTimestamp: boolean;
}

export class WebhooksDeliveryAdapter implements DeliveryAdapter {
  readonly slug = 'webhooks';
  private readonly timeoutMs: number;
  private readonly maxConcurrentRequests: number;
  private readonly egressGuard: EgressGuard;
  private readonly now: () => number;
  /**
   * Connections kept open between requests (Node honours the receiver's `Keep-Alive: timeout`). New
   * connections resolve through the guard; a kept-alive one stays with the address checked when it opened.
   */
  private readonly httpAgent: HttpAgent;
  private readonly httpsAgent: HttpsAgent;
  /**
   * The checked target of a settings object. The router hands the same frozen settings object to every
   * delivery of a destination until its config changes, so the settings are read and checked once.
   */
  private readonly targets = new WeakMap<object, WebhookTarget | string>();

  constructor(options: WebhooksAdapterOptions = {}) {
    this.egressGuard = options.egressGuard ?? new EgressGuard();
    this.now = options.now ?? Date.now;
    const lookup = this.egressGuard.lookup;
    this.httpAgent = new HttpAgent({ keepAlive: true, scheduling: 'lifo', lookup });
    this.httpsAgent = new HttpsAgent({ keepAlive: true, scheduling: 'lifo', lookup });
    this.timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.maxConcurrentRequests = Math.max(1, options.maxConcurrentRequests ?? 8);
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    const target = this.targetOf(request.settings);
    if (typeof target === 'string') {
      return sameOutcomeForAll(request.messages, discard(`destination misconfigured: ${target}`));
    }
    // Node's lookup hook is not called for IP literals, so those are checked here.
    const refusal = this.egressGuard.refusalOfLiteral(target.hostname);
    if (refusal) return sameOutcomeForAll(request.messages, egressDenied(refusal.detail));
    if (request.messages.length === 1) {
      // The router's case: one message per call, without the concurrency machinery.
      const [message] = request.messages;
      return [{ messageId: message!.messageId, ...(await this.sendOne(target, message!)) }];
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
    // Idle keep-alive connections; later requests open new ones.
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Never rejects; the timeout covers the whole exchange, response body included. */
  private post(target: WebhookTarget, body: Buffer, signedBytes: Buffer): Promise<DeliveryOutcome> {
    const headers: OutgoingHttpHeaders = {
      ...target.headers,
      'content-type': 'application/json',
      'content-length': body.length,
    };
    if (target.sharedSecret !== undefined) {
      const hmac = createHmac('sha1', target.sharedSecret);
      if (target.signatureTimestamp) {
        const timestamp = String(Math.floor(this.now() / 1000));
        headers['x-signature-timestamp'] = timestamp;
        hmac.update(`${timestamp}.`);
      }
      headers['x-signature'] = hmac.update(signedBytes).digest('hex');
    }
    const https = target.requestOptions.protocol === 'https:';
    return new Promise<DeliveryOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: DeliveryOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(outcome);
      };
      const request = (https ? httpsRequest : httpRequest)(
        {
          ...target.requestOptions,
          method: 'POST',
          headers,
          agent: https ? this.httpsAgent : this.httpAgent,
        },
        (response) => {
          const status = response.statusCode ?? 0;
          const showsBody = this.egressGuard.mayShowResponseOf(
            response.socket?.remoteAddress,
            target.hostname,
          );
          const outcomeWith = (excerpt: string) =>
            classifyHttpStatus(status, headerText(response.headers['retry-after']), showsBody ? excerpt : '');
          if (status >= 200 && status < 300) {
            // A success's body is read to its end so the connection can be reused; a body cut short
            // does not change the outcome the status decided.
            response.on('end', () => settle(outcomeWith('')));
            response.on('close', () => settle(outcomeWith('')));
            response.on('error', () => settle(outcomeWith('')));
            response.resume();
          } else {
            readExcerpt(response, (excerpt) => settle(outcomeWith(excerpt)));
          }
        },
      );
      const timer = setTimeout(() => {
        settle(retry(`timeout after ${this.timeoutMs} ms`));
        request.destroy();
      }, this.timeoutMs);
      request.on('error', (error) =>
        settle(
          isEgressDenied(error)
            ? egressDenied(error.detail)
            : retry(`connection error: ${describeRequestError(error)}`),
        ),
      );
      request.end(body);
    });
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

  const headers: Record<string, string> = {};
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
    url,
    requestOptions: urlToHttpOptions(url),
    hostname: url.hostname,
    headers,
    signatureTimestamp: signatureTimestamp === true,
    ...(typeof secret === 'string' && secret !== '' ? { sharedSecret: secret } : {}),
  };
}

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The first characters of the body, whitespace collapsed, without reading a huge body to the end. */
function readExcerpt(response: IncomingMessage, done: (excerpt: string) => void): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
    done(text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text);
  };
  response.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    bytes += chunk.length;
    if (bytes >= BODY_EXCERPT_CHARS * 4) {
      finish();
      // The rest is not wanted; the connection goes with it.
      response.destroy();
    }
  });
  // Keep what arrived when the body is cut short.
  response.on('end', finish);
  response.on('close', finish);
  response.on('error', finish);
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
