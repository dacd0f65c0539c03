import type { INestApplication } from '@nestjs/common';
import type { Environment } from '../environment';
import { MetricsListener } from '../metrics/metrics.listener';
import { stopGracefullyOnSignals } from './graceful-shutdown';

/**
 * The last steps every entry point takes: stop gracefully on SIGTERM/SIGINT, listen, print
 * `<name> metrics on <url>` when the application has a metrics listener, then
 * `<name> listening on <url>` (the test kits and the bench wait for that line, and read the other
 * before it).
 */
export async function serveUntilSignalled(
  app: INestApplication,
  environment: Pick<Environment, 'PORT' | 'HOST'>,
  name: string,
  detail = '',
): Promise<void> {
  stopGracefullyOnSignals(app, { name });
  await app.listen(environment.PORT, environment.HOST);
  const metricsUrl = metricsUrlOf(app);
  if (metricsUrl) console.log(`${name} metrics on ${metricsUrl}`);
  console.log(`${name} listening on ${await app.getUrl()}${detail}`);
}

/** Runs an entry point's `main`: a failure to start prints its message and exits with 1. */
export function runEntryPoint(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}

/** The scrape URL of the application's `/metrics` listener, once it listens; undefined without one. */
export function metricsUrlOf(app: INestApplication): string | undefined {
  try {
    return app.get(MetricsListener, { strict: false })?.url;
  } catch {
    return undefined;
  }
}
