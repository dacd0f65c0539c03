import { DynamicModule, Global, Module } from '@nestjs/common';
import { FunctionMetrics, registerFunctionMetrics } from '@tributary/functions';
import { MetricsRegistry } from './metrics/metrics.registry';

/**
 * The process's one `FunctionMetrics` (global, so the router and the tracking API record into, and
 * the router's `metrics` route reads, the same counts), with its Prometheus series registered once
 * on the process's registry: in the all-in-one the surfaces share both, and registering the series
 * per surface would register them twice.
 */
@Global()
@Module({})
export class FunctionMetricsModule {
  static register(): DynamicModule {
    return {
      module: FunctionMetricsModule,
      providers: [
        {
          provide: FunctionMetrics,
          inject: [MetricsRegistry],
          useFactory: (registry: MetricsRegistry) => {
            const metrics = new FunctionMetrics();
            registerFunctionMetrics(registry, metrics);
            return metrics;
          },
        },
      ],
      exports: [FunctionMetrics],
    };
  }
}
