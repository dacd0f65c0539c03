import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
import { BackgroundMergeScheduler } from './background-merge.scheduler';
import { crashAtStepFromEnvironment } from './crash-at-step.fault';
import type { DedupeIndexSettings } from './dedupe-index.port';
import { HourBucketedStore, type SharedFilterLayout } from './hour-bucketed.store';
import type { FeedSubscription, MessageIdBatch } from './message-id.feed';
import { KEY_BYTES } from './message-id.key';

/**
 * Ids cross the thread boundary as one string joined by a line break, which no message id contains
 * (the log refuses it: it would end the `Nats-Msg-Id` header): cloning one string is a copy, cloning
 * an array of strings costs a structured-clone step per string.
 */
export const ID_SEPARATOR = '\n';

/** One request to the worker; `id` pairs it with its answer. */
export type DedupeWorkerRequest =
  /** `count` keys (`message-id.key.ts`) packed in `keys`: the ids the caller's filters could not rule out. */
  | { id: number; operation: 'lookupKeys'; keys: Uint8Array; count: number; now: number }
  | {
      id: number;
      operation: 'record';
      messageIds: string;
      sequences: Float64Array;
      checkpointSequence: number;
      logIdentity: string;
      now: number;
    }
  /** `record` of ids the caller made into keys already: `count` keys packed in `keys`. */
  | {
      id: number;
      operation: 'recordKeys';
      keys: Uint8Array;
      count: number;
      sequences: Float64Array;
      checkpointSequence: number;
      logIdentity: string;
      now: number;
    }
  | { id: number; operation: 'checkpoint' | 'stats' | 'close' }
  | { id: number; operation: 'reset'; checkpointSequence: number; logIdentity: string }
  | { id: number; operation: 'expire'; now: number }
  | { id: number; operation: 'follow'; fromSequence: number; logIdentity: string }
  | { id: number; operation: 'unfollow' };

/** The `id` of the reports the worker's own follower sends, unasked. */
export const FOLLOWER_REPORT_ID = -1;
/**
 * The `id` of the report of new filters (a bucket started or dropped, a filter chain grew), sent
 * before the answer or progress report of the operation that changed them.
 */
export const FILTERS_REPORT_ID = -2;

export type DedupeWorkerAnswer =
  | { id: number; result?: unknown; error?: string }
  /** `progress`: [indexed sequence, remaining]; `followError`: the follower stopped for good. */
  | { id: typeof FOLLOWER_REPORT_ID; progress?: [number, number]; followError?: string }
  | { id: typeof FILTERS_REPORT_ID; filters: SharedFilterLayout };

/** The worker's first message: the store opened, with its filters (or the error that stopped it). */
export interface DedupeWorkerReady {
  filters: SharedFilterLayout;
}

export interface DedupeWorkerData {
  file: string;
  settings: DedupeIndexSettings;
  /** The NATS servers of the log, for the worker's own follower; absent: the caller follows. */
  natsServers?: string;
}

/**
 * The worker thread that owns the dedupe index's store. Requests are served one at a time in arrival
 * order, so a lookup sent after a record always sees it.
 */
function serve(): void {
  const port = parentPort;
  if (!port) return;
  const { file, settings, natsServers } = workerData as DedupeWorkerData;
  let store: HourBucketedStore;
  try {
    store = new HourBucketedStore(file, settings);
  } catch (error) {
    port.postMessage({ id: 0, error: error instanceof Error ? error.message : String(error) });
    return;
  }
  const ready: DedupeWorkerReady = { filters: store.filterLayout() };
  port.postMessage({ id: 0, result: ready });
  const filters = new FilterReporter(store, port);
  const merges = new BackgroundMergeScheduler(store);
  // Merges a crash or a close interrupted go on from where they stopped.
  merges.schedule();
  const follower = new WorkerFollower(store, port, natsServers, filters, merges);
  port.on('message', (request: DedupeWorkerRequest) => {
    try {
      switch (request.operation) {
        case 'follow':
        case 'unfollow':
          answerLater(
            port,
            request.id,
            request.operation === 'follow'
              ? follower.start(request.fromSequence, request.logIdentity)
              : follower.stop(),
          );
          return;
        case 'lookupKeys': {
          const sequences = store.lookupKeys(request.keys, request.count, request.now);
          port.postMessage({ id: request.id, result: sequences }, [sequences.buffer as ArrayBuffer]);
          return;
        }
        case 'record':
          store.record(
            splitIds(request.messageIds),
            request.sequences,
            { sequence: request.checkpointSequence, logIdentity: request.logIdentity },
            request.now,
          );
          break;
        case 'recordKeys':
          store.recordKeys(
            Buffer.from(request.keys.buffer, request.keys.byteOffset, request.count * KEY_BYTES),
            request.count,
            request.sequences,
            { sequence: request.checkpointSequence, logIdentity: request.logIdentity },
            request.now,
          );
          break;
        case 'checkpoint': {
          // Writing the buffer may drop a bucket (the size cap).
          const checkpoint = store.checkpoint();
          filters.reportIfChanged();
          merges.schedule();
          port.postMessage({ id: request.id, result: checkpoint });
          return;
        }
        case 'reset':
          store.reset({ sequence: request.checkpointSequence, logIdentity: request.logIdentity });
          break;
        case 'expire':
          store.expire(request.now);
          break;
        case 'stats':
          port.postMessage({ id: request.id, result: store.stats() });
          return;
        case 'close':
          void follower.stop().finally(() => {
            merges.stop();
            store.close();
            port.postMessage({ id: request.id });
            port.close();
          });
          return;
      }
      filters.reportIfChanged();
      merges.schedule();
      port.postMessage({ id: request.id });
    } catch (error) {
      filters.reportIfChanged();
      port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) });
    }
  });
}

