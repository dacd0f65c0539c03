import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { JetStreamEventLog } from './adapters/jetstream/jetstream-event-log.adapter';
import { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
import { SqliteEventLog } from './adapters/sqlite/sqlite-event-log.adapter';
import { DeduplicatedEventLog } from './dedupe/deduplicated-event-log';
import { crashAtStepFromEnvironment } from './dedupe/crash-at-step.fault';
import type { DedupeIndexSettings } from './dedupe/dedupe-index.port';
import { INDEX_LOCKED } from './dedupe/hour-bucketed.store';
import { WorkerDedupeIndex } from './dedupe/worker-dedupe-index.adapter';
import { DEFAULT_DEDUPE_WINDOW_MS, DEFAULT_RETENTION_MS, type EventLog } from './event-log.port';

/** `DEDUPE_GUARD_WINDOW` when not set: JetStream's own duplicate window under the dedupe index. */
export const DEFAULT_DEDUPE_GUARD_WINDOW_MS = 2 * 60_000;

export interface CreateEventLogOptions {
  /** `NATS_URL`: when set, the log is JetStream; otherwise the embedded sqlite log under `dataDir`. */
  natsUrl?: string;
  /** `DATA_DIR`: the sqlite log is the file `event-log.sqlite` in it; the dedupe index is beside it. */
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
   * `DEDUPE_INDEX` (default true): on NATS, the long window is served by the on-disk dedupe index and
   * JetStream keeps only `dedupeGuardWindowMs` of ids in RAM. False: JetStream keeps the whole window
   * (about 150-270 bytes of server RAM per id). Every process of a deployment must agree, since it sets
   * the stream's duplicate window.
   */
  dedupeIndex?: boolean;
  /**
   * Whether this process publishes tracking messages and so runs the index (the tracking API and the
   * all-in-one); a router alone only consumes. Default true.
   */
  publishesTracking?: boolean;
  /** `DEDUPE_GUARD_WINDOW`; default 2 min. */
  dedupeGuardWindowMs?: number;
  /** `DEDUPE_INDEX_DIR`: where the index file lives; one per replica. Default `dataDir`. */
  dedupeIndexDir?: string;
  /** `DEDUPE_INDEX_MAX_BYTES`: the index's disk cap (0: none); over it the oldest hour goes early. */
  dedupeIndexMaxBytes?: number;
}

const STARTUP_CATCH_UP_WAIT_MS = 10_000;

export const SQLITE_EVENT_LOG_FILE_NAME = 'event-log.sqlite';
export const DEDUPE_INDEX_FILE_NAME = 'dedupe-index.sqlite';

/** Picks the adapter from the configuration; throws `EventLogUnavailableError` if NATS cannot be reached. */
export async function createEventLog(options: CreateEventLogOptions): Promise<EventLog> {
  const settings = {
    dedupeWindowMs: options.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS,
    retentionMs: options.retentionMs ?? DEFAULT_RETENTION_MS,
  };
  if (!options.natsUrl) {
    // The embedded log keeps its dedupe ids in a table on disk, written in the message's own
    // transaction: its memory does not grow with the window, so it needs no separate index.
    return SqliteEventLog.open({ ...settings, file: join(options.dataDir, SQLITE_EVENT_LOG_FILE_NAME) });
  }
  const indexed = options.dedupeIndex ?? true;
  const guardWindowMs = Math.min(
    options.dedupeGuardWindowMs ?? DEFAULT_DEDUPE_GUARD_WINDOW_MS,
    settings.dedupeWindowMs,
  );
  const log = await JetStreamEventLog.connect({
    ...settings,
    servers: options.natsUrl,
    replicas: options.streamReplicas,
    pullExpiresMs: options.pullExpiresMs,
    notice: options.notice,
    trackingDuplicateWindowMs: indexed ? guardWindowMs : undefined,
  });
  if (!indexed || options.publishesTracking === false) return log;
  let feed: JetStreamMessageIdFeed | undefined;
  let index: WorkerDedupeIndex | undefined;
  try {
    feed = await JetStreamMessageIdFeed.connect(options.natsUrl);
    index = await startIndexInFreeFile(options.dedupeIndexDir ?? options.dataDir, options.natsUrl, {
      windowMs: settings.dedupeWindowMs,
      maxBytes: options.dedupeIndexMaxBytes,
    });
    const deduplicated = await DeduplicatedEventLog.start(log, index, feed, {
      guardWindowMs,
      windowMs: settings.dedupeWindowMs,
      faults: crashAtStepFromEnvironment(process.env),
    });
    // A short catch-up (the usual restart) finishes before the process listens; a long one goes on
    // while it serves, with `/health/ready` down and publishes answered 503 until it is done.
    await deduplicated.whenCaughtUp(STARTUP_CATCH_UP_WAIT_MS).catch(() => undefined);
    return deduplicated;
  } catch (error) {
    await index?.close().catch(() => undefined);
    await feed?.close();
    await log.close();
    throw error;
  }
}

/** Index files tried in one directory before giving up: more tracking API processes than that share it. */
const INDEX_FILES_PER_DIRECTORY = 16;

/**
 * Opens the index in `dedupe-index.sqlite`, or, while another process holds that file (two replicas
 * given one directory), in `dedupe-index.2.sqlite` and on. Any of them serves: each is a checkpointed
 * cache of the same log, so a replica that finds another's file resumes from its checkpoint.
 */
async function startIndexInFreeFile(
  directory: string,
  natsUrl: string,
  settings: DedupeIndexSettings,
): Promise<WorkerDedupeIndex> {
  for (let slot = 1; ; slot += 1) {
    const name =
      slot === 1 ? DEDUPE_INDEX_FILE_NAME : DEDUPE_INDEX_FILE_NAME.replace('.sqlite', `.${slot}.sqlite`);
    const file = join(directory, name);
    try {
      return await startIndexOrSetCorruptAside(file, settings, natsUrl);
    } catch (error) {
      const locked = error instanceof Error && error.message.includes(INDEX_LOCKED);
      if (!locked || slot >= INDEX_FILES_PER_DIRECTORY) throw error;
    }
  }
}

/** What SQLite says of a file that is not a database, or one whose pages are damaged. */
const CORRUPT_FILE = /file is not a database|database disk image is malformed|SQLITE_(NOTADB|CORRUPT)/i;

/**
 * The index is a cache of the log, rebuilt from it when its file is new: a damaged file (a disk
 * fault, a copy cut short) is moved aside as `<file>.corrupt-<time>`, kept for inspection, and a new
 * index is built, instead of the tracking API refusing to start.
 */
async function startIndexOrSetCorruptAside(
  file: string,
  settings: DedupeIndexSettings,
  natsUrl: string,
): Promise<WorkerDedupeIndex> {
  try {
    return await WorkerDedupeIndex.start(file, settings, natsUrl);
  } catch (error) {
    if (!(error instanceof Error) || !CORRUPT_FILE.test(error.message)) throw error;
    const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
    }
    process.emitWarning(
      `the dedupe index ${file} could not be read (${error.message}); it was moved to ${aside} and is rebuilt from the log`,
      'DedupeIndexRebuilt',
    );
    return WorkerDedupeIndex.start(file, settings, natsUrl);
  }
}
