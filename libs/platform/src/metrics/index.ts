export * from './metrics.registry';
export * from './metrics.module';
export * from './metrics.listener';
export * from './http-metrics';
