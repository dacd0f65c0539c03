import {
  ArgumentsHost,
  Catch,
  Controller,
  ExceptionFilter,
  Get,
  HttpException,
  Inject,
  Optional,
  UseFilters,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { hasDedupeIndex } from '@tributary/dedupe';
import { TRACKING_LOG, type TrackingLog } from '@tributary/event-log';
import { EVENT_STORE, EventStore } from '@tributary/event-store';
import type { FastifyReply } from 'fastify';

/** A failed readiness check answers 503 with terminus's own report of which part is down. */
@Catch(HttpException)
class HealthReportFilter implements ExceptionFilter {
  catch(exception: HttpException, host: ArgumentsHost): void {
    host
      .switchToHttp()
      .getResponse<FastifyReply>()
      .status(exception.getStatus())
      .send(exception.getResponse());
  }
}

/**
 * `/health/live`: the process runs. `/health/ready`: it can do its work, that is the config event
 * store and the message log both answer (and, on NATS, the dedupe index has caught up with the log);
 * a load balancer sends traffic only then. Every app serves it (the standalone Config API reads the
 * message log too, for the live events).
 */
@ApiExcludeController()
@Controller('health')
@UseFilters(HealthReportFilter)
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
    @Optional() @Inject(TRACKING_LOG) private readonly trackingLog: TrackingLog | null,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    const trackingLog = this.trackingLog;
    return this.health.check([
      () => this.check('event_store', () => this.eventStore.ping()),
      ...(trackingLog ? [() => this.check('event_log', () => trackingLog.ping())] : []),
      // Until the dedupe index has read the log up to date, a lookup could miss a stored id.
      ...(hasDedupeIndex(trackingLog) ? [() => this.dedupeIndex(trackingLog)] : []),
    ]);
  }

  private dedupeIndex(source: { dedupeStatus(): { ready: boolean; reason?: string } }) {
    const indicator = this.indicators.check('dedupe_index');
    const status = source.dedupeStatus();
    return status.ready ? indicator.up() : indicator.down({ message: status.reason ?? 'not ready' });
  }

  private async check(name: string, ping: () => Promise<boolean>) {
    const indicator = this.indicators.check(name);
    const answers = await Promise.race([
      ping().catch(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2_000).unref()),
    ]);
    return answers ? indicator.up() : indicator.down({ message: `${name} does not answer` });
  }
}
