/**
 * The event store port: where every Config API change is recorded.
 *
 * Streams are named per aggregate (`source-<id>`, ...). Every append names the revision the writer
 * based its decision on, so two writers that decided on the same state cannot both succeed.
 */

/** Who made a change, in which request, and when: stored beside every event, never inside its data. */
export interface EventMetadata {
  /**
   * `access-tokens/<number>` or `users/<email>` for a Config API caller, `system` for the instance
   * bootstrap, `system:router` for the router's replays and redrives.
   */
  actor: string;
  requestId: string;
  /** RFC 3339 UTC with milliseconds. */
  time: string;
}

export interface NewEvent {
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
}

/** A stored event. `position` orders events across all streams; `revision` within one stream. */
export interface RecordedEvent {
  streamName: string;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  /** 0-based index of this event in its stream. */
  revision: number;
  /** Global, strictly increasing across the whole store (KurrentDB: the commit position). */
  position: bigint;
}

/**
 * `'no_stream'`: the stream must not exist yet; a number: the revision of the stream's last event;
 * `'any'`: no check (only for writers that cannot conflict, such as bootstrap markers).
 */
export type ExpectedRevision = 'no_stream' | 'any' | number;

export interface AppendResult {
  /** Revision of the last event written. */
  revision: number;
  /** Position of the last event written; projections wait for it to give read-your-writes. */
  position: bigint;
}

export interface Subscription {
  /** Stops delivery; resolves once no handler call is running. */
  stop(): Promise<void>;
}

export interface SubscribeToAllOptions {
  /** Deliver only events after this position; absent means from the very first event. */
  after?: bigint;
  /** Called once when the subscription has delivered every event stored when it started. */
  onCaughtUp?: () => void;
  /** Called when the subscription dies (connection lost for good); it delivers nothing more. */
  onError?: (error: Error) => void;
}

export interface ReadAllBackwardsOptions {
  /** Only events stored before this position; absent means from the newest event. */
  before?: bigint;
  /** At most this many events (a positive integer). */
  maxCount: number;
}

export interface EventStore {
  /** Appends all events or none. Throws `WrongExpectedRevisionError` when the check fails. */
  append(streamName: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /** All events of one stream in order; `[]` when the stream does not exist. */
  readStream(streamName: string): Promise<RecordedEvent[]>;
  /**
   * One page of every stream's events, newest first: up to `maxCount` events with a position below
   * `options.before`, in descending position order. Fewer than `maxCount` means there are no older
   * events. For views read page by page from the store instead of kept in memory (the audit trail);
   * pass the last position of a page as `before` to read the next. System events of the engine are
   * never returned.
   */
  readAllBackwards(options: ReadAllBackwardsOptions): Promise<RecordedEvent[]>;
  /**
   * Catch-up then live: delivers every stored event after `options.after` in position order, then
   * each new one as it is appended. The handler is awaited: events are delivered one at a time.
   * System events of the engine (KurrentDB `$`-types) are never delivered.
   */
  subscribeToAll(
    handler: (event: RecordedEvent) => void | Promise<void>,
    options?: SubscribeToAllOptions,
  ): Subscription;
  /** True when the engine answers; used by readiness checks. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EventStore');

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${streamName}: expected revision ${String(expected)}, found ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}
