import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  HealthController,
  configStoreModules,
  createHttpApplication,
  eventLogModule,
  loadEnvironment,
  httpApplicationOptionsOf,
  runEntryPoint,
  serveUntilSignalled,
} from '@tributary/platform';
import { TrackingApiErrorFilter } from './shared/tracking-api-error.filter';
import { TrackingApiModule } from './tracking-api.module';

/**
 * The tracking API alone (`/v1/*`, `/token`, `/health/*`): stateless apart from its read model of the
 * config, so any number of replicas can run behind a load balancer. Every replica needs the same
 * `EVENTSTORE_URL` (or `DATA_DIR` with the SQLite store), `NATS_URL` and `TRIBUTARY_SECRET_KEY`.
 */
async function main(): Promise<void> {
  const environment = loadEnvironment();
  @Module({
    imports: [
      ...configStoreModules(environment),
      eventLogModule(environment),
      TrackingApiModule.register(environment),
      TerminusModule,
    ],
    controllers: [HealthController],
    // Requests that match no route never reach a controller's own filter.
    providers: [{ provide: APP_FILTER, useClass: TrackingApiErrorFilter }],
  })
  class TrackingApiAppModule {}
  const app = await createHttpApplication(TrackingApiAppModule, environment.LOG_LEVEL, {
    apis: 'tracking',
    ...httpApplicationOptionsOf(environment),
  });
  await serveUntilSignalled(app, environment, 'tributary tracking-api');
}

runEntryPoint(main);
