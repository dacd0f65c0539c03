import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MetricsRegistry } from './metrics.registry';

/** `GET /metrics`: Prometheus text exposition of this instance's registry. */
@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: MetricsRegistry) {}

  @Get()
  @Header('cache-control', 'no-store')
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const text = await this.registry.metrics();
    reply.header('content-type', this.registry.contentType).send(text);
  }
}
