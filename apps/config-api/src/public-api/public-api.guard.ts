import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { hashAccessToken } from '@tributary/auth';
import { Reflector } from '@nestjs/core';
import {
  exceedsJsonDepth,
  maxBodyBytesOf,
  REQUEST_BODY_LIMITS,
  type RequestBodyLimits,
} from '@tributary/config-api-access';
import type { AuthenticatedRequest } from '@tributary/config-api-access';
import { accessTokenExpired, type WorkspaceRecord } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { RateLimiter, type RequestWithBodyError } from '@tributary/platform';
import type { FastifyReply } from 'fastify';
import { PublicApiError } from './public-api.error';

export const PUBLIC_API_RATE_LIMITER = Symbol('PublicApiRateLimiter');

export type PublicApiRequest = AuthenticatedRequest &
  RequestWithBodyError & {
    /** The one workspace of the caller's token: the workspace of every Public API call. */
    workspace?: WorkspaceRecord;
  };

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Every Public API route, in order: its rate budget (the headers go on every answer, refusals
 * included), who is calling (401: a Bearer access token, nothing else), the body as parsed (422 for
 * a media type it does not read or JSON that does not parse), which workspace (403 unless the token
 * names exactly one: no path names it), the scope (403 for a read-only token writing) and the body's
 * size and depth (413, the Config API's limits). Its budget is separate from `/v1beta`'s.
 */
@Injectable()
export class PublicApiGuard implements CanActivate {
  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(PUBLIC_API_RATE_LIMITER) private readonly rateLimiter: RateLimiter,
    @Inject(REQUEST_BODY_LIMITS) private readonly limits: RequestBodyLimits,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<PublicApiRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const credentials = bearerCredentials(request.headers.authorization);
    const tokenHash = credentials === undefined ? undefined : hashAccessToken(credentials);

    const count = this.rateLimiter.count(tokenHash ? `token:${tokenHash}` : `address:${request.ip}`);
    reply.header('x-ratelimit-consumed', String(count.consumed));
    reply.header('x-ratelimit-remaining', String(count.remaining));
    reply.header('x-ratelimit-reset', new Date(count.resetAt).toUTCString());
    if (!count.allowed) {
      throw new PublicApiError(429, 'too-many-requests', 'Too many requests', undefined, {
        'retry-after': String(count.retryAfterSeconds),
      });
    }

    if (tokenHash === undefined)
      throw PublicApiError.unauthorized('send Authorization: Bearer <access token>');
    const token = this.readModel.accessTokenByHash(tokenHash);
    if (!token) throw PublicApiError.unauthorized('the access token is invalid or was deleted');
    if (accessTokenExpired(token, Date.now()))
      throw PublicApiError.unauthorized('the access token has expired');
    request.principal = { kind: 'token', token, actor: `access-tokens/${token.number}` };

    if (request.bodyMediaTypeError) throw PublicApiError.validation(request.bodyMediaTypeError);
    if (request.bodyParseError) throw PublicApiError.validation(request.bodyParseError);

    const workspace =
      !token.instanceAdmin && token.workspaceSlugs.length === 1
        ? this.readModel.workspace(token.workspaceSlugs[0])
        : undefined;
    if (!workspace) throw PublicApiError.forbidden('token is not bound to one workspace');
    request.workspace = workspace;

    if (!READ_METHODS.has(request.method) && token.scope !== 'workspace') {
      throw PublicApiError.forbidden('insufficient scope: this token may only read');
    }
    this.checkBodyLimits(request.body, maxBodyBytesOf(context, this.reflector, this.limits));
    return true;
  }

  /** `maxBytes`: the configured limit, or a route's larger one (a regulation's create, `AcceptsBodiesUpTo`). */
  private checkBodyLimits(body: unknown, maxBytes: number): void {
    if (body === undefined) return;
    if (exceedsJsonDepth(body, this.limits.maxDepth)) {
      throw new PublicApiError(
        413,
        'PayloadTooLarge',
        `the request body is nested deeper than ${this.limits.maxDepth} levels of objects and arrays`,
      );
    }
    const bytes = Buffer.byteLength(JSON.stringify(body) ?? '');
    if (bytes > maxBytes) {
      throw new PublicApiError(
        413,
        'PayloadTooLarge',
        `the request body is ${bytes} bytes of JSON; a resource may have at most ${maxBytes}`,
      );
    }
  }
}

function bearerCredentials(header: string | undefined): string | undefined {
  const [scheme, credentials] = (header ?? '').trim().split(/\s+/, 2);
  return /^bearer$/i.test(scheme ?? '') && credentials ? credentials : undefined;
}
