import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { ConfigApiError } from '@tributary/config-api-access';
import { DomainError } from '@tributary/config-domain';
import { EventStoreUnavailableError, WrongExpectedRevisionError } from '@tributary/event-store';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { PublicApiError, PublicApiErrorType } from './public-api.error';

/** The Public API's status and type for each status the shared use cases answer in. */
const BY_STATUS: Record<number, [number, PublicApiErrorType]> = {
  400: [422, 'ValidationFailure'],
  401: [401, 'Unauthorized'],
  403: [403, 'Forbidden'],
  404: [404, 'NotFound'],
  409: [409, 'Conflict'],
  413: [413, 'PayloadTooLarge'],
  429: [429, 'too-many-requests'],
  503: [503, 'Unavailable'],
};

const DOMAIN_STATUS: Record<DomainError['kind'], number> = {
  invalid_argument: 400,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  // v1beta's 400 code 9; the Public API answers every refused request body 422 ValidationFailure.
  failed_precondition: 400,
  resource_exhausted: 429,
};

/**
 * Every failure under `/public-api` leaves as `{"errors": [{"type", "message", "field"?}]}`, which is
 * what Segment's SDKs unwrap (docs/public-api.md, "Errors"): the shared use cases' errors (in the
 * Config API's terms) are translated, a 404 never says whether the id exists elsewhere, and unexpected
 * faults are logged and answered 500 without their details. Nothing of `/v1beta`'s shape leaks here.
 */
@Catch()
export class PublicApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('PublicApi');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const error = this.toPublicApiError(exception, request);
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    reply
      .status(error.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send({
        errors: [
          {
            type: error.type,
            message: error.message,
            ...(error.field !== undefined && { field: error.field }),
          },
        ],
      });
  }

  private toPublicApiError(exception: unknown, request: FastifyRequest): PublicApiError {
    if (exception instanceof PublicApiError) return exception;
    if (exception instanceof ConfigApiError)
      return translated(exception.status, exception.message, exception.headers);
    if (exception instanceof DomainError) return translated(DOMAIN_STATUS[exception.kind], exception.message);
    if (exception instanceof EventStoreUnavailableError) return translated(503, exception.message);
    if (exception instanceof WrongExpectedRevisionError) {
      return PublicApiError.conflict(
        'the resource was changed by a concurrent request; read it again and retry',
      );
    }
    if (exception instanceof ZodError) {
      const issue = exception.issues[0];
      return PublicApiError.validation(
        issue?.message ?? 'invalid request',
        issue?.path.join('.') || undefined,
      );
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404 || status === 405) {
        return PublicApiError.notFound(`no route for ${request.method} ${request.url.split('?')[0]}`);
      }
      if (status < 500) return translated(status, exception.message);
    }
    const fastifyStatus = (exception as { statusCode?: number })?.statusCode;
    if (fastifyStatus === 413) return translated(413, 'request body too large');
    if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
      return PublicApiError.validation((exception as Error).message);
    }
    this.logger.error(
      `unexpected failure on ${request.method} ${request.url}: ${(exception as Error)?.stack ?? String(exception)}`,
    );
    return new PublicApiError(500, 'InternalError', 'internal error');
  }
}

function translated(status: number, message: string, headers: Record<string, string> = {}): PublicApiError {
  const [publicStatus, type] =
    BY_STATUS[status] ?? (status >= 500 ? [500, 'InternalError'] : [422, 'ValidationFailure']);
  return new PublicApiError(
    publicStatus,
    type,
    publicStatus === 500 ? 'internal error' : message,
    undefined,
    headers,
  );
}
