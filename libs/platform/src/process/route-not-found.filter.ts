import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { ServedSurface } from './served-surface';

/**
 * Requests that match no route never reach a controller's filter; this one answers them in the
 * error shape of the surface their path belongs to: the first surface that claims it, in the order
 * the process lists them.
 */
@Catch()
export class RouteNotFoundFilter implements ExceptionFilter {
  constructor(private readonly surfaces: readonly ServedSurface[]) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const path = host.switchToHttp().getRequest<FastifyRequest>().url.split('?')[0];
    const claim = this.surfaces.flatMap((surface) => surface.claimedPaths).find(({ claims }) => claims(path));
    (claim?.errorFilter ?? this.surfaces[0].errorFilter).catch(exception, host);
  }
}
