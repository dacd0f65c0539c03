/**
 * The client: calls validate and queue a message; a background flusher sends the queue in batches, one
 * request at a time, retrying what can be retried. Nothing here throws from the background: every
 * failure ends in `onError` (or the log), never in an unhandled rejection.
 */
import { randomUUID } from 'node:crypto';
import { authorizationFor } from './authorization';
import { buildEnvelope, envelopeOverheadBytes, MAX_BATCH_BYTES, nextBatchLength } from './batch-envelope';
import {
  AnalyticsDeliveryError,
  AnalyticsQueueError,
  AnalyticsRejectedError,
  type AnalyticsError,
  type ServerRejection,
} from './errors';
import { HttpTransport, StubTransport, type BatchTransport, type TransportResult } from './http-transport';
import { LeveledLogger } from './leveled-logger';
import { OAuthTokenError } from './oauth-authorization';
import {
  buildMessage,
  serializeMessage,
  type AliasParams,
  type AnalyticsMessage,
  type EventType,
  type GroupParams,
  type IdentifyParams,
  type PageParams,
  type ParamsByType,
  type ScreenParams,
  type SerializedMessage,
  type TrackParams,
} from './message-builder';
import { resolveOptions, type AnalyticsOptions, type ResolvedOptions } from './options';
import { backoffDelayMs, parseRetryAfterMs, verdictForStatus } from './retry-policy';

/** What became of one call. The promise of a call never rejects, except in `syncMode`. */
export type CallResult =
  /** Queued; the background flusher will send it. */
  | { status: 'queued'; messageId: string; message: AnalyticsMessage }
  /** `syncMode` only: the server answered 200 and stored it (with `send: false`: nothing was sent). */
  | { status: 'delivered'; messageId: string; message: AnalyticsMessage }
  /** Not queued: the queue was full or the client closed. Also reported to `onError`. */
  | { status: 'refused'; messageId: string; message: AnalyticsMessage; error: AnalyticsQueueError };

type BatchSendResult =
  { ok: true; rejections: readonly ServerRejection[] } | { ok: false; error: AnalyticsDeliveryError };

const MAX_REPORTED_BODY_CHARACTERS = 1000;

export class Analytics {
  private readonly options: ResolvedOptions;
  private readonly log: LeveledLogger;
  private readonly transport: BatchTransport;
  private readonly overheadBytes: number;

  private queue: SerializedMessage[] = [];
  private queuedBytes = 0;
  private sending = false;
  private closed = false;
  /** A flush() or close() is waiting: send everything now, without waiting for the interval. */
  private drainRequested = false;
  private flushWaiters: Array<() => void> = [];
  private intervalTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set while the queue is full, so that a flood of refused calls logs one line, not thousands. */
  private queueFullLogged = false;

  /** Throws `AnalyticsValidationError` (code `invalid_options`) for a missing write key or a bad option. */
  constructor(options: AnalyticsOptions) {
    this.options = resolveOptions(options);
    this.log = new LeveledLogger(this.options.logger, this.options.logLevel);
    this.overheadBytes = envelopeOverheadBytes(this.options.writeKey);
    this.transport = this.options.send
      ? new HttpTransport(this.options, authorizationFor(this.options, this.log))
      : new StubTransport();
  }

  /** The write key this client sends with. */
  get writeKey(): string {
    return this.options.writeKey;
  }

  /** Messages waiting in the queue (not counting a batch in flight). */
  get queueLength(): number {
    return this.queue.length;
  }

  identify(params: IdentifyParams): Promise<CallResult> {
    return this.call('identify', params);
  }

  track(params: TrackParams): Promise<CallResult> {
    return this.call('track', params);
  }

  page(params: PageParams): Promise<CallResult> {
    return this.call('page', params);
  }

  screen(params: ScreenParams): Promise<CallResult> {
    return this.call('screen', params);
  }

  group(params: GroupParams): Promise<CallResult> {
    return this.call('group', params);
  }

  alias(params: AliasParams): Promise<CallResult> {
    return this.call('alias', params);
  }

