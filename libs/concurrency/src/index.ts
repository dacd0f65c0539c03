export * from './keyed-lock';
export * from './concurrency-limit';
