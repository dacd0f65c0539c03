import {
  BACKWARDS,
  END,
  KurrentDBClient,
  START,
  excludeSystemEvents,
  jsonEvent,
  type ResolvedEvent as KurrentResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { assertAppendable, assertPageSize, serializeEventPayloads } from '../../append-validation';
import {
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllBackwardsOptions,
  type RecordedEvent,
  type SubscribeToAllOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from '../../event-store.port';
import { KurrentDbAllSubscription, type ReconnectPolicy } from './kurrentdb-all-subscription';
import {
  commitPositionOf,
  fromKurrentCurrentState,
  isAccessDeniedError,
  isForeignOrSystemEvent,
  isStreamNotFoundError,
  isWrongExpectedVersionError,
  toKurrentStreamState,
  toRecordedEvent,
} from './kurrentdb-event-mapping';

export interface KurrentDbEventStoreOptions {
  /** How a subscription retries after losing its connection before it gives up with `onError`. */
  reconnect?: ReconnectPolicy;
  /** How long `ping()` waits for an answer before reporting the engine as down. */
  pingTimeoutMs?: number;
}

/**
 * Position reported for an event read from a stream when the server does not know it (servers
 * before 22.6 only give positions on `$all` reads). Stream reads serve decisions, which need revisions,
 * not positions.
 */
export const UNKNOWN_POSITION = -1n;

/** A stream nobody writes: reading it proves the server answers without needing `$all` rights. */
const PING_STREAM = 'tributary-ping';

/** The production event store: KurrentDB (or EventStoreDB 22+) over gRPC. */
export class KurrentDbEventStore implements EventStore {
  private readonly client: KurrentDBClient;
  private readonly subscriptions = new Set<KurrentDbAllSubscription>();
  private readonly reconnect: ReconnectPolicy;
  private readonly pingTimeoutMs: number;
  private closed = false;

  /** @param connectionString `kurrentdb://host:2113?tls=false` (the deprecated `esdb://` also works). */
  constructor(connectionString: string, options: KurrentDbEventStoreOptions = {}) {
    this.client = KurrentDBClient.connectionString(connectionString);
    this.reconnect = options.reconnect ?? { maxAttempts: 5, initialDelayMs: 500 };
    this.pingTimeoutMs = options.pingTimeoutMs ?? 5000;
  }

  async append(
    streamName: string,
    events: NewEvent[],
    expectedRevision: ExpectedRevision,
  ): Promise<AppendResult> {
    this.assertOpen('append');
    assertAppendable(streamName, events, expectedRevision);
    // Serialize first: the client stringifies while it streams events to the server, and a failure
    // half way through must not leave the server with a started append.
    const eventData = events.map((event) => {
      serializeEventPayloads(event);
      return jsonEvent({ type: event.type, data: event.data, metadata: { ...event.metadata } });
    });
    let result;
    try {
      result = await this.client.appendToStream(streamName, eventData, {
        streamState: toKurrentStreamState(expectedRevision),
      });
    } catch (error) {
      if (isWrongExpectedVersionError(error)) {
        throw new WrongExpectedRevisionError(
          streamName,
          expectedRevision,
          fromKurrentCurrentState(error.actualState),
        );
      }
      throw error;
    }
    const revision = Number(result.nextExpectedRevision);
    // The append answer carries the commit position of the last event written; a server that
    // leaves it out still has it on the event itself.
    const position = result.position?.commit ?? (await this.positionOfLastEvent(streamName));
    return { revision, position };
  }

  async readStream(streamName: string): Promise<RecordedEvent[]> {
    this.assertOpen('readStream');
    const recorded: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamName)) {
        if (isForeignOrSystemEvent(resolved)) continue;
        recorded.push(toRecordedEvent(resolved, commitPositionOf(resolved) ?? UNKNOWN_POSITION));
      }
    } catch (error) {
      if (isStreamNotFoundError(error)) return [];
      throw error;
    }
    return recorded;
  }

  async readAllBackwards(options: ReadAllBackwardsOptions): Promise<RecordedEvent[]> {
    this.assertOpen('readAllBackwards');
    assertPageSize(options.maxCount);
    const page: RecordedEvent[] = [];
    let cursor = options.before;
    // A read can yield fewer of our events than asked for (the one at `before` itself, events that are
    // not ours): read on from where it stopped until the page is full or `$all` is exhausted.
    for (;;) {
      const wanted = options.maxCount - page.length;
      let read = 0;
      let oldest: bigint | undefined;
      for await (const resolved of this.client.readAll({
        direction: BACKWARDS,
        fromPosition: cursor === undefined ? END : { commit: cursor, prepare: cursor },
        maxCount: wanted,
        filter: excludeSystemEvents(),
      }) as AsyncIterable<KurrentResolvedEvent>) {
        read += 1;
        const position = commitPositionOf(resolved);
        if (position === undefined) continue;
        oldest = position;
        // The read may start at the event at `before` itself; the port's bound is exclusive.
        if (cursor !== undefined && position >= cursor) continue;
        if (isForeignOrSystemEvent(resolved)) continue;
        page.push(toRecordedEvent(resolved, position));
      }
      if (page.length >= options.maxCount || read < wanted || oldest === undefined || oldest === cursor) {
        return page.slice(0, options.maxCount);
      }
      cursor = oldest;
    }
  }

  subscribeToAll(
    handler: (event: RecordedEvent) => void | Promise<void>,
    options: SubscribeToAllOptions = {},
  ): Subscription {
    this.assertOpen('subscribeToAll');
    const subscription = new KurrentDbAllSubscription(
      (afterPosition) =>
        this.client.subscribeToAll({
          fromPosition:
            afterPosition === undefined ? START : { commit: afterPosition, prepare: afterPosition },
          filter: excludeSystemEvents(),
        }),
      handler,
      options,
      this.reconnect,
      (finished) => this.subscriptions.delete(finished),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.pingTimeoutMs);
    });
    try {
      return await Promise.race([this.readPingStream(), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    await this.client.dispose();
  }

  private assertOpen(operation: string): void {
    if (this.closed) throw new Error(`KurrentDbEventStore: ${operation} after close()`);
  }

  private async readPingStream(): Promise<boolean> {
    try {
      for await (const _event of this.client.readStream(PING_STREAM, { maxCount: 1 })) break;
      return true;
    } catch (error) {
      // Both answers come from a live server.
      return isStreamNotFoundError(error) || isAccessDeniedError(error);
    }
  }

  private async positionOfLastEvent(streamName: string): Promise<bigint> {
    for await (const resolved of this.client.readStream(streamName, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    }) as AsyncIterable<KurrentResolvedEvent>) {
      const position = commitPositionOf(resolved);
      if (position !== undefined) return position;
    }
    throw new Error(`KurrentDB did not report the position of the append to ${streamName}`);
  }
}
