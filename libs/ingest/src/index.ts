/**
 * @tributary/ingest: pure handling of tracking API requests (docs/tracking-api.md §4, §5–§8).
 * No I/O, no Nest, no clock reads: the caller passes `receivedAt` and an id generator.
 */
export * from './ingest-result';
export * from './ingest-limits';
export * from './inflate/inflate-body';
export * from './write-key/resolve-write-key';
export * from './parse/parse-tracking-body';
export * from './timestamps/lenient-timestamp';
export * from './timestamps/resolve-timestamps';
export * from './normalize/normalize-message';
export * from './normalize/normalize-request';
