import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { loadEnvironment } from '@tributary/platform';
import { createTributaryApplication } from './tributary.application';

/**
 * A graceful stop must end within this (issue 6); orchestrators send SIGKILL soon after anyway
 * (Kubernetes after 30 s, Docker after 10 s), and nothing acknowledged is lost if it does not:
 * the log already holds every message answered 200, and deliveries not yet acknowledged are
 * redelivered after a restart.
 */
const SHUTDOWN_LIMIT_MS = 10_000;

async function main(): Promise<void> {
  const environment = loadEnvironment();
  const app = await createTributaryApplication(environment);
  stopGracefullyOnSignals(app);
  await app.listen(environment.PORT, environment.HOST);
  console.log(`tributary listening on ${await app.getUrl()} (data in ${environment.DATA_DIR})`);
}

/**
 * On SIGTERM or SIGINT, `app.close()` runs in this order (Nest 11): the HTTP server closes first (it
 * stops accepting, answers 503 to requests arriving on kept-alive connections, and waits for requests
 * in flight, so every publish under way is answered), then the `onApplicationShutdown` hooks from the
 * app modules to the global ones: the router's consumers stop and wait for their deliveries in flight,
 * then the event log and the event store close. The process then exits with code 0, or with code 1
 * and a line saying why when closing failed or took longer than `SHUTDOWN_LIMIT_MS`.
 *
 * This replaces `app.enableShutdownHooks()`, which re-raises the signal once closed (so the process
 * ends "killed by SIGTERM", not with code 0) and has no time limit.
 */
function stopGracefullyOnSignals(app: INestApplication): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    const startedAt = Date.now();
    console.log(`tributary: ${signal} received, closing (at most ${SHUTDOWN_LIMIT_MS / 1000} s)`);
    setTimeout(() => {
      console.error(
        `tributary: shutdown did not finish within ${SHUTDOWN_LIMIT_MS / 1000} s; exiting anyway ` +
          '(deliveries not yet acknowledged are redelivered after a restart)',
      );
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    app.close().then(
      () => {
        console.log(`tributary: closed in ${Date.now() - startedAt} ms`);
        process.exit(0);
      },
      (error: unknown) => {
        console.error(`tributary: shutdown failed: ${error instanceof Error ? error.stack : String(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