  /**
   * Resolves once the queue is empty and no request is in flight: every message queued before (and
   * during) the call was delivered or given up (given-up ones went to `onError`). Never rejects.
   */
  flush(): Promise<void> {
    if (this.queue.length === 0 && !this.sending) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.flushWaiters.push(resolve);
      this.drainRequested = true;
      // A retry wait now has someone waiting on it: it must keep the process alive.
      this.retryTimer?.ref();
      this.startSending();
    });
  }

  /**
   * Refuses further calls, flushes, and clears every timer. Safe to call more than once. The client holds
   * no timer that keeps the process alive even without close(); close() is what sends the last messages.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    this.clearIntervalTimer();
  }

  private call<T extends EventType>(type: T, params: ParamsByType[T]): Promise<CallResult> {
    // Validation throws synchronously: a wrong call is a programming mistake, reported where it was made.
    const entry = serializeMessage(
      buildMessage(type, params, { generateId: randomUUID, now: () => new Date() }),
    );
    const { message } = entry;
    if (this.closed) {
      return Promise.resolve(
        this.refuse(entry, new AnalyticsQueueError('client_closed', `${type} refused: the client is closed`)),
      );
    }
    if (this.options.syncMode) return this.sendNow(entry);
    if (this.queue.length >= this.options.maxQueueSize) {
      const error = new AnalyticsQueueError(
        'queue_full',
        `${type} refused: the queue holds ${this.options.maxQueueSize} messages (maxQueueSize)`,
      );
      if (!this.queueFullLogged)
        this.log.warn(`${error.message}; further refusals are not logged until it drains`);
      this.queueFullLogged = true;
      return Promise.resolve(this.refuse(entry, error, false));
    }
    this.queue.push(entry);
    this.queuedBytes += entry.bytes + 1;
    if (this.batchReady()) this.startSending();
    else this.armIntervalTimer();
    return Promise.resolve({ status: 'queued', messageId: message.messageId, message });
  }

  private refuse(entry: SerializedMessage, error: AnalyticsQueueError, log = true): CallResult {
    this.report(error, [entry], log);
    return { status: 'refused', messageId: entry.message.messageId, message: entry.message, error };
  }

  /** syncMode: one request for this message; resolves after a 200, rejects with the delivery error. */
  private async sendNow(entry: SerializedMessage): Promise<CallResult> {
    const outcome = await this.deliver([entry], true);
    if (!outcome.ok) throw outcome.error;
    if (outcome.rejections.length > 0) {
      throw new AnalyticsRejectedError(describeRejections(outcome.rejections), outcome.rejections);
    }
    return { status: 'delivered', messageId: entry.message.messageId, message: entry.message };
  }

  /** A full batch is waiting: by count, or by bytes (a batch must not pass `MAX_BATCH_BYTES`). */
  private batchReady(): boolean {
    return (
      this.queue.length >= this.options.batchSize || this.overheadBytes + this.queuedBytes > MAX_BATCH_BYTES
    );
  }

  private armIntervalTimer(): void {
    if (this.intervalTimer !== undefined || this.sending) return;
    this.intervalTimer = setTimeout(() => {
      this.intervalTimer = undefined;
      this.startSending();
    }, this.options.flushInterval);
    // A queued message must not keep the program alive on its own: exiting is the program's decision,
    // and close() (or flush()) is how it sends the rest first.
    this.intervalTimer.unref();
  }

  private clearIntervalTimer(): void {
    if (this.intervalTimer !== undefined) clearTimeout(this.intervalTimer);
    this.intervalTimer = undefined;
  }

  private startSending(): void {
    if (this.sending) return;
    this.clearIntervalTimer();
    this.sending = true;
    this.drain()
      .catch((error: unknown) => this.log.error('the background flusher failed unexpectedly', error))
      .finally(() => {
        this.sending = false;
        this.afterDrain();
      });
  }

  /** Sends batches one at a time while a full batch is waiting or a flush was asked for. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const length = nextBatchLength(this.queue, {
        batchSize: this.options.batchSize,
        maxBatchBytes: MAX_BATCH_BYTES,
        overheadBytes: this.overheadBytes,
      });
      const batch = this.queue.splice(0, length);
      for (const entry of batch) this.queuedBytes -= entry.bytes + 1;
      if (this.queue.length < this.options.maxQueueSize) this.queueFullLogged = false;
      const outcome = await this.deliver(batch, this.drainRequested);
      if (!outcome.ok) this.report(outcome.error, batch);
      else if (outcome.rejections.length > 0) this.reportRejections(outcome.rejections, batch);
      if (!this.drainRequested && !this.batchReady()) break;
    }
  }

  private afterDrain(): void {
    if (this.queue.length > 0) {
      if (this.drainRequested || this.batchReady()) this.startSending();
      else this.armIntervalTimer();
      return;
    }
    this.drainRequested = false;
    const waiters = this.flushWaiters;
    this.flushWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Up to 1 + maxRetries requests for one batch. Never throws. */
  private async deliver(
    batch: readonly SerializedMessage[],
    keepProcessAlive: boolean,
  ): Promise<BatchSendResult> {
    const { maxRetries, retryBackoff } = this.options;
    for (let attempt = 0; ; attempt += 1) {
      // sentAt is the moment of this request, retries included: the server corrects clock skew with it.
      const body = buildEnvelope(batch, new Date(), this.options.writeKey);
      let result: TransportResult;
      try {
        result = await this.transport.post(body, attempt);
      } catch (error) {
        result = { kind: 'network', error };
      }
      const attempts = attempt + 1;
      let retryAfterMs: number | undefined;
      let error: AnalyticsDeliveryError;
      if (result.kind === 'response') {
        const verdict = verdictForStatus(result.status);
        if (verdict === 'success') {
          this.log.debug(`sent ${batch.length} message(s) in ${attempts} attempt(s)`);
          return { ok: true, rejections: readRejections(result.body) };
        }
        error = httpError(result.status, result.body, attempts);
        if (verdict === 'give_up') return { ok: false, error };
        retryAfterMs = parseRetryAfterMs(result.retryAfter, retryBackoff.maxRetryAfterMs);
      } else if (result.kind === 'unauthorized') {
        // The token endpoint already retried what could be retried: nothing more to try for this batch.
        // `attempts` counts the tracking requests made, and this one was never made.
        return { ok: false, error: authorizationError(result.error, attempt) };
      } else if (result.kind === 'timeout') {
        error = new AnalyticsDeliveryError(
          `no answer from ${this.options.url} within ${this.options.timeout} ms`,
          {
            failure: 'timeout',
            attempts,
          },
        );
      } else {
        error = new AnalyticsDeliveryError(
          `request to ${this.options.url} failed: ${describeCause(result.error)}`,
          {
            failure: 'network',
            attempts,
            cause: result.error,
          },
        );
      }
      if (attempt >= maxRetries) {
        return {
          ok: false,
          error: new AnalyticsDeliveryError(
            `gave up after ${attempts} attempt(s): ${error.message}`,
            error.details,
          ),
        };
      }
      const delay = retryAfterMs ?? backoffDelayMs(attempt, retryBackoff);
      this.log.info(`attempt ${attempts} failed (${error.message}); retrying in ${delay} ms`);
      await this.sleep(delay, keepProcessAlive || this.drainRequested);
    }
  }

  private sleep(ms: number, keepProcessAlive: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        resolve();
      }, ms);
      if (!keepProcessAlive) this.retryTimer.unref();
    });
  }

  private reportRejections(
    rejections: readonly ServerRejection[],
    batch: readonly SerializedMessage[],
  ): void {
    const rejected = rejections
      .map((rejection) => batch[rejection.index])
      .filter((entry) => entry !== undefined);
    this.report(new AnalyticsRejectedError(describeRejections(rejections), rejections), rejected);
  }

  /** Hands given-up messages to onError as they were sent (parsed back from their JSON), or logs them. */
  private report(error: AnalyticsError, entries: readonly SerializedMessage[], log = true): void {
    const handler = this.options.onError;
    if (handler === undefined) {
      if (log) this.log.error(`${error.message} (${entries.length} message(s) dropped)`);
      return;
    }
    if (log) this.log.debug(`${error.message} (${entries.length} message(s) given to onError)`);
    try {
      handler(
        error,
        entries.map((entry) => JSON.parse(entry.json) as AnalyticsMessage),
      );
    } catch (handlerError) {
      this.log.error('onError threw; the error is ignored', handlerError);
    }
  }
}

