export * from './function-runner.port';
export * from './function-metrics';
export * from './function-metrics.prometheus';
export * from './function-invoker';
export * from './function-runner.module';
