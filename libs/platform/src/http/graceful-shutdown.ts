import type { INestApplication } from '@nestjs/common';

/**
 * A graceful stop must end within this (issue 6); orchestrators send SIGKILL soon after anyway
 * (Docker after 10 s, Kubernetes after 30 s), and nothing acknowledged is lost if it does not: the
 * log already holds every message answered 200, and deliveries not yet acknowledged are redelivered
 * after a restart.
 */
export const SHUTDOWN_LIMIT_MS = 10_000;

/**
 * On SIGTERM or SIGINT, `app.close()` runs in this order (Nest 11): the HTTP server closes first (it
 * stops accepting, answers 503 to requests arriving on kept-alive connections, and waits for requests
 * in flight, so every publish under way is answered), then the `onApplicationShutdown` hooks from the
 * app modules to the global ones: the router's consumers stop and wait for their deliveries in flight,
 * then the event log and the event store close. The process then exits with code 0, or with code 1
 * and a line saying why when closing failed or took longer than `limitMs`.
 *
 * Use it instead of `app.enableShutdownHooks()`, which re-raises the signal once closed (so the
 * process ends "killed by SIGTERM", not with code 0) and has no time limit.
 */
export function stopGracefullyOnSignals(
  app: INestApplication,
  options: { name: string; limitMs?: number },
): void {
  const limitMs = options.limitMs ?? SHUTDOWN_LIMIT_MS;
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    const startedAt = Date.now();
    console.log(`${options.name}: ${signal} received, closing (at most ${limitMs / 1000} s)`);
    setTimeout(() => {
      console.error(
        `${options.name}: shutdown did not finish within ${limitMs / 1000} s; exiting anyway ` +
          '(deliveries not yet acknowledged are redelivered after a restart)',
      );
      process.exit(1);
    }, limitMs).unref();
    app.close().then(
      () => {
        console.log(`${options.name}: closed in ${Date.now() - startedAt} ms`);
        process.exit(0);
      },
      (error: unknown) => {
        console.error(
          `${options.name}: shutdown failed: ${error instanceof Error ? error.stack : String(error)}`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
