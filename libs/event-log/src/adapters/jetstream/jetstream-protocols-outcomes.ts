import {
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { EventLogUnavailableError } from '../../event-log.port';
import { assertSubjectToken } from '../../event-log.validation';
import {
  PROTOCOLS_OUTCOME_RETENTION_MS,
  type ProtocolsOutcomeToRecord,
  type RecordedProtocolsOutcome,
  type RecordProtocolsOutcome,
} from '../../ports/protocols-outcomes.port';

export const PROTOCOLS_STREAM = 'PROTOCOLS';
const PROTOCOLS_SUBJECT_PREFIX = 'protocols';

/** Longest a read of one window may take before it fails (a week of outcomes of one source). */
const READ_TIMEOUT_MS = 30_000;

/**
 * Protocols outcomes on JetStream: stream `PROTOCOLS`, subjects `protocols.<workspaceId>.<sourceId>`,
 * `Nats-Msg-Id` = `<sourceId>:<messageId>` so that JetStream's own dedupe (same window as the
 * tracking stream) makes the record happen once, `max_age` = 7 days, the widest counting window.
 */
export class JetStreamProtocolsOutcomes {
  constructor(
    private readonly client: JetStreamClient,
    private readonly manager: JetStreamManager,
    private readonly publishTimeoutMs: number,
  ) {}

  /** The stream's settings; created or updated by the adapter with its other streams. */
  static streamConfig(
    common: Partial<StreamConfig>,
    dedupeWindowMs: number,
  ): Partial<StreamConfig> & { name: string } {
    return {
      ...common,
      name: PROTOCOLS_STREAM,
      subjects: [`${PROTOCOLS_SUBJECT_PREFIX}.>`],
      max_age: nanos(PROTOCOLS_OUTCOME_RETENTION_MS),
      duplicate_window: nanos(Math.min(dedupeWindowMs, PROTOCOLS_OUTCOME_RETENTION_MS)),
    };
  }

  async record(outcomes: ProtocolsOutcomeToRecord[]): Promise<RecordProtocolsOutcome[]> {
    for (const outcome of outcomes) {
      assertSubjectToken('workspaceId', outcome.workspaceId);
      assertSubjectToken('sourceId', outcome.sourceId);
    }
    const acks = await Promise.all(
      outcomes.map((outcome) =>
        this.client.publish(
          `${PROTOCOLS_SUBJECT_PREFIX}.${outcome.workspaceId}.${outcome.sourceId}`,
          JSON.stringify(outcome.outcome),
          { msgID: `${outcome.sourceId}:${outcome.messageId}`, timeout: this.publishTimeoutMs },
        ),
      ),
    );
    return acks.map((ack) => ({ duplicate: ack.duplicate }));
  }

  async read(
    sourceId: string,
    since: Date,
    limit = Number.MAX_SAFE_INTEGER,
  ): Promise<RecordedProtocolsOutcome[]> {
    assertSubjectToken('sourceId', sourceId);
    const subject = `${PROTOCOLS_SUBJECT_PREFIX}.*.${sourceId}`;
    // The last record of the source tells where to stop, and that there is anything to read at all.
    const last = await this.manager.streams.getMessage(PROTOCOLS_STREAM, { last_by_subj: subject });
    if (!last || last.time < since) return [];
    const consumer = await this.client.consumers.get(PROTOCOLS_STREAM, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: since.toISOString(),
    });
    // The stream reads oldest first: the newest `limit` are kept in a ring, still as bytes (parsed
    // once at the end), so memory stays bounded however many the window holds.
    const ring: { subject: string; msgId: string; data: Uint8Array; time: Date }[] = [];
    let next = 0;
    let read = 0;
    let reachedLast = false;
    const messages = await consumer.consume({ max_messages: 500 });
    const timer = setTimeout(() => void messages.close(), READ_TIMEOUT_MS);
    try {
      for await (const message of messages) {
        const entry = {
          subject: message.subject,
          msgId: message.headers?.get('Nats-Msg-Id') ?? '',
          data: message.data,
          time: message.time,
        };
        if (ring.length < limit) ring.push(entry);
        else if (limit > 0) ring[next] = entry;
        next = limit > 0 ? (next + 1) % limit : 0;
        read += 1;
        if (message.seq >= last.seq) {
          reachedLast = true;
          break;
        }
      }
    } finally {
      clearTimeout(timer);
      await messages.close();
    }
    if (!reachedLast || read === 0) {
      throw new EventLogUnavailableError(
        `reading the Protocols outcomes of ${sourceId} did not finish in ${READ_TIMEOUT_MS} ms`,
      );
    }
    const oldestFirst = ring.length < limit ? ring : [...ring.slice(next), ...ring.slice(0, next)];
    const decoder = new TextDecoder();
    return oldestFirst.map((entry) => ({
      workspaceId: entry.subject.split('.')[1],
      sourceId,
      messageId: entry.msgId.slice(sourceId.length + 1),
      outcome: JSON.parse(decoder.decode(entry.data)) as Record<string, unknown>,
      recordedAt: entry.time,
    }));
  }
}
