import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { cleanupOpenApiDoc } from 'nestjs-zod';

/**
 * The OpenAPI document of `/v1beta`, built from the controllers and their zod schemas and served
 * at `/v1beta/openapi.json`. Custom verbs are shown as clients call them (`…:batchCreateConnections`).
 */
export function serveConfigApiOpenApiDocument(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Tributary Config API')
    .setDescription(
      'Segment-compatible Config API (v1beta): workspaces, sources, destinations, tracking plans, tokens.',
    )
    .setVersion('v1beta')
    .addBearerAuth()
    .build();
  const document = cleanupOpenApiDoc(SwaggerModule.createDocument(app, config));
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/v1beta'))
      .map(([path, item]) => [path.replace(/\/@([A-Za-z]+)$/, ':$1'), withPathParameters(path, item)]),
  );
  const body = JSON.stringify(document);
  app
    .getHttpAdapter()
    .get(
      '/v1beta/openapi.json',
      (_request: unknown, reply: { header(n: string, v: string): any; send(b: string): void }) => {
        reply.header('content-type', 'application/json; charset=utf-8');
        reply.send(body);
      },
    );
}

/**
 * Lists every parameter of the path template, first and in template order, on each operation: the
 * handlers that take a resolved resource (`SourceInPath()` and its kin) read the path parameters
 * through one decorator that the document generator cannot see.
 */
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function withPathParameters(path: string, item: Record<string, any>): Record<string, any> {
  const pathParameters = [...path.matchAll(/\{([^{}]+)\}/g)].map(([, name]) => ({
    name,
    required: true,
    in: 'path',
    schema: { type: 'string' },
  }));
  for (const [method, operation] of Object.entries(item)) {
    if (!HTTP_METHODS.has(method)) continue;
    const others = (operation.parameters ?? []).filter(
      (parameter: { in: string }) => parameter.in !== 'path',
    );
    operation.parameters = [...pathParameters, ...others];
  }
  return item;
}
