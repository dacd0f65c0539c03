import { DynamicModule, Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { FUNCTION_LOG_STORE, type FunctionLogStore } from '@tributary/event-log';
import { createFunctionRunner } from './function-runner';
import { FunctionInvoker } from './function-invoker';
import { FunctionMetrics } from './function-metrics';
import { FUNCTION_RUNNER, type FunctionRunner } from './function-runner.port';

/** The settings the runner is made from (the environment's `FUNCTION_*` and egress settings). */
export interface FunctionRunnerSettings {
  readonly FUNCTION_TIMEOUT: number;
  readonly FUNCTION_MEMORY_MB: number;
  readonly FUNCTION_WORKERS: number;
  readonly FUNCTION_MAX_CODE_BYTES: number;
  readonly TRIBUTARY_EGRESS: 'open' | 'public';
  readonly TRIBUTARY_EGRESS_ALLOW?: string;
}

/**
 * Ends the runner's worker processes when the application shuts down. Global modules shut down
 * after the apps' own, so the router has waited for its deliveries in flight before this runs.
 */
@Injectable()
class FunctionRunnerLifecycle implements OnApplicationShutdown {
  constructor(@Inject(FUNCTION_RUNNER) private readonly runner: FunctionRunner) {}

  async onApplicationShutdown(): Promise<void> {
    await this.runner.close();
  }
}

/**
 * One function runner per process, whichever of its surfaces import this (the router, the tracking
 * API, the Config API; all three in the all-in-one), with the invoker that keeps logs and counts
 * outcomes. Global; the log store comes from `EventLogModule`, the metrics from `FunctionMetricsModule`.
 */
@Module({})
export class FunctionRunnerModule {
  private static readonly registered = new WeakMap<FunctionRunnerSettings, DynamicModule>();

  static register(settings: FunctionRunnerSettings): DynamicModule {
    let module = this.registered.get(settings);
    if (!module) {
      module = this.create(settings);
      this.registered.set(settings, module);
    }
    return module;
  }

  private static create(settings: FunctionRunnerSettings): DynamicModule {
    return {
      module: FunctionRunnerModule,
      global: true,
      providers: [
        {
          provide: FUNCTION_RUNNER,
          useFactory: () =>
            createFunctionRunner({
              timeoutMs: settings.FUNCTION_TIMEOUT,
              memoryMb: settings.FUNCTION_MEMORY_MB,
              workers: settings.FUNCTION_WORKERS,
              maxCodeBytes: settings.FUNCTION_MAX_CODE_BYTES,
              // The deployment's egress policy, as for every other outbound connection (docs/egress.md).
              egress: { mode: settings.TRIBUTARY_EGRESS, allow: settings.TRIBUTARY_EGRESS_ALLOW ?? '' },
            }),
        },
        FunctionRunnerLifecycle,
        {
          provide: FunctionInvoker,
          inject: [FUNCTION_RUNNER, FunctionMetrics, { token: FUNCTION_LOG_STORE, optional: true }],
          useFactory: (runner: FunctionRunner, metrics: FunctionMetrics, logStore?: FunctionLogStore) => {
            const logger = new Logger('Functions');
            return new FunctionInvoker(runner, metrics, logStore, (message) => logger.warn(message));
          },
        },
      ],
      exports: [FUNCTION_RUNNER, FunctionInvoker],
    };
  }
}
