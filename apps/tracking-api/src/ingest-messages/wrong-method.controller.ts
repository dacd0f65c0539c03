import {
  Controller,
  Delete,
  Get,
  NotFoundException,
  Param,
  Patch,
  Put,
  Req,
  UseFilters,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { trackingRouteOf } from '@tributary/contracts';
import type { FastifyRequest } from 'fastify';
import { TrackingApiError } from '../shared/tracking-api.error';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';

/**
 * A tracking route asked with another method than POST is 405 with `Allow` (docs/tracking-api.md §3), so a developer
 * trying `curl https://host/v1/track` learns the route exists; a path that is no route stays 404.
 * (HEAD follows GET; OPTIONS is a CORS preflight, answered before routing.)
 */
@ApiExcludeController()
@Controller('v1')
@UseFilters(TrackingApiErrorFilter)
export class WrongMethodController {
  // One handler per method: Nest keeps only the last method decorator of a handler.
  @Get(':route')
  get(@Param('route') route: string, @Req() request: FastifyRequest): never {
    return refuse(route, request);
  }

  @Put(':route')
  put(@Param('route') route: string, @Req() request: FastifyRequest): never {
    return refuse(route, request);
  }

  @Patch(':route')
  patch(@Param('route') route: string, @Req() request: FastifyRequest): never {
    return refuse(route, request);
  }

  @Delete(':route')
  delete(@Param('route') route: string, @Req() request: FastifyRequest): never {
    return refuse(route, request);
  }
}

function refuse(route: string, request: FastifyRequest): never {
  if (trackingRouteOf(route) === undefined && route !== 'm') throw new NotFoundException();
  throw new TrackingApiError(
    'method_not_allowed',
    `${request.method} is not allowed on /v1/${route}: send the messages with POST`,
    { allow: 'POST, OPTIONS' },
  );
}
