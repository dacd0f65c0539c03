export const CONTRACTS_VERSION = 1;

export * from './secrets';
export * from './catalog/catalog.schemas';
