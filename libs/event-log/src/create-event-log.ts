import { join } from 'node:path';
import { JetStreamEventLog } from './adapters/jetstream/jetstream-event-log.adapter';
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.adapter';
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, type EventLog } from './event-log.port';

/** `DEDUPE_GUARD_WINDOW` when not set: JetStream's own duplicate window under the dedupe index. */
export const DEFAULT_DEDUPE_GUARD_WINDOW_MS = 2 * 60_000;

export interface CreateEventLogOptions {
  /** `NATS_URL`: when set, the log is JetStream; otherwise the embedded sqlite log under `dataDir`. */
  natsUrl?: string;
  /** `DATA_DIR`: the sqlite log is the file `event-log.sqlite` in it. */
  dataDir: string;
  /** `DEDUPE_WINDOW`; default 24 h. */
  dedupeWindowMs?: number;
  /** `RETENTION`; default 7 days. */
  retentionMs?: number;
  /** `NATS_STREAM_REPLICAS`: replicas of each JetStream stream; default 1. Ignored by the sqlite log. */
  streamReplicas?: number;
  /** `ROUTER_PULL_EXPIRES`: expiry of each JetStream pull (heartbeat at half); default 2 s. */
  pullExpiresMs?: number;
  /** Told what setting up the log changed that an operator should know (a stream's replicas raised). */
  notice?: (message: string) => void;
  /**
   * `DEDUPE_INDEX` (default true): on NATS, the long window is served by the on-disk dedupe index
   * (`@tributary/dedupe`) and JetStream keeps only `dedupeGuardWindowMs` of ids in RAM. False:
   * JetStream keeps the whole window (about 150-270 bytes of server RAM per id). Every process of a
   * deployment must agree, since it sets the stream's duplicate window.
   */
  dedupeIndex?: boolean;
  /** `DEDUPE_GUARD_WINDOW`; default 2 min. */
  dedupeGuardWindowMs?: number;
}

export const SQLITE_EVENT_LOG_FILE_NAME = 'event-log.sqlite';

/** The dedupe windows the options name, with their defaults; `guardWindowMs` only with an index. */
export function dedupeWindowsOf(options: CreateEventLogOptions): {
  windowMs: number;
  guardWindowMs?: number;
} {
  const windowMs = options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS;
  if (!options.natsUrl || !(options.dedupeIndex ?? true)) return { windowMs };
  return {
    windowMs,
    guardWindowMs: Math.min(options.dedupeGuardWindowMs ?? DEFAULT_DEDUPE_GUARD_WINDOW_MS, windowMs),
  };
}

/**
 * Picks the engine from the configuration and opens it: one connection (or file) serving every part
 * of the log. Throws `EventLogUnavailableError` if NATS cannot be reached. On NATS with the dedupe
 * index on, the tracking stream keeps only the guard window of ids: the process that publishes puts
 * the index in front of the log (`@tributary/dedupe`).
 */
export async function createEventLog(options: CreateEventLogOptions): Promise<EventLog> {
  const { windowMs, guardWindowMs } = dedupeWindowsOf(options);
  const settings = { dedupeWindowMs: windowMs, retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS };
  if (!options.natsUrl) {
    // The embedded log keeps its dedupe ids in a table on disk, written in the message's own
    // transaction: its memory does not grow with the window, so it needs no separate index.
    return SqliteEventLog.open({ ...settings, file: join(options.dataDir, SQLITE_EVENT_LOG_FILE_NAME) });
  }
  return JetStreamEventLog.connect({
    ...settings,
    servers: options.natsUrl,
    replicas: options.streamReplicas,
    pullExpiresMs: options.pullExpiresMs,
    notice: options.notice,
    trackingDuplicateWindowMs: guardWindowMs,
  });
}
