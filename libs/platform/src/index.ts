export * from './environment';
export * from './http/request-url';
export * from './http/http-server';
export * from './http/graceful-shutdown';
export * from './rate-limiter';
export * from './logging';
export * from './metrics';
export * from './infrastructure.modules';
