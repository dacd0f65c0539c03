import { Counter, Histogram } from 'prom-client';
import { METRIC_PREFIX, MetricsRegistry } from './metrics.registry';

/** Seconds; from a cached 200 to a request that waits for a slow log. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A route that matched no handler: counted under one label, so unknown URLs cannot grow the series. */
export const UNMATCHED_ROUTE = 'unmatched';

interface RouteSeries {
  count(): void;
  observe(seconds: number): void;
}

/**
 * HTTP requests by method, route pattern (`/v1beta/workspaces/:workspaceSlug`, never the raw URL)
 * and status class, with a latency histogram. The labelled children are cached per combination, so
 * a request costs a map lookup, an increment and a histogram observation.
 */
export class HttpMetrics {
  private readonly requests: Counter<'method' | 'route' | 'status_class'>;
  private readonly duration: Histogram<'method' | 'route' | 'status_class'>;
  private readonly series = new Map<string, RouteSeries>();

  constructor(registry: MetricsRegistry) {
    this.requests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by method, route pattern and status class (2xx, 4xx, ...).',
      labelNames: ['method', 'route', 'status_class'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time from receiving an HTTP request to sending its answer, by method, route pattern and status class.',
      labelNames: ['method', 'route', 'status_class'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  record(method: string, route: string | undefined, statusCode: number, durationMs: number): void {
    const statusClass = statusClassOf(statusCode);
    const routeLabel = route ?? UNMATCHED_ROUTE;
    const key = `${method} ${routeLabel} ${statusClass}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route: routeLabel, status_class: statusClass };
      const counter = this.requests.labels(labels);
      const histogram = this.duration.labels(labels);
      series = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      this.series.set(key, series);
    }
    series.count();
    series.observe(durationMs / 1000);
  }
}

function statusClassOf(statusCode: number): string {
  return `${Math.floor(statusCode / 100)}xx`;
}
