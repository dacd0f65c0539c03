import {
  DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { MetricsListener, MetricsListenerOptions } from './metrics.listener';
import { MetricsRegistry } from './metrics.registry';

const METRICS_LISTENER_OPTIONS = Symbol('MetricsListenerOptions');

/** Opens the scrape listener once the application starts, closes it when the application closes. */
@Injectable()
class MetricsListenerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(MetricsListener) private readonly listener: MetricsListener | null) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listener?.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.close();
  }
}

/**
 * One metrics registry per application (global, so the collectors beside the code they measure can
 * inject it) and, when a listener is configured, `GET /metrics` on its own host and port
 * (`MetricsListener`). `createHttpApplication` imports it into every application and records the
 * HTTP request metrics on it.
 */
@Global()
@Module({})
export class MetricsModule {
  static register(listener: MetricsListenerOptions | undefined): DynamicModule {
    return {
      module: MetricsModule,
      providers: [
        { provide: MetricsRegistry, useFactory: () => new MetricsRegistry() },
        { provide: METRICS_LISTENER_OPTIONS, useValue: listener ?? null },
        {
          provide: MetricsListener,
          inject: [MetricsRegistry, METRICS_LISTENER_OPTIONS],
          useFactory: (registry: MetricsRegistry, options: MetricsListenerOptions | null) =>
            options ? new MetricsListener(registry, options) : null,
        },
        MetricsListenerLifecycle,
      ],
      exports: [MetricsRegistry, MetricsListener],
    };
  }
}
