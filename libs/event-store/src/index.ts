export * from './event-store.port';
export * from './event-store-unavailable.error';
export { SqliteEventStore, type SqliteEventStoreOptions } from './adapters/sqlite/sqlite-event-store.adapter';
export {
  KurrentDbEventStore,
  UNKNOWN_POSITION,
  type KurrentDbEventStoreOptions,
} from './adapters/kurrentdb/kurrentdb-event-store.adapter';
export type { ReconnectPolicy } from './adapters/kurrentdb/kurrentdb-all-subscription';
export {
  createEventStore,
  SQLITE_EVENT_STORE_FILE,
  type CreateEventStoreOptions,
} from './create-event-store';
