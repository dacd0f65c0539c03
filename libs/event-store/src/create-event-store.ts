import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KurrentDbEventStore } from './adapters/kurrentdb/kurrentdb-event-store.adapter';
import { SqliteEventStore } from './adapters/sqlite/sqlite-event-store.adapter';
import type { EventStore } from './event-store.port';

export interface CreateEventStoreOptions {
  /** `EVENTSTORE_URL`: a KurrentDB connection string; absent or empty selects the embedded store. */
  eventStoreUrl?: string;
  /** `DATA_DIR`: where the embedded store keeps its file; created when missing. */
  dataDir: string;
}

/** File name of the embedded store inside `dataDir`. */
export const SQLITE_EVENT_STORE_FILE = 'config-events.sqlite';

/** KurrentDB when a URL is configured, otherwise SQLite at `<dataDir>/config-events.sqlite`. */
export function createEventStore(options: CreateEventStoreOptions): EventStore {
  if (options.eventStoreUrl) return new KurrentDbEventStore(options.eventStoreUrl);
  mkdirSync(options.dataDir, { recursive: true });
  return new SqliteEventStore(join(options.dataDir, SQLITE_EVENT_STORE_FILE));
}
