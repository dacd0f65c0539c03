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
 * busy site does not ask on every page view.
 */
const SETTINGS_CACHE_CONTROL = 'public, max-age=60';

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
    reply.header('cache-control', SETTINGS_CACHE_CONTROL);
    return presentProjectSettings(
      writeKey,
      trackingApiAddress(this.environment.PUBLIC_BASE_URL, {
        protocol: request.protocol,
        host: request.host,
      }),
    );
  }
}
