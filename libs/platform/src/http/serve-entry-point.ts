import type { INestApplication } from '@nestjs/common';
import type { Environment } from '../environment';
import { stopGracefullyOnSignals } from './graceful-shutdown';

/**
 * The last steps every entry point takes: stop gracefully on SIGTERM/SIGINT, listen, and print
 * `<name> listening on <url>` (the test kits and the bench wait for that line).
 */
export async function serveUntilSignalled(
  app: INestApplication,
  environment: Pick<Environment, 'PORT' | 'HOST'>,
  name: string,
  detail = '',
): Promise<void> {
  stopGracefullyOnSignals(app, { name });
  await app.listen(environment.PORT, environment.HOST);
  console.log(`${name} listening on ${await app.getUrl()}${detail}`);
}

/** Runs an entry point's `main`: a failure to start prints its message and exits with 1. */
export function runEntryPoint(main: () => Promise<void>): void {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
