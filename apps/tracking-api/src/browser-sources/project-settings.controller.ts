import { Controller, Get, Inject, Param, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { isOriginAllowed } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { Environment, ENVIRONMENT } from '@tributary/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackingApiError } from '../shared/tracking-api.error';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';
import { presentProjectSettings, trackingApiAddress } from './project-settings.presenter';

/**
 * Short enough that a deleted source or a moved deployment reaches clients soon; long enough that a
 * busy site does not ask on every page view. Shared caches (a CDN in front) may keep the document
 * only when `PUBLIC_BASE_URL` names the deployment: otherwise `apiHost` comes from the request's
 * Host (or a proxy's `X-Forwarded-Host`), which a cache does not key on, so one request naming
 * another host would send every visitor's events there for a minute.
 */
const SHARED_CACHE_CONTROL = 'public, max-age=60';
const PRIVATE_CACHE_CONTROL = 'private, max-age=60';

/**
 * `GET /v1/projects/{writeKey}/settings`: the document analytics.js fetches from its CDN and the
 * mobile libraries from their `cdnHost` (`<host>/v1`), the same path. An unknown or deleted key is
 * 404, so a misconfigured page fails loudly instead of sending events nobody stores.
 */
@ApiExcludeController()
@Controller('v1/projects')
@UseFilters(TrackingApiErrorFilter)
export class ProjectSettingsController {
  constructor(
    private readonly readModel: ConfigReadModel,
    @Inject(ENVIRONMENT) private readonly environment: Environment,
  ) {}

  @Get(':writeKey/settings')
  settings(
    @Param('writeKey') writeKey: string,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const source = this.readModel.sourceByWriteKey(writeKey);
    if (!source || !this.readModel.workspace(source.workspaceSlug)) {
      throw new TrackingApiError('not_found', 'no source has this write key, or its source was deleted');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !isOriginAllowed(source.allowedOrigins, origin)) {
      throw new TrackingApiError('origin_not_allowed', `the source does not accept events from ${origin}`);
    }
    reply.header(
      'cache-control',
      this.environment.PUBLIC_BASE_URL === undefined ? PRIVATE_CACHE_CONTROL : SHARED_CACHE_CONTROL,
    );
    // The answer to a request with Origin carries Access-Control-Allow-Origin and one without does
    // not: a cache must not hand the second to a page (which then cannot read it).
    if (origin === undefined) reply.header('vary', 'Origin');
    return presentProjectSettings(
      writeKey,
      trackingApiAddress(this.environment.PUBLIC_BASE_URL, {
        protocol: request.protocol,
        host: request.host,
      }),
    );
  }
}
