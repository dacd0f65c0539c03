export * from './dedupe-index.port';
export {
  DeduplicatedTrackingLog,
  hasDedupeIndex,
  type DedupeStatus,
  type DedupeStatusSource,
  type DedupeFaultHook,
} from './deduplicated-tracking-log';
export * from './deduplicate-tracking-log';
export { SqliteDedupeIndex } from './sqlite-dedupe-index.adapter';
export { WorkerDedupeIndex } from './worker-dedupe-index.adapter';
export { JetStreamMessageIdFeed } from './adapters/jetstream/jetstream-message-id.feed';
export { registerDedupeIndexMetrics, DEDUPE_INDEX_METRICS } from './dedupe-index.metrics';
