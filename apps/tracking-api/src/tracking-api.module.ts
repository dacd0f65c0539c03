import { DynamicModule, Module } from '@nestjs/common';
import { DEDUPE_INDEX_METRICS, EVENT_LOG, registerDedupeIndexMetrics } from '@tributary/event-log';
import { Environment, ENVIRONMENT, MetricsRegistry, RateLimiter } from '@tributary/platform';
import { IngestMessagesController } from './ingest-messages/ingest-messages.controller';
import { IngestMessagesHandler, TRACKING_RATE_LIMITER } from './ingest-messages/ingest-messages.handler';
import { OAuthTokenController } from './oauth-token/oauth-token.controller';
import {
  OAuthTokenHandler,
  TOKEN_ADDRESS_RATE_LIMITER,
  TOKEN_RATE_LIMITER,
} from './oauth-token/oauth-token.handler';
import { TrackingApiErrorFilter } from './shared/tracking-api-error.filter';
import { TrackingCounters } from './shared/tracking-counters';
import { TrackingMetrics } from './shared/tracking-metrics';

/**
 * The tracking API: `/v1/*` into the event log, and `/token` for OAuth clients; needs
 * `ConfigProjectionsModule`, `EventLogModule` and `SecretBoxModule`.
 */
@Module({})
export class TrackingApiModule {
  static register(environment: Environment): DynamicModule {
    return {
      module: TrackingApiModule,
      controllers: [IngestMessagesController, OAuthTokenController],
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
          inject: [MetricsRegistry, EVENT_LOG],
          useFactory: registerDedupeIndexMetrics,
        },
        TrackingApiErrorFilter,
        IngestMessagesHandler,
        OAuthTokenHandler,
        { provide: TOKEN_RATE_LIMITER, useFactory: () => new RateLimiter(20, 1_000) },
        { provide: TOKEN_ADDRESS_RATE_LIMITER, useFactory: () => new RateLimiter(200, 1_000) },
      ],
      exports: [TrackingCounters, TrackingApiErrorFilter],
    };
  }
}
