export const CONTRACTS_VERSION = 1;