/**
 * Tells the caller's thread of new buckets and filters, before the answer (or progress report) of the
 * operation that made them, so that once it hears an id is indexed its filters cover that id.
 */
class FilterReporter {
  private reportedVersion: number;

  constructor(
    private readonly store: HourBucketedStore,
    private readonly port: MessagePort,
  ) {
    this.reportedVersion = store.filterLayoutVersion;
  }

  reportIfChanged(): void {
    const version = this.store.filterLayoutVersion;
    if (version === this.reportedVersion) return;
    this.reportedVersion = version;
    this.port.postMessage({ id: FILTERS_REPORT_ID, filters: this.store.filterLayout() });
  }
}

function answerLater(port: MessagePort, id: number, work: Promise<void>): void {
  work.then(
    () => port.postMessage({ id }),
    (error: unknown) =>
      port.postMessage({ id, error: error instanceof Error ? error.message : String(error) }),
  );
}

/**
 * The index's follower inside the worker: its own NATS connection reads the log's ids (headers only)
 * and each batch is committed with its checkpoint right here, so the ids never cross to the thread
 * that serves HTTP; that thread gets one progress report per batch.
 */
class WorkerFollower {
  private feed: JetStreamMessageIdFeed | undefined;
  private subscription: FeedSubscription | undefined;
  /** The crash test's hook for the commit steps, which happen on this thread. */
  private readonly crashAt = crashAtStepFromEnvironment(process.env);

  constructor(
    private readonly store: HourBucketedStore,
    private readonly port: MessagePort,
    private readonly natsServers: string | undefined,
    private readonly filters: FilterReporter,
    private readonly merges: BackgroundMergeScheduler,
  ) {}

  async start(fromSequence: number, logIdentity: string): Promise<void> {
    if (!this.natsServers) throw new Error('the dedupe index worker was started without the log to follow');
    if (this.subscription) throw new Error('the dedupe index worker follows the log already');
    this.feed ??= await JetStreamMessageIdFeed.connect(this.natsServers);
    this.subscription = await this.feed.follow(fromSequence, async (batch) =>
      this.commit(batch, logIdentity),
    );
    this.subscription.failed.catch((error: Error) => {
      this.port.postMessage({ id: FOLLOWER_REPORT_ID, followError: error.message });
    });
  }

  async stop(): Promise<void> {
    const { subscription, feed } = this;
    this.subscription = undefined;
    this.feed = undefined;
    await subscription?.stop();
    await feed?.close();
  }

  private async commit(batch: MessageIdBatch, logIdentity: string): Promise<void> {
    const last = batch.sequences[batch.sequences.length - 1];
    let { messageIds, sequences } = batch;
    // Messages stored without an id (none through the tracking API) have nothing to index.
    if (messageIds.includes('')) {
      const kept = messageIds.flatMap((messageId, position) => (messageId === '' ? [] : [position]));
      messageIds = kept.map((position) => batch.messageIds[position]);
      sequences = kept.map((position) => batch.sequences[position]);
    }
    void this.crashAt?.('before-index-commit');
    this.store.record(messageIds, sequences, { sequence: last, logIdentity }, Date.now());
    void this.crashAt?.('after-index-commit');
    this.filters.reportIfChanged();
    this.merges.schedule();
    this.port.postMessage({ id: FOLLOWER_REPORT_ID, progress: [last, batch.remaining] });
  }
}

function splitIds(joined: string): string[] {
  return joined === '' ? [] : joined.split(ID_SEPARATOR);
}

serve();
