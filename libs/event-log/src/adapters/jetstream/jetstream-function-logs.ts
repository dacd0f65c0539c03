import { DeliverPolicy, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { EventLogUnavailableError } from '../../event-log.port';
import { assertSubjectToken } from '../../event-log.validation';
import {
  FUNCTION_LOG_RETENTION_MS,
  FUNCTION_LOGS_KEPT_PER_FUNCTION,
  type FunctionLogEntry,
  type FunctionLogPage,
  type ListFunctionLogsOptions,
} from '../../ports/function-logs.port';
import {
  assertFunctionLogEntries,
  assertListFunctionLogs,
  functionLogPageToken,
  positionOfFunctionLogPageToken,
  storedFunctionLogEntry,
} from '../../function-logs.validation';
import type { JetStreamSession } from './jetstream-session';

export const FUNCTION_LOG_STREAM = 'FUNCTION_LOGS';
const FUNCTION_LOG_SUBJECT_PREFIX = 'fnlog';

/** Longest a read of one function's entries (at most 1,000) may take before it fails. */
const READ_TIMEOUT_MS = 10_000;

/** What a message holds: the entry without the keys its subject already has. */
type StoredBody = Omit<FunctionLogEntry, 'workspaceId' | 'functionId'>;

function subjectOf(workspaceId: string, functionId: string): string {
  return `${FUNCTION_LOG_SUBJECT_PREFIX}.${workspaceId}.${functionId}`;
}

/**
 * Function logs on JetStream: stream `FUNCTION_LOGS`, one subject per function
 * (`fnlog.<workspaceId>.<functionId>`), so the server itself keeps each function's newest 1,000
 * (`max_msgs_per_subject`) for at most 24 h (`max_age`), and erasing a function is a purge of its
 * subject. No `Nats-Msg-Id`: a log line has no identity to deduplicate on.
 */
export class JetStreamFunctionLogs {
  constructor(private readonly session: JetStreamSession) {}

  /** The stream's settings; created or updated by the adapter with its other streams. */
  static streamConfig(common: Partial<StreamConfig>): Partial<StreamConfig> & { name: string } {
    return {
      ...common,
      name: FUNCTION_LOG_STREAM,
      subjects: [`${FUNCTION_LOG_SUBJECT_PREFIX}.>`],
      max_msgs_per_subject: FUNCTION_LOGS_KEPT_PER_FUNCTION,
      max_age: nanos(FUNCTION_LOG_RETENTION_MS),
      // Nothing is published with an id; the shortest window keeps no server memory for none.
      duplicate_window: nanos(Math.min(60_000, FUNCTION_LOG_RETENTION_MS)),
    };
  }

  async append(entries: FunctionLogEntry[]): Promise<void> {
    assertFunctionLogEntries(entries);
    const { client, publishTimeoutMs } = this.session;
    // Published together, acknowledged in any order: the stream orders them as they arrive, which
    // for one caller's batch is the order given (one connection, one publisher).
    await Promise.all(
      entries.map((entry) => {
        const { workspaceId, functionId, ...body } = storedFunctionLogEntry(entry);
        return client.publish(subjectOf(workspaceId, functionId), JSON.stringify(body), {
          timeout: publishTimeoutMs,
        });
      }),
    );
  }

  async list(
    workspaceId: string,
    functionId: string,
    options: ListFunctionLogsOptions,
  ): Promise<FunctionLogPage> {
    assertListFunctionLogs(workspaceId, functionId, options);
    const before = positionOfFunctionLogPageToken(options.pageToken) ?? Number.MAX_SAFE_INTEGER;
    const subject = subjectOf(workspaceId, functionId);
    const since = new Date(Date.now() - FUNCTION_LOG_RETENTION_MS);
    const { client, manager } = this.session;
    // The function's last entry tells where to stop, and that there is anything to read at all.
    const last = await manager.streams.getMessage(FUNCTION_LOG_STREAM, { last_by_subj: subject });
    if (!last || last.time < since) return { entries: [], nextPageToken: '' };
    const stopAt = Math.min(last.seq, before - 1);
    const consumer = await client.consumers.get(FUNCTION_LOG_STREAM, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: since.toISOString(),
    });
    // The subject reads oldest first and holds at most 1,000 entries: the newest `pageSize + 1` that
    // match are kept in a ring (one more than the page tells whether another page follows).
    const keep = options.pageSize + 1;
    const ring: { seq: number; body: StoredBody }[] = [];
    let next = 0;
    let reachedEnd = false;
    const decoder = new TextDecoder();
    const messages = await consumer.consume({ max_messages: FUNCTION_LOGS_KEPT_PER_FUNCTION });
    const timer = setTimeout(() => void messages.close(), READ_TIMEOUT_MS);
    try {
      for await (const message of messages) {
        if (message.seq > stopAt) {
          reachedEnd = true;
          break;
        }
        const body = JSON.parse(decoder.decode(message.data)) as StoredBody;
        if (options.instance === undefined || body.instance === options.instance) {
          if (ring.length < keep) ring.push({ seq: message.seq, body });
          else ring[next] = { seq: message.seq, body };
          next = (next + 1) % keep;
        }
        // `pending` 0: nothing more of the subject was stored when this one was delivered.
        if (message.seq >= stopAt || message.info.pending === 0) {
          reachedEnd = true;
          break;
        }
      }
    } finally {
      clearTimeout(timer);
      await messages.close();
    }
    if (!reachedEnd) {
      throw new EventLogUnavailableError(
        `reading the logs of function ${functionId} did not finish in ${READ_TIMEOUT_MS} ms`,
      );
    }
    const oldestFirst = ring.length < keep ? ring : [...ring.slice(next), ...ring.slice(0, next)];
    const newestFirst = oldestFirst.reverse();
    const page = newestFirst.slice(0, options.pageSize);
    return {
      entries: page.map(({ body }) => ({ workspaceId, functionId, ...body })),
      nextPageToken:
        newestFirst.length > options.pageSize ? functionLogPageToken(page[page.length - 1].seq) : '',
    };
  }

  async erase(workspaceId: string, functionId: string): Promise<void> {
    assertSubjectToken('workspaceId', workspaceId);
    assertSubjectToken('functionId', functionId);
    await this.session.manager.streams.purge(FUNCTION_LOG_STREAM, {
      filter: subjectOf(workspaceId, functionId),
    });
  }
}
