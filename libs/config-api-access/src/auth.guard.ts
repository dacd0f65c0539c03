import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { hashAccessToken } from '@tributary/auth';
import { accessTokenExpired } from '@tributary/config-domain';
import { workspaceName } from '@tributary/contracts';
import { ConfigReadModel } from '@tributary/config-projections';
import type { RequestWithBodyError } from '@tributary/platform';
import { BasicCredentialsChecker } from './basic-credentials.checker';
import { ConfigApiError, GrpcCode } from './config-api.error';
import {
  ALLOW_BASIC_AUTH,
  AuthenticatedRequest,
  canReachWorkspace,
  INSTANCE_ADMIN_ONLY,
  isInstanceAdmin,
  Principal,
} from './principal';
import { RateLimiter } from '@tributary/platform';

export const CONFIG_API_RATE_LIMITER = Symbol('ConfigApiRateLimiter');

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authentication, authorization and rate limiting of every Config API route, in that order:
 * who is calling (401), may they do this here (403 for scope, 404 for a workspace out of reach,
 * so its existence does not leak), and are they within their rate (429).
 */
@Injectable()
export class ConfigApiAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly readModel: ConfigReadModel,
    @Inject(CONFIG_API_RATE_LIMITER) private readonly rateLimiter: RateLimiter,
    private readonly basicCredentials: BasicCredentialsChecker,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const flag = (key: string) =>
      this.reflector.getAllAndOverride<boolean>(key, [context.getHandler(), context.getClass()]);
    const request = context.switchToHttp().getRequest<AuthenticatedRequest & RequestWithBodyError>();
    const principal = await this.authenticate(
      request.headers.authorization,
      flag(ALLOW_BASIC_AUTH),
      request.ip,
    );
    request.principal = principal;
    if (request.bodyParseError) throw ConfigApiError.invalidArgument(request.bodyParseError);

    const limit = this.rateLimiter.take(principal.actor);
    if (!limit.allowed) {
      throw new ConfigApiError(
        429,
        GrpcCode.RESOURCE_EXHAUSTED,
        'rate limit exceeded; retry after the Retry-After delay',
        {
          'retry-after': String(limit.retryAfterSeconds),
        },
      );
    }

    if (flag(INSTANCE_ADMIN_ONLY) && !isInstanceAdmin(principal)) {
      throw ConfigApiError.permissionDenied('insufficient scope: only an instance administrator may do this');
    }
    const workspaceSlug = (request.params as Record<string, string> | undefined)?.workspace;
    if (workspaceSlug !== undefined && !canReachWorkspace(principal, workspaceSlug)) {
      throw ConfigApiError.notFound(`${workspaceName(workspaceSlug)} not found`);
    }
    if (
      !READ_METHODS.has(request.method) &&
      principal.kind === 'token' &&
      principal.token.scope !== 'workspace'
    ) {
      throw ConfigApiError.permissionDenied('insufficient scope');
    }
    return true;
  }

  private async authenticate(
    header: string | undefined,
    allowBasic: boolean,
    clientAddress: string,
  ): Promise<Principal> {
    const [scheme, credentials] = (header ?? '').trim().split(/\s+/, 2);
    if (/^bearer$/i.test(scheme ?? '') && credentials) {
      const token = this.readModel.accessTokenByHash(hashAccessToken(credentials));
      if (!token) throw ConfigApiError.unauthenticated('the access token is invalid or was deleted');
      if (accessTokenExpired(token, Date.now()))
        throw ConfigApiError.unauthenticated('the access token has expired');
      return { kind: 'token', token, actor: `access-tokens/${token.number}` };
    }
    if (/^basic$/i.test(scheme ?? '') && credentials) {
      if (!allowBasic) throw ConfigApiError.unauthenticated('this route needs a Bearer access token');
      const user = await this.basicCredentials.check(credentials, clientAddress);
      return { kind: 'user', user, actor: `users/${user.email}` };
    }
    throw ConfigApiError.unauthenticated(
      allowBasic
        ? 'send Authorization: Basic email:password or Bearer <access token>'
        : 'send Authorization: Bearer <access token>',
    );
  }
}
