import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  CONFIG_PROJECTION_METRICS,
  ConfigReadModel,
  registerConfigProjectionMetrics,
} from '@tributary/config-projections';
import {
  HealthController,
  configStoreModules,
  createHttpApplication,
  eventLogModule,
  loadEnvironment,
  httpApplicationOptionsOf,
  MetricsRegistry,
  runEntryPoint,
  serveUntilSignalled,
} from '@tributary/platform';
import { ConfigApiModule } from './config-api.module';
import { serveConfigApiOpenApiDocument, ConfigApiErrorFilter } from '@tributary/config-api-access';

async function main(): Promise<void> {
  const environment = loadEnvironment();
  @Module({
    // The message log is read by the live events (the console's debugger) and the violations route
    // (Protocols outcomes are kept in its store).
    imports: [
      ...configStoreModules(environment),
      eventLogModule(environment),
      ConfigApiModule.register(environment),
      TerminusModule,
    ],
    controllers: [HealthController],
    // Requests that match no route never reach a controller's own filter.
    providers: [
      { provide: APP_FILTER, useClass: ConfigApiErrorFilter },
      {
        provide: CONFIG_PROJECTION_METRICS,
        inject: [MetricsRegistry, ConfigReadModel],
        useFactory: registerConfigProjectionMetrics,
      },
    ],
  })
  class ConfigApiAppModule {}
  const app = await createHttpApplication(ConfigApiAppModule, environment.LOG_LEVEL, {
    apis: 'config',
    ...httpApplicationOptionsOf(environment),
  });
  serveConfigApiOpenApiDocument(app);
  await serveUntilSignalled(app, environment, 'tributary config-api');
}

runEntryPoint(main);
