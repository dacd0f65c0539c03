import { Controller, Delete, Get, Patch, Post, Put, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';
import { SourceFunctionAnswer, SourceFunctionHandler } from './source-function.handler';

/**
 * `/v1/fn?b=<base64url write key>`: a source function's webhook URL (docs/functions.md §2). Any
 * content type is taken as it came; answers are `{"success":true}` or `{"error": "..."}`. Only POST
 * runs the function: other methods are 405 with `Allow`, so a provider's URL check learns the URL
 * exists without running anything.
 */
@ApiExcludeController()
@Controller('v1')
@UseFilters(TrackingApiErrorFilter)
export class SourceFunctionController {
  constructor(private readonly handler: SourceFunctionHandler) {}

  @Post('fn')
  async invoke(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const answer = await this.handler.handle({
      b: (request.query as Record<string, unknown>)['b'],
      url: `${request.protocol}://${request.host}${request.url}`,
      method: request.method,
      headers: request.headers,
      body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
    });
    send(reply, answer);
  }

  // One handler per method: Nest keeps only the last method decorator of a handler. (HEAD follows GET.)
  @Get('fn')
  get(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    refuse(request, reply);
  }

  @Put('fn')
  put(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    refuse(request, reply);
  }

  @Patch('fn')
  patch(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    refuse(request, reply);
  }

  @Delete('fn')
  delete(@Req() request: FastifyRequest, @Res() reply: FastifyReply): void {
    refuse(request, reply);
  }
}

function refuse(request: FastifyRequest, reply: FastifyReply): void {
  send(reply, {
    status: 405,
    body: { error: `${request.method} is not allowed on /v1/fn: a source function is called with POST` },
    headers: { allow: 'POST' },
  });
}

function send(reply: FastifyReply, answer: SourceFunctionAnswer): void {
  for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
  reply.status(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.body);
}
