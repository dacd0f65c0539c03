import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  configStoreModules,
  createHttpApplication,
  eventLogModule,
  loadEnvironment,
  runEntryPoint,
  serveUntilSignalled,
} from '@tributary/platform';
import { ConfigApiAccessModule } from '../../config-api/src/shared/config-api-access.module';
import { ConfigApiErrorFilter } from '../../config-api/src/shared/error.filter';
import { HealthController } from '../../tributary/src/health/health.controller';
import { RouterModule } from './router.module';

/**
 * The router alone: the destination consumers, replays and redrives, with `/health/*` and its own
 * Config API routes (dead letters, delivery metrics) behind the Config API's guard. The rest of
 * `/v1beta` is the Config API process's: serving it here too would run a second instance bootstrap.
 *
 * Several replicas may run against one JetStream: each destination's consumer has the same durable
 * name in every replica (`destination_<sourceId>_<slug>`), and JetStream hands each message to one
 * of the processes pulling from a durable consumer, so the replicas share the work instead of
 * delivering twice. See README "Scaling out" for replays, redrives and metrics.
 */
async function main(): Promise<void> {
  const environment = loadEnvironment();
  @Module({
    imports: [
      ...configStoreModules(environment),
      eventLogModule(environment, { publishesTracking: false }),
      ConfigApiAccessModule.register(environment),
      RouterModule.register(environment),
      TerminusModule,
    ],
    controllers: [HealthController],
    // Requests that match no route never reach a controller's own filter.
    providers: [{ provide: APP_FILTER, useClass: ConfigApiErrorFilter }],
  })
  class RouterAppModule {}
  const app = await createHttpApplication(RouterAppModule, environment.LOG_LEVEL, { apis: 'config' });
  await serveUntilSignalled(app, environment, 'tributary router');
}

runEntryPoint(main);
