/**
 * @tributary/routing: pure decisions about which destinations get a message and in what form
 * (docs/architecture.md). No I/O, no Nest, no clock reads: the caller passes `now`.
 */
export * from './delivery/delivery.decider';
export * from './integrations/integrations.decider';
export * from './replay/prepare-replay-message';
export * from './replay/replay-progress';
export * from './settlement/settlement.decider';
export * from './settlement/poison.decider';
export * from './filters/destination-filters.decider';
export * from './filters/filter-actions.compiler';
export * from './filters/sample.decider';
export * from './filters/destination-filter.errors';
export * from './fql/fql-condition.compiler';
export * from './fql/fql-condition.evaluator';
export { MAX_MATCH_GLOB_LENGTH } from './fql/fql-glob';
export * from './filters/field-path';
