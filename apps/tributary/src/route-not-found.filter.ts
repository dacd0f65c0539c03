import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ConfigApiErrorFilter } from '@tributary/config-api-access';
import { OAuthErrorFilter } from '../../tracking-api/src/oauth-token/oauth-token.controller';
import { TrackingApiErrorFilter } from '../../tracking-api/src/shared/tracking-api-error.filter';

/**
 * Requests that match no route never reach a controller's filter; this one answers them in the
 * error shape of the API their path belongs to.
 */
@Catch()
export class RouteNotFoundFilter implements ExceptionFilter {
  /** Failures Fastify raises before the token route's own filter runs (spec §11.5: RFC 6749 bodies). */
  private readonly oauthErrors = new OAuthErrorFilter();

  constructor(
    private readonly configApiErrors: ConfigApiErrorFilter,
    private readonly trackingApiErrors: TrackingApiErrorFilter,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const path = request.url.split('?')[0];
    if (path === '/token') return this.oauthErrors.catch(exception, host);
    const filter = path.startsWith('/v1beta') ? this.configApiErrors : this.trackingApiErrors;
    filter.catch(exception, host);
  }
}
