export * from './function-runner.port';
