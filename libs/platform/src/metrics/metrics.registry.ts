import { Registry } from 'prom-client';

/**
 * The Prometheus registry of one application instance. Not prom-client's global default: tests run
 * several instances in one process, and each must count only its own traffic. Collectors inject it
 * and register their metrics on it.
 */
export class MetricsRegistry extends Registry {}

/** Every Tributary metric name starts with this. */
export const METRIC_PREFIX = 'tributary_';

/**
 * Runs a scrape-time reading with a deadline: a slow log or store must not hang `GET /metrics`.
 * Resolves to undefined when the reading fails or runs late.
 */
export async function readWithin<T>(deadlineMs: number, read: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      read().catch(() => undefined),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), deadlineMs);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
