import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { DomainError } from '@tributary/config-domain';
import { EventStoreUnavailableError, WrongExpectedRevisionError } from '@tributary/event-store';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { ConfigApiError, GrpcCode } from './config-api.error';

const DOMAIN_ERRORS: Record<DomainError['kind'], [number, number]> = {
  invalid_argument: [400, GrpcCode.INVALID_ARGUMENT],
  not_found: [404, GrpcCode.NOT_FOUND],
  already_exists: [409, GrpcCode.ALREADY_EXISTS],
  permission_denied: [403, GrpcCode.PERMISSION_DENIED],
  failed_precondition: [400, GrpcCode.FAILED_PRECONDITION],
  resource_exhausted: [429, GrpcCode.RESOURCE_EXHAUSTED],
};

/**
 * Every failure of the Config API leaves as `{"error": "...", "code": N}` with the status of
 * docs/tracking-api.md §4, including Nest's own (unknown route, body too large, bad JSON) and unexpected faults,
 * which are logged and answered 500 without their details.
 */
@Catch()
export class ConfigApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ConfigApi');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const error = this.toConfigApiError(exception, request);
    for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
    reply
      .status(error.status)
      .header('content-type', 'application/json; charset=utf-8')
      .send({ error: error.message, code: error.code, message: error.message });
  }

  private toConfigApiError(exception: unknown, request: FastifyRequest): ConfigApiError {
    if (exception instanceof ConfigApiError) return exception;
    if (exception instanceof DomainError) {
      const [status, code] = DOMAIN_ERRORS[exception.kind];
      return new ConfigApiError(status, code, exception.message);
    }
    if (exception instanceof EventStoreUnavailableError) return ConfigApiError.unavailable(exception.message);
    if (exception instanceof WrongExpectedRevisionError) {
      return ConfigApiError.aborted(
        'the resource was changed by a concurrent request; read it again and retry',
      );
    }
    if (exception instanceof ZodError || isZodValidationException(exception)) {
      return ConfigApiError.invalidArgument(describeZodIssues(exception));
    }
    if (exception instanceof HttpException) return this.fromHttpException(exception, request);
    const fastifyStatus = (exception as { statusCode?: number })?.statusCode;
    if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
      return ConfigApiError.invalidArgument((exception as Error).message);
    }
    this.logger.error(
      `unexpected failure on ${request.method} ${request.url}: ${(exception as Error)?.stack ?? String(exception)}`,
    );
    return new ConfigApiError(500, GrpcCode.INTERNAL, 'internal error');
  }

  private fromHttpException(exception: HttpException, request: FastifyRequest): ConfigApiError {
    const status = exception.getStatus();
    // An unknown path or a method the path does not have: docs/tracking-api.md §4 answers both with 404, code 5.
    if (status === 404 || status === 405) {
      return ConfigApiError.notFound(`no route for ${request.method} ${request.url.split('?')[0]}`);
    }
    if (status === 413) return ConfigApiError.invalidArgument('request body too large');
    if (status === 401) return ConfigApiError.unauthenticated(exception.message);
    if (status === 403) return ConfigApiError.permissionDenied(exception.message);
    if (status === 429) return new ConfigApiError(429, GrpcCode.RESOURCE_EXHAUSTED, exception.message);
    if (status >= 400 && status < 500) return ConfigApiError.invalidArgument(exception.message);
    return new ConfigApiError(
      status === 503 ? 503 : 500,
      status === 503 ? GrpcCode.UNAVAILABLE : GrpcCode.INTERNAL,
      exception.message,
    );
  }
}

function isZodValidationException(exception: unknown): boolean {
  return typeof (exception as { getZodError?: unknown })?.getZodError === 'function';
}

function describeZodIssues(exception: unknown): string {
  const zodError: ZodError =
    exception instanceof ZodError ? exception : (exception as { getZodError(): ZodError }).getZodError();
  return zodError.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
}
