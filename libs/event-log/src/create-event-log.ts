import { join } from 'node:path';
import { JetStreamEventLog } from './adapters/jetstream/jetstream-event-log.adapter';
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.adapter';
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, type EventLog } from './event-log.port';

export interface CreateEventLogOptions {
  /** `NATS_URL`: when set, the log is JetStream; otherwise the embedded sqlite log under `dataDir`. */
  natsUrl?: string;
  /** `DATA_DIR`: the sqlite log is the file `event-log.sqlite` in it. */
  dataDir: string;
  /** `DEDUPE_WINDOW`; default 24 h. See `EventLogSettings.dedupeWindowMs` for its memory cost. */
  dedupeWindowMs?: number;
  /** `RETENTION`; default 7 days. */
  retentionMs?: number;
  /** `NATS_STREAM_REPLICAS`: replicas of each JetStream stream; default 1. Ignored by the sqlite log. */
  streamReplicas?: number;
}

export const SQLITE_EVENT_LOG_FILE_NAME = 'event-log.sqlite';

/** Picks the adapter from the configuration; throws `EventLogUnavailableError` if NATS cannot be reached. */
export async function createEventLog(options: CreateEventLogOptions): Promise<EventLog> {
  const settings = {
    dedupeWindowMs: options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS,
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
  };
  if (options.natsUrl) {
    return JetStreamEventLog.connect({
      ...settings,
      servers: options.natsUrl,
      replicas: options.streamReplicas,
    });
  }
  return SqliteEventLog.open({ ...settings, file: join(options.dataDir, SQLITE_EVENT_LOG_FILE_NAME) });
}
