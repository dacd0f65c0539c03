import type { TrackingLog } from '@tributary/event-log';
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
import { crashAtStepFromEnvironment } from './crash-at-step.fault';
import type { DedupeIndexSettings } from './dedupe-index.port';
import { DeduplicatedTrackingLog } from './deduplicated-tracking-log';
import { INDEX_LOCKED } from './hour-bucketed.store';
import { WorkerDedupeIndex } from './worker-dedupe-index.adapter';

export interface DeduplicateTrackingLogOptions {
  /** `NATS_URL`: the log's servers; the index's own connections read the ids back from there. */
  natsUrl: string;
  /** `DEDUPE_WINDOW`: how long an id is remembered. */
  windowMs: number;
  /** `DEDUPE_GUARD_WINDOW`: the tracking stream's own duplicate window, under the index. */
  guardWindowMs: number;
  /** `DEDUPE_INDEX_DIR` (or `DATA_DIR`): where the index file lives; one per replica. */
  indexDir: string;
  /** `DEDUPE_INDEX_MAX_BYTES`: the index's disk cap (0: none); over it the oldest hour goes early. */
  maxBytes?: number;
}

const STARTUP_CATCH_UP_WAIT_MS = 10_000;

export const DEDUPE_INDEX_FILE_NAME = 'dedupe-index.sqlite';

/**
 * Puts the dedupe index in front of the tracking log of a process that publishes (the tracking API,
 * the all-in-one): opens the index file, starts following the log, and waits a little for it to
 * catch up. Closing what it returns closes the index, its feed and `log`.
 */
export async function deduplicateTrackingLog(
  log: TrackingLog,
  options: DeduplicateTrackingLogOptions,
): Promise<DeduplicatedTrackingLog> {
  let feed: JetStreamMessageIdFeed | undefined;
  let index: WorkerDedupeIndex | undefined;
  try {
    feed = await JetStreamMessageIdFeed.connect(options.natsUrl);
    index = await startIndexInFreeFile(options.indexDir, options.natsUrl, {
      windowMs: options.windowMs,
      maxBytes: options.maxBytes,
    });
    const deduplicated = await DeduplicatedTrackingLog.start(log, index, feed, {
      guardWindowMs: options.guardWindowMs,
      windowMs: options.windowMs,
      faults: crashAtStepFromEnvironment(process.env),
    });
    // A short catch-up (the usual restart) finishes before the process listens; a long one goes on
    // while it serves, with `/health/ready` down and publishes answered 503 until it is done.
    await deduplicated.whenCaughtUp(STARTUP_CATCH_UP_WAIT_MS).catch(() => undefined);
    return deduplicated;
  } catch (error) {
    await index?.close().catch(() => undefined);
    await feed?.close();
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
