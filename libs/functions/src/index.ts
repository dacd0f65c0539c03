export * from './function-runner.port';
export * from './function-metrics';
export * from './function-metrics.prometheus';
