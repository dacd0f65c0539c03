export * from './keyed-lock';
export * from './keyed-concurrency-limit';
