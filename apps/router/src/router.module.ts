import { DynamicModule, Module } from '@nestjs/common';
import { LEASES, type Leases } from '@tributary/event-log';
import { ConfigApiAccessModule, ConfigApiErrorFilter } from '@tributary/config-api-access';
import { FunctionRunnerModule } from '@tributary/functions';
import { Environment, ENVIRONMENT, ServedSurface } from '@tributary/platform';
import { DeadLetterRedriver } from './dead-letters/dead-letter-redriver.service';
import { DeadLettersController } from './dead-letters/dead-letters.controller';
import { DeliveryMetrics } from './delivery-metrics/delivery-metrics';
import { DeliveryMetricsController } from './delivery-metrics/delivery-metrics.controller';
import { RouterMetricsCollector } from './delivery-metrics/router-metrics.collector';
import { DestinationConsumers } from './destination-consumers/destination-consumers.service';
import { DeliveryTargets } from './destination-consumers/delivery-targets.service';
import { FunctionMetricsController } from './function-metrics/function-metrics.controller';
import { DestinationDeliveries } from './destination-consumers/destination-deliveries.service';
import { MessageDeliverer } from './destination-consumers/message-deliverer.service';
import { JobLeases } from './job-leases/job-leases';
import { MessageDeliveriesController } from './message-deliveries/message-deliveries.controller';
import { RecentMessageOutcomes } from './message-deliveries/recent-message-outcomes';
import { RegulationRunner } from './regulations/regulation-runner.service';
import { ReplayRunner } from './replays/replay-runner.service';

/**
 * The router: one consumer per destination, replays and dead-letter redrives; with its Config API
 * routes for dead letters, delivery metrics and function metrics. Needs `ConfigProjectionsModule`,
 * `EventLogModule`, `SecretBoxModule`, `MetricsModule` and `FunctionMetricsModule`; its routes use
 * the Config API's authentication (`ConfigApiAccessModule`).
 */
@Module({})
export class RouterModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: RouterModule,
      controllers: [
        DeadLettersController,
        DeliveryMetricsController,
        FunctionMetricsController,
        MessageDeliveriesController,
      ],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        { provide: DeliveryMetrics, useFactory: () => new DeliveryMetrics() },
        { provide: RecentMessageOutcomes, useFactory: () => new RecentMessageOutcomes() },
        DeliveryTargets,
        DestinationDeliveries,
        MessageDeliverer,
        DestinationConsumers,
        // Which replica runs a replay or a redrive: leases kept in the event log (JetStream or sqlite).
        {
          provide: JobLeases,
          useFactory: (leases: Leases) => new JobLeases(leases),
          inject: [LEASES],
        },
        ReplayRunner,
        DeadLetterRedriver,
        RegulationRunner,
        RouterMetricsCollector,
      ],
      exports: [DeliveryMetrics, DestinationConsumers],
    };
  }
}

/**
 * The router as a process serves it: the destination consumers, replays and redrives, and its own
 * Config API routes (dead letters, delivery metrics) behind the Config API's guard, answering errors
 * in `{error, code}`. The rest of `/v1beta` is the Config API process's: serving it here too would
 * run a second instance bootstrap.
 */
export function routerSurface(environment: Environment): ServedSurface {
  const errorFilter = new ConfigApiErrorFilter();
  return {
    imports: [
      ConfigApiAccessModule.register(environment),
      // Destination and insert functions: one runner per process, shared with the other surfaces.
      FunctionRunnerModule.register(environment),
      RouterModule.register(environment),
    ],
    edgeApi: 'config',
    errorFilter,
    claimedPaths: [{ claims: (path) => path.startsWith('/v1beta'), errorFilter }],
  };
}
