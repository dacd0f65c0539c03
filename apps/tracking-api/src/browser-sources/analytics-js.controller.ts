import { Controller, Get, NotFoundException, Param, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TrackingApiErrorFilter } from '../shared/tracking-api-error.filter';
import { AnalyticsNextAsset, AnalyticsNextAssets } from './analytics-next-assets';

/** The loader's name stays the same across upgrades: a short lifetime lets a new version reach pages. */
const LOADER_CACHE_CONTROL = 'public, max-age=300';
/** A chunk's name carries its content hash, so it never changes. */
const BUNDLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * What the snippet loads from Segment's CDN, served from this deployment instead (docs/browser-mobile.md
 * §5, CDN side): a site switches by changing the snippet's host. Script tags load these without CORS.
 */
@ApiExcludeController()
@Controller()
@UseFilters(TrackingApiErrorFilter)
export class AnalyticsJsController {
  constructor(private readonly assets: AnalyticsNextAssets) {}

  @Get('analytics.js/v1/:writeKey/:file')
  async loader(
    @Param('file') file: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    send(request, reply, await this.assets.loader(file), LOADER_CACHE_CONTROL);
  }

  @Get('analytics-next/bundles/:file')
  async bundle(
    @Param('file') file: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    send(request, reply, await this.assets.bundle(file), BUNDLE_CACHE_CONTROL);
  }
}

function send(
  request: FastifyRequest,
  reply: FastifyReply,
  asset: AnalyticsNextAsset | undefined,
  cacheControl: string,
): void {
  if (!asset) throw new NotFoundException();
  reply
    .header('content-type', 'application/javascript; charset=utf-8')
    .header('cache-control', cacheControl)
    .header('etag', asset.etag)
    .header('vary', 'Accept-Encoding');
  if (ifNoneMatch(request.headers['if-none-match'], asset.etag)) {
    reply.code(304).send();
    return;
  }
  if (asset.gzipped && acceptsGzip(request.headers['accept-encoding'])) {
    reply.header('content-encoding', 'gzip').send(asset.gzipped);
    return;
  }
  reply.send(asset.body);
}

function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** `gzip` listed without `q=0` (RFC 9110 §12.5.3). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((entry) => {
    const [coding, ...parameters] = entry.trim().toLowerCase().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== 'x-gzip') return false;
    const quality = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}
