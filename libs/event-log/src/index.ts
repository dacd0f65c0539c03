export * from './event-log.port';
export * from './create-event-log';
export {
  JetStreamEventLog,
  TRACKING_STREAM,
  DEAD_LETTER_STREAM,
  SEEN_ONCE_STREAM,
  LEASE_STREAM,
  type JetStreamEventLogOptions,
} from './adapters/jetstream/jetstream-event-log.adapter';
export { SqliteEventLog, type SqliteEventLogOptions } from './adapters/sqlite/sqlite-event-log.adapter';
export * from './event-log.module';
export { assertValidMessages } from './event-log.validation';
// For readers of the TRACKING stream beside the adapter (the dedupe index's id feed): its subjects,
// and the parsing of raw consumer messages that skips the client's per-message objects.
export { trackingFilter } from './adapters/jetstream/jetstream-streams';
export {
  headerValue,
  rawFieldsOf,
  readReplyInfo,
  type ReplyInfo,
} from './adapters/jetstream/raw-consumer-message';
