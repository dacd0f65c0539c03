import type { AllStreamResolvedEvent } from '@kurrent/kurrentdb-client';
import type { RecordedEvent, SubscribeToAllOptions, Subscription } from '../../event-store.port';
import {
  isInsideHandlerOf,
  reportUnobservedSubscriptionError,
  runInHandlerScope,
  toError,
} from '../../subscription-handler-scope';
import { commitPositionOf, isForeignOrSystemEvent, toRecordedEvent } from './kurrentdb-event-mapping';

/**
 * The part of the client's `AllStreamSubscription` we use. Tests drive a fake of it, since no
 * KurrentDB server runs in the test environment.
 */
export interface KurrentAllEventsSource {
  on(event: 'data', listener: (resolved: AllStreamResolvedEvent) => void): unknown;
  on(event: 'caughtUp', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  unsubscribe(): Promise<void>;
  /** Events converted by the client but not yet emitted as 'data' (the client's stream is a Readable). */
  readonly readableLength?: number;
}

/** Opens a catch-up subscription to `$all` after `afterPosition` (from the start when undefined). */
export type OpenKurrentAllEventsSource = (afterPosition: bigint | undefined) => KurrentAllEventsSource;

export interface ReconnectPolicy {
  /** Consecutive failed (re)subscriptions tolerated before the subscription dies with `onError`. */
  maxAttempts: number;
  /** Delay before the first retry; doubles on each further attempt, capped at 5 s. */
  initialDelayMs: number;
}

const CAUGHT_UP = Symbol('caught up');
const UNSUBSCRIBE_TIMEOUT_MS = 2000;

/**
 * One subscriber to `$all` on KurrentDB.
 *
 * The client hands over events as a stream whose 'data' and 'caughtUp' notifications are separate
 * emitter events; both go into one queue here so that `onCaughtUp` runs after the last catch-up event
 * has been handled, never before. The queue is drained one handler call at a time. A lost connection
 * is retried from the last queued position; positions at or below it are dropped, so a retry (or a
 * server that treats the start position as inclusive) never delivers an event twice.
 */
export class KurrentDbAllSubscription implements Subscription {
  private readonly queue: Array<RecordedEvent | typeof CAUGHT_UP> = [];
  private lastQueuedPosition: bigint | undefined;
  private source: KurrentAllEventsSource | null = null;
  private failedAttempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private stopRequested = false;
  private caughtUpReported = false;
  /** 'data' events still to come from the current source before its caught-up marker is due. */
  private dataEventsBeforeCaughtUp: number | null = null;

  constructor(
    private readonly openSource: OpenKurrentAllEventsSource,
    private readonly handler: (event: RecordedEvent) => void | Promise<void>,
    private readonly options: SubscribeToAllOptions,
    private readonly reconnectPolicy: ReconnectPolicy,
    private readonly onFinished: (subscription: KurrentDbAllSubscription) => void,
  ) {
    this.lastQueuedPosition = options.after;
    this.connect();
  }

  async stop(): Promise<void> {
    if (!this.stopRequested) {
      this.stopRequested = true;
      this.queue.length = 0;
      if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
      await this.closeSource();
      this.onFinished(this);
    }
    // A handler stopping its own subscription must not wait for itself to return.
    if (this.draining && !isInsideHandlerOf(this)) await this.draining;
  }

  private connect(): void {
    let source: KurrentAllEventsSource;
    try {
      source = this.openSource(this.lastQueuedPosition);
    } catch (error) {
      this.sourceFailed(null, toError(error));
      return;
    }
    this.source = source;
    this.dataEventsBeforeCaughtUp = null;
    source.on('data', (resolved) => {
      if (this.source !== source) return;
      this.failedAttempts = 0;
      this.enqueueResolved(resolved);
      if (this.dataEventsBeforeCaughtUp !== null && --this.dataEventsBeforeCaughtUp === 0) {
        this.dataEventsBeforeCaughtUp = null;
        this.enqueue(CAUGHT_UP);
      }
    });
    source.on('caughtUp', () => {
      if (this.source !== source) return;
      this.failedAttempts = 0;
      // The client emits 'caughtUp' when it reads the server's message, but events it converted just
      // before may still sit in its stream buffer, not yet emitted as 'data'. The marker goes after them.
      const stillBuffered = source.readableLength ?? 0;
      if (stillBuffered > 0) this.dataEventsBeforeCaughtUp = stillBuffered;
      else this.enqueue(CAUGHT_UP);
    });
    source.on('error', (error) => this.sourceFailed(source, error));
    source.on('end', () => this.sourceFailed(source, new Error('KurrentDB ended the $all subscription')));
    source.on('close', () => this.sourceFailed(source, new Error('KurrentDB closed the $all subscription')));
  }

  private enqueueResolved(resolved: AllStreamResolvedEvent): void {
    if (isForeignOrSystemEvent(resolved)) return;
    const position = commitPositionOf(resolved);
    if (position === undefined) {
      this.fail(
        new Error(`KurrentDB delivered event ${resolved.event?.id ?? '?'} without a commit position`),
      );
      return;
    }
    if (this.lastQueuedPosition !== undefined && position <= this.lastQueuedPosition) return;
    this.lastQueuedPosition = position;
    this.enqueue(toRecordedEvent(resolved, position));
  }

  private enqueue(item: RecordedEvent | typeof CAUGHT_UP): void {
    if (this.stopRequested) return;
    this.queue.push(item);
    if (!this.draining) this.draining = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopRequested && this.queue.length > 0) {
        const item = this.queue.shift()!;
        if (item === CAUGHT_UP) {
          if (!this.caughtUpReported) {
            this.caughtUpReported = true;
            this.options.onCaughtUp?.();
          }
          continue;
        }
        await runInHandlerScope(this, () => this.handler(item));
      }
    } catch (error) {
      // A failed handler ends the subscription: delivering later events would leave a hole in
      // whatever the handler builds.
      this.fail(toError(error));
    } finally {
      this.draining = null;
    }
  }

  private sourceFailed(source: KurrentAllEventsSource | null, error: Error): void {
    if (this.stopRequested || this.source !== source) return;
    this.source = null;
    if (source) void this.closeSource(source);
    this.failedAttempts += 1;
    if (this.failedAttempts > this.reconnectPolicy.maxAttempts) {
      this.fail(error);
      return;
    }
    const delay = Math.min(this.reconnectPolicy.initialDelayMs * 2 ** (this.failedAttempts - 1), 5000);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopRequested) this.connect();
    }, delay);
  }

  private fail(error: Error): void {
    if (this.stopRequested) return;
    void this.stop();
    if (this.options.onError) this.options.onError(error);
    else reportUnobservedSubscriptionError('KurrentDbEventStore', error);
  }

  private async closeSource(source = this.source): Promise<void> {
    if (source === this.source) this.source = null;
    if (!source) return;
    // Bounded: unsubscribing waits for the call to be set up, which can hang while the server is gone.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, UNSUBSCRIBE_TIMEOUT_MS);
      timer.unref();
    });
    await Promise.race([source.unsubscribe().catch(() => undefined), timeout]);
    clearTimeout(timer);
  }
}
