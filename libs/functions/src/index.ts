export * from './function-runner.port';
export * from './function-invoker';
export * from './function-runner.module';
