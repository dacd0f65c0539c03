import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { PUBLIC_API_PREFIX } from '@tributary/platform';

/**
 * The OpenAPI document of the Public API subset Tributary serves (docs/public-api.md), apart from
 * `/v1beta`'s, at `/public-api/openapi.json`: its paths, methods and path parameters as routed here.
 * Request and response bodies are Segment's (its SDKs' models); routes answered 501 are left out.
 */
export function servePublicApiOpenApiDocument(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Tributary: Segment Public API subset')
    .setDescription(
      "Segment's Public API (api.segmentapis.com) as Tributary serves it under /public-api: workspace, " +
        'catalog, sources, destinations, destination subscriptions, tracking plans, labels.',
    )
    .setVersion('v1')
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.paths = Object.fromEntries(
    Object.entries(document.paths).filter(
      ([path]) => path === PUBLIC_API_PREFIX || path.startsWith(`${PUBLIC_API_PREFIX}/`),
    ),
  );
  const body = JSON.stringify(document);
  app
    .getHttpAdapter()
    .get(
      `${PUBLIC_API_PREFIX}/openapi.json`,
      (_request: unknown, reply: { header(n: string, v: string): any; send(b: string): void }) => {
        reply.header('content-type', 'application/json; charset=utf-8');
        reply.send(body);
      },
    );
}
