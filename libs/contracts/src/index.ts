export const CONTRACTS_VERSION = 1;

export * from './tracking';
