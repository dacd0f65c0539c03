export * from './keyed-lock';
