import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { trackingErrorBody } from '@tributary/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackingApiError } from './tracking-api.error';

/**
 * Every tracking API failure leaves as a JSON object with `success`, `code`, `message` and
 * `error` (docs/tracking-api.md §9.2): Python retries a 4xx whose JSON lacks `code` or `message`, Ruby reads
 * `error`. Unknown paths are 404; unexpected faults 500 without their details.
 */
@Catch()
export class TrackingApiErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('TrackingApi');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const reply = http.getResponse<FastifyReply>();
    const request = http.getRequest<FastifyRequest>();
    const { status, body, headers } = this.describe(exception, request);
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }

  private describe(exception: unknown, request: FastifyRequest) {
    if (exception instanceof TrackingApiError) {
      return {
        status: exception.status,
        body: trackingErrorBody(exception.code, exception.message),
        headers: exception.headers,
      };
    }
    if (
      exception instanceof HttpException &&
      (exception.getStatus() === 404 || exception.getStatus() === 405)
    ) {
      const path = request.url.split('?')[0];
      return {
        status: exception.getStatus(),
        body: {
          success: false,
          code: 'not_found',
          message: `no route for ${request.method} ${path}`,
          error: `no route for ${request.method} ${path}`,
        },
        headers: {},
      };
    }
    const clientStatus =
      exception instanceof HttpException
        ? exception.getStatus()
        : (exception as { statusCode?: number })?.statusCode;
    if (typeof clientStatus === 'number' && clientStatus >= 400 && clientStatus < 500) {
      // Fastify's own refusals (a body over its hard limit, a bad header): never 413, always 400 (docs/tracking-api.md §9.1).
      const code = clientStatus === 413 ? 'payload_too_large' : 'invalid_request';
      return { status: 400, body: trackingErrorBody(code, (exception as Error).message), headers: {} };
    }
    this.logger.error(
      `unexpected failure on ${request.method} ${request.url}: ${(exception as Error)?.stack ?? String(exception)}`,
    );
    return {
      status: 500,
      body: trackingErrorBody('internal', 'internal error; the request was not stored, retry it'),
      headers: {},
    };
  }
}
