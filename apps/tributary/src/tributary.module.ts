import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  CONFIG_PROJECTION_METRICS,
  ConfigReadModel,
  registerConfigProjectionMetrics,
} from '@tributary/config-projections';
import { ConfigApiModule } from '../../config-api/src/config-api.module';
import { RouterModule } from '../../router/src/router.module';
import { TrackingApiModule } from '../../tracking-api/src/tracking-api.module';
import {
  HealthController,
  configStoreModules,
  Environment,
  eventLogModule,
  MetricsRegistry,
} from '@tributary/platform';
import { RouteNotFoundFilter } from './route-not-found.filter';

/** Every Tributary surface in one process on one port: the embedded default behind `npm start`. */
@Module({})
export class TributaryModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TributaryModule,
      imports: [
        ...configStoreModules(environment),
        eventLogModule(environment),
        ConfigApiModule.register(environment),
        TrackingApiModule.register(environment),
        RouterModule.register(environment),
        TerminusModule,
      ],
      controllers: [HealthController],
      providers: [
        { provide: APP_FILTER, useClass: RouteNotFoundFilter },
        {
          provide: CONFIG_PROJECTION_METRICS,
          inject: [MetricsRegistry, ConfigReadModel],
          useFactory: registerConfigProjectionMetrics,
        },
      ],
    };
  }
}
