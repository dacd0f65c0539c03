// A tracking load for the fault suites: several concurrent senders posting batches of fresh messages,
// recording which messageIds were answered 200 (the only ones Tributary promised to keep) and every
// other answer, so a suite can check that a fault never produced a 200 for a message that was not
// stored and never a status outside the documented ones.
import { createEventLog, type EventLog } from '@tributary/event-log';
import { randomUUID } from 'node:crypto';
import {
  postJson,
  readLog,
  sleep,
  type ApiEndpoint,
  type TestSource,
} from '../../../test/support/tracking-e2e.kit';

export interface TrackingLoadOptions {
  senders: number;
  batchSize: number;
  /** Pause between two requests of one sender. */
  pauseMs: number;
}

export interface LoadAnswer {
  status: number | 'connection-error';
  retryAfter: string | null;
  /** When the request was sent and when its answer (or error) came. */
  sentAt: number;
  at: number;
  /** For a connection error: the cause's code (`ECONNREFUSED`, `UND_ERR_SOCKET`, ...). */
  cause?: string;
}

export class TrackingLoad {
  /** Every messageId some request answered 200 for. */
  readonly acknowledged = new Set<string>();
  /** Every answer but 200, in order. */
  readonly failures: LoadAnswer[] = [];
  private running = true;
  private readonly senders: Promise<void>[];

  private constructor(
    private readonly endpoint: ApiEndpoint,
    private readonly source: TestSource,
    private readonly options: TrackingLoadOptions,
  ) {
    this.senders = Array.from({ length: options.senders }, (_, index) => this.send(index));
  }

  static start(endpoint: ApiEndpoint, source: TestSource, options: TrackingLoadOptions): TrackingLoad {
    return new TrackingLoad(endpoint, source, options);
  }

  /** Resolves once at least `count` messages were acknowledged. */
  async waitForAcknowledged(count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acknowledged.size < count) {
      if (Date.now() > deadline)
        throw new Error(
          `only ${this.acknowledged.size} of ${count} messages acknowledged within ${timeoutMs} ms; ` +
            `last failures: ${JSON.stringify(this.failures.slice(-3))}`,
        );
      await sleep(20);
    }
  }

  /** Resolves once some request answered 200 after `since`. */
  async waitForAcknowledgementAfter(since: number, timeoutMs: number): Promise<number> {
    const before = this.acknowledged.size;
    const deadline = Date.now() + timeoutMs;
    while (this.lastAcknowledgedAt <= since || this.acknowledged.size === before) {
      if (Date.now() > deadline)
        throw new Error(
          `no 200 within ${timeoutMs} ms; last failures: ${JSON.stringify(this.failures.slice(-3))}`,
        );
      await sleep(20);
    }
    return this.lastAcknowledgedAt;
  }

  /** Stops every sender after its request in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.senders);
  }

  statusCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const failure of this.failures) counts[failure.status] = (counts[failure.status] ?? 0) + 1;
    return counts;
  }

  private lastAcknowledgedAt = 0;

  private async send(senderIndex: number): Promise<void> {
    let batchNumber = 0;
    while (this.running) {
      batchNumber += 1;
      const batch = Array.from({ length: this.options.batchSize }, (_, index) => ({
        type: 'track',
        messageId: `fault-${senderIndex}-${batchNumber}-${index}-${randomUUID()}`,
        userId: `sender-${senderIndex}`,
        event: 'Fault Load',
        properties: { batchNumber, index },
      }));
      const sentAt = Date.now();
      try {
        const response = await postJson(this.endpoint, '/v1/batch', { batch }, this.source.writeKey);
        if (response.status === 200) {
          for (const message of batch) this.acknowledged.add(message.messageId);
          this.lastAcknowledgedAt = Date.now();
        } else {
          this.failures.push({
            status: response.status,
            retryAfter: response.headers.get('retry-after'),
            sentAt,
            at: Date.now(),
          });
        }
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code;
        this.failures.push({ status: 'connection-error', retryAfter: null, sentAt, at: Date.now(), cause });
        // The server is gone or restarting: do not spin.
        await sleep(50);
      }
      await sleep(this.options.pauseMs);
    }
  }
}

/**
 * Opens the log a (stopped) Tributary wrote to: its sqlite file in `dataDir`, or the JetStream stream
 * at `natsUrl`. Read it with `readLog`/`messageIdsInLog`, then close it.
 */
export function openLogOf(options: { dataDir: string; natsUrl?: string }): Promise<EventLog> {
  return createEventLog({ dataDir: options.dataDir, natsUrl: options.natsUrl });
}

/** The messageIds the log holds for a source. */
export async function messageIdsInLog(eventLog: EventLog, source: TestSource): Promise<Set<string>> {
  const messages = await readLog(eventLog, { sourceId: source.sourceId, timeoutMs: 30_000 });
  return new Set(messages.map((message) => message.messageId));
}

/** The acknowledged messageIds missing from `stored`; empty when nothing acknowledged was lost. */
export function missingFrom(stored: Set<string>, acknowledged: Iterable<string>): string[] {
  return [...acknowledged].filter((messageId) => !stored.has(messageId));
}
