export * from './secrets';
export * from './catalog/catalog.schemas';
export * from './config-api/config-api.requests';
export * from './config-api/config-api.errors';
export * from './tracking';
export * from './config-api/config-api.resources';
export * from './config-api/resource-names';
export * from './http/retry-after';
