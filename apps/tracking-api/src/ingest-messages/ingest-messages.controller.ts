import { Controller, HttpCode, NotFoundException, Param, Post, Req, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { trackingRouteOf, TrackingSuccessBody } from '@tributary/contracts';
import type { FastifyRequest } from 'fastify';
import { isClientSideRequest } from '../browser-sources/client-side-request';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';
import { IngestMessagesHandler } from './ingest-messages.handler';

/**
 * `POST /v1/{identify,track,page,screen,group,alias,batch,import}`: Segment's HTTP Tracking API, and
 * the short aliases its browser and mobile libraries post to (`/v1/{t,i,p,s,g,a,b}`).
 */
@ApiExcludeController()
@Controller('v1')
@UseFilters(TrackingApiErrorFilter)
export class IngestMessagesController {
  constructor(private readonly handler: IngestMessagesHandler) {}

  @Post(':route')
  @HttpCode(200)
  ingest(@Param('route') segment: string, @Req() request: FastifyRequest): Promise<TrackingSuccessBody> {
    const route = trackingRouteOf(segment);
    if (route === undefined) throw new NotFoundException();
    return this.handler.ingest({
      route,
      body: request.body,
      contentEncoding: request.headers['content-encoding'],
      authorization: request.headers.authorization,
      origin: request.headers.origin,
      clientIp: isClientSideRequest(segment, request.headers) ? request.ip : undefined,
    });
  }
}
