import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ConfigApiErrorFilter } from '../../config-api/src/shared/error.filter';
import { TrackingApiErrorFilter } from '../../tracking-api/src/shared/tracking-api-error.filter';

/**
 * Requests that match no route never reach a controller's filter; this one answers them in the
 * error shape of the API their path belongs to.
 */
@Catch()
export class RouteNotFoundFilter implements ExceptionFilter {
  constructor(
    private readonly configApiErrors: ConfigApiErrorFilter,
    private readonly trackingApiErrors: TrackingApiErrorFilter,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const filter = request.url.startsWith('/v1beta') ? this.configApiErrors : this.trackingApiErrors;
    filter.catch(exception, host);
  }
}
