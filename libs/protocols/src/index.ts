/**
 * @tributary/protocols: tracking-plan enforcement (docs/protocols.md). Pure: a plan version is
 * compiled once into validate functions, then every message gets a verdict (allow, allow with
 * omissions and a report, or block) and the messages to forward. No I/O, no Nest, no clock reads.
 */
export * from './protocols.types';
export * from './plan/compile-plan';
export * from './schema/schema-compiler';
export * from './schema/plan-regexp';
export * from './schema/plan-patterns';
export * from './schema/violation-from-error';
export * from './enforce/judge-message';
export * from './enforce/forwards';
export * from './counting/violation-summary';
