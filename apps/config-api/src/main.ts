import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { createHttpApplication, loadEnvironment } from '@tributary/platform';
import { ConfigApiModule } from './config-api.module';
import { serveConfigApiOpenApiDocument } from './openapi';

async function main(): Promise<void> {
  const environment = loadEnvironment();
  @Module({ imports: [ConfigApiModule.register(environment)] })
  class ConfigApiAppModule {}
  const app = await createHttpApplication(ConfigApiAppModule);
  serveConfigApiOpenApiDocument(app);
  app.enableShutdownHooks();
  await app.listen(environment.PORT, environment.HOST);
  console.log(`tributary config-api listening on ${await app.getUrl()}`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
