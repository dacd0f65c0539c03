import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { SecretBoxModule } from '@tributary/auth';
import {
  CONFIG_PROJECTION_METRICS,
  ConfigProjectionsModule,
  ConfigReadModel,
  registerConfigProjectionMetrics,
} from '@tributary/config-projections';
import { join } from 'node:path';
import { EventLogModule } from '@tributary/event-log';
import { Environment, MetricsRegistry } from '@tributary/platform';
import { ConfigApiModule } from '../../config-api/src/config-api.module';
import { RouterModule } from '../../router/src/router.module';
import { TrackingApiModule } from '../../tracking-api/src/tracking-api.module';
import { HealthController } from './health/health.controller';
import { RouteNotFoundFilter } from './route-not-found.filter';

/** Every Tributary surface in one process on one port: the embedded default behind `npm start`. */
@Module({})
export class TributaryModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TributaryModule,
      imports: [
        ConfigProjectionsModule.register({
          eventStoreUrl: environment.EVENTSTORE_URL,
          dataDir: environment.DATA_DIR,
        }),
        SecretBoxModule.register({
          secretKeyHex: environment.TRIBUTARY_SECRET_KEY,
          keyFile: join(environment.DATA_DIR, 'deployment.key'),
        }),
        EventLogModule.register({
          natsUrl: environment.NATS_URL,
          dataDir: environment.DATA_DIR,
          dedupeWindowMs: environment.DEDUPE_WINDOW,
          retentionMs: environment.RETENTION,
        }),
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
