import type {
  ConsumeOptions,
  ConsumerSubscription,
  Delivery,
  EventLog,
  EventLogSettings,
  MessageToPublish,
} from '../event-log.port';

/**
 * What the contract suites of the log's ports share. Every suite runs over every engine: an engine's
 * spec calls `describeEventLogContract` (../event-log.contract.ts) with a factory that hands out
 * fresh, isolated storage, and each port's suite opens logs from it.
 */

/** One isolated storage; `open` may be called again to get a new adapter instance on the same data. */
export interface EventLogContractStore {
  open(): Promise<EventLog>;
  dispose(): Promise<void>;
}

export interface EventLogContractFactory {
  /** Empty storage configured with these settings. */
  newStore(settings: EventLogSettings): Promise<EventLogContractStore>;
}

export const ROOMY_SETTINGS: EventLogSettings = { dedupeWindowMs: 60_000, retentionMs: 3_600_000 };

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `condition` holds; fails with `description` after `timeoutMs`. */
export async function waitUntil(
  description: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 8000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${description}`);
    await sleep(25);
  }
}

let uniqueCounter = 0;
export function unique(prefix: string): string {
  uniqueCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${uniqueCounter}`;
}

export function message(sourceId: string, messageId = unique('msg'), workspaceId = 'ws1'): MessageToPublish {
  return {
    workspaceId,
    sourceId,
    messageId,
    payload: { type: 'track', event: 'Order Completed', messageId, properties: { total: 42.5, tags: ['a'] } },
  };
}

interface RecordedDelivery {
  delivery: Delivery;
  receivedAt: number;
}

export interface Recorder {
  received: RecordedDelivery[];
  subscription: ConsumerSubscription;
  messageIds(): string[];
}

export type OnDelivery = (delivery: Delivery) => void | Promise<void>;
export const ackEverything: OnDelivery = (delivery) => delivery.ack();

/**
 * Opens logs for the tests of one suite and closes them, their subscriptions and their storage after
 * each test. Call it inside the suite's `describe`.
 */
export function eventLogHarness(getFactory: () => EventLogContractFactory) {
  const stores: EventLogContractStore[] = [];
  const openedLogs: EventLog[] = [];
  const subscriptions: ConsumerSubscription[] = [];

  async function newStore(settings: EventLogSettings = ROOMY_SETTINGS): Promise<EventLogContractStore> {
    const store = await getFactory().newStore(settings);
    stores.push(store);
    return store;
  }

  async function open(store: EventLogContractStore): Promise<EventLog> {
    const log = await store.open();
    openedLogs.push(log);
    return log;
  }

  async function openFresh(settings: EventLogSettings = ROOMY_SETTINGS): Promise<EventLog> {
    return open(await newStore(settings));
  }

  async function record(
    log: EventLog,
    consumerName: string,
    options: Partial<ConsumeOptions> = {},
    onDelivery: OnDelivery = ackEverything,
  ): Promise<Recorder> {
    const received: RecordedDelivery[] = [];
    const subscription = await log.consume(
      consumerName,
      { ackWaitMs: 5000, maxInFlight: 100, ...options },
      async (delivery) => {
        received.push({ delivery, receivedAt: Date.now() });
        await onDelivery(delivery);
      },
    );
    subscriptions.push(subscription);
    return { received, subscription, messageIds: () => received.map((entry) => entry.delivery.messageId) };
  }

  afterEach(async () => {
    await Promise.allSettled(subscriptions.splice(0).map((subscription) => subscription.stop()));
    await Promise.allSettled(openedLogs.splice(0).map((log) => log.close()));
    await Promise.allSettled(stores.splice(0).map((store) => store.dispose()));
  });

  return { newStore, open, openFresh, record };
}
