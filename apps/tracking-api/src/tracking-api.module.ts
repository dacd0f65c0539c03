import { DynamicModule, Module } from '@nestjs/common';
import { DEDUPE_INDEX_METRICS, registerDedupeIndexMetrics } from '@tributary/dedupe';
import { MAX_SEEN_ONCE_TTL_MS, TRACKING_LOG } from '@tributary/event-log';
import { FunctionRunnerModule } from '@tributary/functions';
import { Environment, ENVIRONMENT, MetricsRegistry, RateLimiter, ServedSurface } from '@tributary/platform';
import { AnalyticsJsController } from './browser-sources/analytics-js.controller';
import { AnalyticsNextAssets } from './browser-sources/analytics-next-assets';
import { ClientMetricsController } from './browser-sources/client-metrics.controller';
import { ProjectSettingsController } from './browser-sources/project-settings.controller';
import { IngestMessagesController } from './ingest-messages/ingest-messages.controller';
import { WrongMethodController } from './ingest-messages/wrong-method.controller';
import { IngestMessagesHandler, TRACKING_RATE_LIMITER } from './ingest-messages/ingest-messages.handler';
import { OAuthErrorFilter, OAuthTokenController } from './oauth-token/oauth-token.controller';
import {
  OAuthTokenHandler,
  TOKEN_ADDRESS_RATE_LIMITER,
  TOKEN_RATE_LIMITER,
  TOKEN_WORKSPACE_RATE_LIMITER,
} from './oauth-token/oauth-token.handler';
import { ProtocolsEnforcement } from './protocols-enforcement/protocols-enforcement.service';
import { ProtocolsMetrics } from './protocols-enforcement/protocols.metrics';
import { SourceEnforcementRegistry } from './protocols-enforcement/source-enforcement.registry';
import { TrackingApiErrorFilter } from './shared/tracking-api-error.filter';
import { SourceFunctionController } from './source-functions/source-function.controller';
import { SourceFunctionHandler } from './source-functions/source-function.handler';
import { TrackingCounters } from './shared/tracking-counters';
import { TrackingMetrics } from './shared/tracking-metrics';

/**
 * The tracking API: `/v1/*` into the event log, `/token` for OAuth clients, and what Segment's
 * browser and mobile libraries fetch (the analytics.js loader and chunks, the settings); needs
 * `ConfigProjectionsModule`, `EventLogModule` and `SecretBoxModule`.
 */
@Module({})
export class TrackingApiModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TrackingApiModule,
      controllers: [
        ClientMetricsController,
        ProjectSettingsController,
        AnalyticsJsController,
        // Before the `/v1/:route` controllers: Fastify prefers the static `/v1/fn` anyway.
        SourceFunctionController,
        IngestMessagesController,
        WrongMethodController,
        OAuthTokenController,
      ],
      providers: [
        { provide: ENVIRONMENT, useValue: environment },
        {
          provide: TRACKING_RATE_LIMITER,
          useFactory: () =>
            environment.TRACKING_RATE_LIMIT ? new RateLimiter(environment.TRACKING_RATE_LIMIT, 1_000) : null,
        },
        TrackingCounters,
        TrackingMetrics,
        {
          provide: DEDUPE_INDEX_METRICS,
          inject: [MetricsRegistry, TRACKING_LOG],
          useFactory: registerDedupeIndexMetrics,
        },
        TrackingApiErrorFilter,
        AnalyticsNextAssets,
        ProtocolsMetrics,
        SourceEnforcementRegistry,
        ProtocolsEnforcement,
        IngestMessagesHandler,
        SourceFunctionHandler,
        OAuthTokenHandler,
        { provide: TOKEN_RATE_LIMITER, useFactory: () => new RateLimiter(20, 1_000) },
        {
          // Over the time a replay record may hold its place in the shared store (MAX_SEEN_ONCE_TTL_MS).
          provide: TOKEN_WORKSPACE_RATE_LIMITER,
          useFactory: () => new RateLimiter(environment.OAUTH_ASSERTIONS_PER_WORKSPACE, MAX_SEEN_ONCE_TTL_MS),
        },
        { provide: TOKEN_ADDRESS_RATE_LIMITER, useFactory: () => new RateLimiter(200, 1_000) },
      ],
      exports: [TrackingCounters, TrackingApiErrorFilter],
    };
  }
}

/**
 * The tracking API as a process serves it. Alone on its port it answers every unrouted request in
 * its `{success, code, message, error}` shape; beside the Config API it claims every path outside
 * `/v1beta`, and `/token` in RFC 6749's shape (failures Fastify raises before the token route's own
 * filter runs, docs/tracking-api.md §11.5).
 */
export function trackingApiSurface(environment: Environment): ServedSurface {
  const errorFilter = new TrackingApiErrorFilter();
  return {
    // Source functions: one runner per process, shared with the other surfaces.
    imports: [FunctionRunnerModule.register(environment), TrackingApiModule.register(environment)],
    publishesTracking: true,
    edgeApi: 'tracking',
    errorFilter,
    claimedPaths: [
      { claims: (path) => path === '/token', errorFilter: new OAuthErrorFilter() },
      { claims: (path) => !path.startsWith('/v1beta'), errorFilter },
    ],
  };
}
