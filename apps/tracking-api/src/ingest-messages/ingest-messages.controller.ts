import { Controller, HttpCode, NotFoundException, Param, Post, Req, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { isTrackingRoute, TrackingSuccessBody } from '@tributary/contracts';
import type { FastifyRequest } from 'fastify';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';
import { IngestMessagesHandler } from './ingest-messages.handler';

/** `POST /v1/{identify,track,page,screen,group,alias,batch,import}`: Segment's HTTP Tracking API. */
@ApiExcludeController()
@Controller('v1')
@UseFilters(TrackingApiErrorFilter)
export class IngestMessagesController {
  constructor(private readonly handler: IngestMessagesHandler) {}

  @Post(':route')
  @HttpCode(200)
  ingest(@Param('route') route: string, @Req() request: FastifyRequest): Promise<TrackingSuccessBody> {
    if (!isTrackingRoute(route)) throw new NotFoundException();
    return this.handler.ingest({
      route,
      body: request.body,
      contentEncoding: request.headers['content-encoding'],
      authorization: request.headers.authorization,
    });
  }
}
