export * from './event-log.port';
export * from './protocols-outcomes.port';
export * from './create-event-log';
export {
  JetStreamEventLog,
  TRACKING_STREAM,
  DEAD_LETTER_STREAM,
  SEEN_ONCE_STREAM,
  type JetStreamEventLogOptions,
} from './adapters/jetstream/jetstream-event-log.adapter';
export { SqliteEventLog, type SqliteEventLogOptions } from './adapters/sqlite/sqlite-event-log.adapter';
// A nats-server launcher for tests and the bench (it has no jest dependency, so the build may carry it).
export { NatsServerProcess } from './testing/nats-server.process';
export * from './event-log.module';
