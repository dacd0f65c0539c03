import {
  ArgumentMetadata,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  PipeTransform,
} from '@nestjs/common';
import { lastSegment } from '@tributary/contracts';
import { ResourceLookup } from './resource-lookup.service';

/** The resources a Config API path names, by the path parameter that names each. */
type PathResource = 'workspace' | 'source' | 'destination' | 'plan' | 'application';

export interface PathResourceOptions {
  /**
   * The resource's own parameter may be a full resource name, whose last segment is used
   * (docs/config-api.md §5.12): the deletes that clients send with a name where a slug belongs.
   */
  acceptFullName?: boolean;
}

interface PathResourceRequest extends PathResourceOptions {
  resource: PathResource;
}

/**
 * Resolves the resource a route's path names, and its parents, against the read model, so that an
 * unknown workspace, source, destination, tracking plan or OAuth application answers the same 404 on every route
 * (`ResourceLookup`: the resource name and gRPC code 5).
 *
 * It runs as a parameter pipe. Nest resolves a handler's parameters together, each through the
 * global validation pipe first, so a body or query that fails validation rejects a step before
 * this lookup does: its 400 still comes before a missing resource's 404, as when handlers looked
 * resources up themselves (the Config API's errors e2e suite holds that order).
 */
@Injectable()
export class PathResourcesPipe implements PipeTransform<Record<string, string>> {
  constructor(private readonly lookup: ResourceLookup) {}

  transform(params: Record<string, string>, metadata: ArgumentMetadata) {
    const { resource, acceptFullName } = metadata.data as unknown as PathResourceRequest;
    const own = (slug: string) => (acceptFullName ? lastSegment(slug) : slug);
    switch (resource) {
      case 'workspace':
        return this.lookup.workspace(own(params.workspace));
      case 'source':
        return this.lookup.source(params.workspace, own(params.source));
      case 'destination':
        return this.lookup.destination(params.workspace, params.source, own(params.destination));
      case 'plan':
        return this.lookup.trackingPlan(params.workspace, own(params.plan));
      case 'application':
        return this.lookup.oauthApplication(params.workspace, own(params.application));
    }
  }
}

const PathParameters = createParamDecorator(
  (_request: PathResourceRequest, context: ExecutionContext): Record<string, string> =>
    context.switchToHttp().getRequest<{ params: Record<string, string> }>().params,
);

const pathResource = (resource: PathResource, options: PathResourceOptions = {}) =>
  PathParameters({ resource, ...options } satisfies PathResourceRequest, PathResourcesPipe);

/** The workspace of `:workspace`, as a `WorkspaceRecord`; 404 when there is none. */
export const WorkspaceInPath = (options?: PathResourceOptions) => pathResource('workspace', options);

/** The source of `:workspace/sources/:source`, as a `SourceView`; 404 when it or its workspace is missing. */
export const SourceInPath = (options?: PathResourceOptions) => pathResource('source', options);

/**
 * The destination of `…/sources/:source/destinations/:destination`, as a `DestinationView` with its
 * `sourceView`; 404 when it or a parent is missing.
 */
export const DestinationInPath = (options?: PathResourceOptions) => pathResource('destination', options);

/** The tracking plan of `:workspace/tracking-plans/:plan`, as a `TrackingPlanView`; 404 when missing. */
export const TrackingPlanInPath = (options?: PathResourceOptions) => pathResource('plan', options);

/** The OAuth application of `:workspace/oauth-applications/:application`; 404 when missing. */
export const OAuthApplicationInPath = (options?: PathResourceOptions) => pathResource('application', options);
