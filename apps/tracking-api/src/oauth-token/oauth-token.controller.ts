import {
  ArgumentsHost,
  Catch,
  Controller,
  ExceptionFilter,
  HttpCode,
  HttpException,
  Logger,
  Post,
  Req,
  UseFilters,
} from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { OAuthRequestError } from '@tributary/auth';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthTokenHandler, TokenResponse } from './oauth-token.handler';

/**
 * Token errors follow RFC 6749, `{error, error_description}`: a JSON body lacking either key leaves
 * Python's token poller spinning (docs/tracking-api.md §11.5). 429 carries both Retry-After and X-RateLimit-Reset.
 */
@Catch()
export class OAuthErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('OAuth');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (exception instanceof OAuthRequestError) {
      const retryAfter = (exception as OAuthRequestError & { retryAfterSeconds?: number }).retryAfterSeconds;
      if (retryAfter !== undefined) {
        reply.header('retry-after', String(retryAfter)).header('x-ratelimit-reset', String(retryAfter));
      }
      reply
        .status(exception.status)
        .send({ error: exception.error, error_description: exception.description });
      return;
    }
    // Refusals from Fastify or Nest before the handler runs (a Content-Type it cannot parse: 415, an
    // unknown method on /token: 404) keep their 4xx status but take the RFC 6749 shape too.
    const clientStatus =
      exception instanceof HttpException
        ? exception.getStatus()
        : (exception as { statusCode?: number })?.statusCode;
    if (typeof clientStatus === 'number' && clientStatus >= 400 && clientStatus < 500) {
      reply.status(clientStatus === 413 ? 400 : clientStatus).send({
        error: 'invalid_request',
        error_description: (exception as Error)?.message || 'invalid token request',
      });
      return;
    }
    this.logger.error(`token request failed: ${(exception as Error)?.stack ?? String(exception)}`);
    reply.status(500).send({ error: 'server_error', error_description: 'internal error; retry later' });
  }
}

@ApiExcludeController()
@Controller()
@UseFilters(OAuthErrorFilter)
export class OAuthTokenController {
  constructor(private readonly handler: OAuthTokenHandler) {}

  /** `POST /token`; Node's client asks for `//token` when its auth server URL ends with a slash. */
  @Post('token')
  @HttpCode(200)
  issue(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.handler.issue({
      contentType: request.headers['content-type'],
      body: request.body,
      endpointBaseUrl: `${request.protocol}://${request.headers.host ?? request.hostname}`,
      callerAddress: request.ip,
    });
  }
}
