import { DynamicModule, ExceptionFilter, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TerminusModule } from '@nestjs/terminus';
import { Environment, httpApplicationOptionsOf, loadEnvironment } from '../environment';
import { HealthController } from '../health/health.controller';
import { createHttpApplication, HttpApplicationOptions } from '../http/http-server';
import type { HttpApis } from '../http/http-edge';
import { runEntryPoint, serveUntilSignalled } from '../http/serve-entry-point';
import { configStoreModules, eventLogModule } from '../infrastructure.modules';
import { FunctionMetricsModule } from '../function-metrics.module';
import { RouteNotFoundFilter } from './route-not-found.filter';
import type { ServedSurface } from './served-surface';

/** The root of a process: the stores, its surfaces, and `/health/*`. */
@Module({})
class ProcessModule {
  static register(environment: Environment, surfaces: readonly ServedSurface[]): DynamicModule {
    return {
      module: ProcessModule,
      // The Config API's live events and violations read the message log too: every process opens it.
      imports: [
        ...configStoreModules(environment),
        eventLogModule(environment, {
          publishesTracking: surfaces.some((surface) => surface.publishesTracking === true),
        }),
        // Tenant functions run in the router and the tracking API: one set of counts per process.
        FunctionMetricsModule.register(),
        ...surfaces.flatMap((surface) => surface.imports),
        TerminusModule,
      ],
      controllers: [HealthController],
      providers: [
        // Requests that match no route never reach a controller's own filter.
        { provide: APP_FILTER, useValue: unroutedRequestFilter(surfaces) },
        ...surfaces.flatMap((surface) => surface.providers ?? []),
      ],
    };
  }
}

/**
 * Builds the HTTP application of a process that serves `surfaces` on one port: every entry point
 * (the standalone apps and the all-in-one) and the tests start a process this way.
 */
export async function createProcessApplication(
  environment: Environment,
  surfaces: readonly ServedSurface[],
  options: HttpApplicationOptions = {},
): Promise<NestFastifyApplication> {
  if (surfaces.length === 0) throw new Error('a process serves at least one surface');
  const app = await createHttpApplication(
    ProcessModule.register(environment, surfaces),
    environment.LOG_LEVEL,
    {
      apis: edgeApisOf(surfaces),
      ...httpApplicationOptionsOf(environment),
      ...options,
    },
  );
  for (const surface of surfaces) surface.onCreated?.(app);
  return app;
}

/**
 * The entry point of a process: reads the environment, builds the application from the surfaces it
 * serves, and serves it until SIGTERM/SIGINT (`serveUntilSignalled`); a failure to start exits 1.
 */
export function runProcess(
  name: string,
  surfacesOf: (environment: Environment) => ServedSurface[],
  detailOf: (environment: Environment) => string = () => '',
): void {
  runEntryPoint(async () => {
    const environment = loadEnvironment();
    const app = await createProcessApplication(environment, surfacesOf(environment));
    await serveUntilSignalled(app, environment, name, detailOf(environment));
  });
}

/**
 * Unrouted requests are answered in the shape of the surface claiming their path, else the first
 * surface's: even a surface alone may serve two APIs (the Config API's `/v1beta` and `/public-api`).
 */
function unroutedRequestFilter(surfaces: readonly ServedSurface[]): ExceptionFilter {
  return new RouteNotFoundFilter(surfaces);
}

function edgeApisOf(surfaces: readonly ServedSurface[]): HttpApis {
  const apis = new Set(surfaces.map((surface) => surface.edgeApi));
  return apis.size === 1 ? [...apis][0] : 'all';
}