function httpError(status: number, body: string, attempts: number): AnalyticsDeliveryError {
  let serverCode: string | undefined;
  let serverMessage: string | undefined;
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed?.code === 'string') serverCode = parsed.code;
    if (typeof parsed?.message === 'string') serverMessage = parsed.message;
  } catch {
    // Not JSON (a proxy's HTML page, say): the raw text is kept in responseBody.
  }
  const explanation =
    serverCode !== undefined ? `: ${serverCode}${serverMessage ? ` (${serverMessage})` : ''}` : '';
  return new AnalyticsDeliveryError(`the tracking API answered ${status}${explanation}`, {
    failure: 'http_status',
    attempts,
    status,
    serverCode,
    responseBody: body.slice(0, MAX_REPORTED_BODY_CHARACTERS),
  });
}

function authorizationError(cause: unknown, attempts: number): AnalyticsDeliveryError {
  if (cause instanceof OAuthTokenError) {
    const { status, oauthError, oauthErrorDescription, responseBody } = cause.details;
    return new AnalyticsDeliveryError(`no OAuth access token: ${cause.message}`, {
      failure: 'oauth',
      attempts,
      status,
      oauthError,
      oauthErrorDescription,
      responseBody,
      cause: cause.details.cause ?? cause,
    });
  }
  return new AnalyticsDeliveryError(`no credentials for the request: ${describeCause(cause)}`, {
    failure: 'oauth',
    attempts,
    cause,
  });
}

/** The 200 body's `rejected` list (docs/tracking-api.md §6.5); empty when absent or unreadable. */
function readRejections(body: string): ServerRejection[] {
  try {
    const parsed = JSON.parse(body) as { rejected?: unknown };
    if (!Array.isArray(parsed?.rejected)) return [];
    return parsed.rejected.filter(
      (item): item is ServerRejection =>
        typeof item === 'object' && item !== null && Number.isInteger((item as ServerRejection).index),
    );
  } catch {
    return [];
  }
}

function describeRejections(rejections: readonly ServerRejection[]): string {
  const first = rejections[0];
  return `the tracking API rejected ${rejections.length} message(s); first: ${first.code} (${first.message})`;
}

function describeCause(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
