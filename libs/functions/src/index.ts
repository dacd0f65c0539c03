export * from './function-runner.port';
export * from './function-outcome.decider';
export { declaredEntries } from './function-code';
export {
  createFunctionRunner,
  FUNCTION_TIMEOUT_MS,
  FUNCTION_MEMORY_MB,
  FUNCTION_MAX_CODE_BYTES,
  FUNCTION_WORKERS,
  FUNCTION_MAX_BATCH,
  type BatchingFunctionRunner,
  type FunctionRunnerOptions,
} from './function-runner';
export * from './function-metrics';
export * from './function-metrics.prometheus';
export * from './function-invoker';
export * from './function-runner.module';
