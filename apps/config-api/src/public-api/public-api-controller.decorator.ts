import {
  applyDecorators,
  Controller,
  createParamDecorator,
  ExecutionContext,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type { WorkspaceRecord } from '@tributary/config-domain';
import { PublicApiErrorFilter } from './public-api-error.filter';
import { PublicApiGuard, type PublicApiRequest } from './public-api.guard';
import { PublicQuery, readPublicQuery } from './public-api-query';

/**
 * A controller of Segment's Public API, under `/public-api` (docs/public-api.md): authenticated by
 * `PublicApiGuard`, answering errors in `{errors: [...]}`. Successes are 200, creates included.
 */
export function PublicApiController(path = '') {
  return applyDecorators(
    Controller(path === '' ? 'public-api' : `public-api/${path}`),
    UseGuards(PublicApiGuard),
    UseFilters(PublicApiErrorFilter),
    ApiBearerAuth(),
  );
}

/** The one workspace of the caller's token (set by `PublicApiGuard`). */
export const PublicWorkspace = createParamDecorator(
  (_: unknown, context: ExecutionContext): WorkspaceRecord =>
    context.switchToHttp().getRequest<PublicApiRequest>().workspace!,
);

/** The request's query in every encoding the clients send (`readPublicQuery`). */
export const PublicQueryParams = createParamDecorator((_: unknown, context: ExecutionContext): PublicQuery =>
  readPublicQuery(context.switchToHttp().getRequest<PublicApiRequest>().url),
);

/** The request body as an object; a body that is not one counts as empty. */
export const PublicBody = createParamDecorator(
  (_: unknown, context: ExecutionContext): Record<string, unknown> => {
    const body = context.switchToHttp().getRequest<PublicApiRequest>().body;
    return typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  },
);
