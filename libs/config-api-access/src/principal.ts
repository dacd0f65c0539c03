import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { AccessTokenRecord, UserRecord } from '@tributary/config-domain';
import type { EventMetadata } from '@tributary/event-store';
import type { FastifyRequest } from 'fastify';

/** Who is calling: a personal access token (Bearer) or a user (Basic, token management only). */
export type Principal =
  | { kind: 'token'; token: AccessTokenRecord; actor: string }
  | { kind: 'user'; user: UserRecord; actor: string };

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

export function isInstanceAdmin(principal: Principal): boolean {
  return principal.kind === 'token' ? principal.token.instanceAdmin : principal.user.instanceAdmin;
}

export function canReachWorkspace(principal: Principal, workspaceSlug: string): boolean {
  if (isInstanceAdmin(principal)) return true;
  return principal.kind === 'token' && principal.token.workspaceSlugs.includes(workspaceSlug);
}

/**
 * Whether the caller may see secrets a read needs no part of: a source's write keys, which let their
 * holder ingest. A `workspace:read` token (dashboards, monitoring) may not; a token that may write
 * could mint or change them anyway. Users (Basic) manage tokens, so they may too.
 */
export function maySeeSecrets(principal: Principal): boolean {
  return principal.kind === 'user' || principal.token.scope === 'workspace';
}

/** Token management routes also accept HTTP Basic `email:password` (docs/tracking-api.md §2.1). */
export const ALLOW_BASIC_AUTH = 'tributary:allow-basic-auth';
export const AllowBasicAuth = () => SetMetadata(ALLOW_BASIC_AUTH, true);

/** Routes only an instance administrator may call, such as creating a workspace. */
export const INSTANCE_ADMIN_ONLY = 'tributary:instance-admin-only';
export const InstanceAdminOnly = () => SetMetadata(INSTANCE_ADMIN_ONLY, true);

/** The metadata every event of this request carries: actor, request id, time. */
export const ChangeMetadata = createParamDecorator((_: unknown, context: ExecutionContext): EventMetadata => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  return {
    actor: request.principal?.actor ?? 'anonymous',
    requestId: String(request.id),
    time: new Date().toISOString(),
  };
});

export const CurrentPrincipal = createParamDecorator(
  (_: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal!,
);
