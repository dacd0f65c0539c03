import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsRegistry } from './metrics.registry';

/**
 * One metrics registry per application (global, so the collectors beside the code they measure can
 * inject it) and `GET /metrics`. `createHttpApplication` imports it into every application and
 * records the HTTP request metrics on it.
 */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [{ provide: MetricsRegistry, useFactory: () => new MetricsRegistry() }],
  exports: [MetricsRegistry],
})
export class MetricsModule {}
