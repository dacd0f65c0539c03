import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleBuild } from './console-build';

/**
 * Everything the page may load comes from this server: no CDN, font or script from elsewhere, no
 * inline script, and the only back end it talks to is `/v1beta` on the same origin.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const BUILDING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="3">
<title>Tributary console</title></head>
<body><p>The console is being built (the first start builds it beside the running server). This page reloads itself.</p></body></html>
`;

/**
 * The web console's static files under `/console`, and `index.html` for every page path of the
 * single-page app (`/console/workspaces/...`), so a reload or a shared link opens the right page.
 * Public: the files hold no data; the console signs in against the Config API.
 */
@ApiExcludeController()
@Controller('console')
export class ConsoleController {
  constructor(@Inject(ConsoleBuild) private readonly build: ConsoleBuild) {}

  @Get(['', '*'])
  async serve(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY');
    if (!this.build.directory) {
      if (this.build.building) {
        // A first `npm start` builds the console beside the running server: the page reloads itself
        // (a meta refresh, which the content security policy allows) until the build is there.
        reply.code(503).header('retry-after', '3').type('text/html; charset=utf-8').send(BUILDING_PAGE);
        return;
      }
      reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built. Run `npm run build:console` (or `npm start`, which builds it).\n');
      return;
    }
    const path = request.url.split('?')[0].replace(/^\/console\/?/, '');
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      reply.code(400).type('text/plain; charset=utf-8').send('Malformed path.\n');
      return;
    }
    const file = await this.build.read(decoded);
    if (!file) {
      reply.code(404).type('text/plain; charset=utf-8').send('No such console file.\n');
      return;
    }
    reply
      .type(file.contentType)
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .send(file.body);
  }
}
