export * from './event-log.port';
export * from './protocols-outcomes.port';
export * from './function-logs.port';
export * from './create-event-log';
export {
  JetStreamEventLog,
  TRACKING_STREAM,
  DEAD_LETTER_STREAM,
  SEEN_ONCE_STREAM,
  type JetStreamEventLogOptions,
} from './adapters/jetstream/jetstream-event-log.adapter';
export { SqliteEventLog, type SqliteEventLogOptions } from './adapters/sqlite/sqlite-event-log.adapter';
// A nats-server launcher for tests and the bench. `tsconfig.build.json` leaves `testing/` out of the
// build's own files, but this export pulls the launcher into the build, so it must not use jest.
export { NatsServerProcess } from './testing/nats-server.process';
export * from './event-log.module';
export * from './dedupe/dedupe-index.port';
export {
  DeduplicatedEventLog,
  hasDedupeIndex,
  DEDUPE_WRITE_STEPS,
  type DedupeStatus,
  type DedupeStatusSource,
  type DedupeWriteStep,
  type DedupeFaultHook,
} from './dedupe/deduplicated-event-log';
export { SqliteDedupeIndex } from './dedupe/sqlite-dedupe-index.adapter';
export { WorkerDedupeIndex } from './dedupe/worker-dedupe-index.adapter';
export { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
export { CRASH_AT_STEP_VARIABLE } from './dedupe/crash-at-step.fault';
export { registerDedupeIndexMetrics, DEDUPE_INDEX_METRICS } from './dedupe/dedupe-index.metrics';
