export type DeliveryOutcomeKind =
  'delivered' | 'discarded' | 'retried' | 'filtered' | 'skipped' | 'dead_lettered';

export const DELIVERY_OUTCOMES: DeliveryOutcomeKind[] = [
  'delivered',
  'discarded',
  'retried',
  'filtered',
  'skipped',
  'dead_lettered',
];

/** Recent windows over which latency percentiles are reported. */
export const LATENCY_WINDOWS_MS = {
  last_minute: 60_000,
  last_5_minutes: 300_000,
  last_hour: 3_600_000,
} as const;

/** Latency samples older than the longest window are forgotten; at most this many are kept per destination. */
export const MAX_LATENCY_SAMPLES = 50_000;

export interface DestinationMetricsSnapshot {
  counts: Record<DeliveryOutcomeKind, number>;
  /** End-to-end latency (received by the tracking API -> delivered), milliseconds. */
  latency: Record<
    keyof typeof LATENCY_WINDOWS_MS,
    { p50: number | null; p95: number | null; samples: number }
  >;
  lastDiscardReasons: { messageId: string; reason: string; at: string }[];
}

/**
 * Expired samples are dropped by moving a start index and compacted in bulk: removing them one by
 * one from the front moved the whole array on every delivery once the cap was reached (a tenth of
 * the router's CPU in `npm run bench`).
 */
const COMPACT_AFTER_EXPIRED_SAMPLES = 4_096;

class DestinationMetrics {
  readonly counts = Object.fromEntries(DELIVERY_OUTCOMES.map((outcome) => [outcome, 0])) as Record<
    DeliveryOutcomeKind,
    number
  >;
  /** Pairs of (delivered at, latency), oldest first; the ones before `firstKept` are expired. */
  private readonly latencies: { at: number; latencyMs: number }[] = [];
  private firstKept = 0;
  readonly lastDiscardReasons: { messageId: string; reason: string; at: string }[] = [];

  recordLatency(at: number, latencyMs: number): void {
    this.latencies.push({ at, latencyMs });
    const horizon = at - LATENCY_WINDOWS_MS.last_hour;
    while (this.firstKept < this.latencies.length && this.latencies[this.firstKept].at < horizon)
      this.firstKept++;
    if (this.latencies.length - this.firstKept > MAX_LATENCY_SAMPLES)
      this.firstKept = this.latencies.length - MAX_LATENCY_SAMPLES;
    if (
      this.firstKept >= COMPACT_AFTER_EXPIRED_SAMPLES ||
      (this.firstKept > 0 && this.firstKept === this.latencies.length)
    ) {
      this.latencies.splice(0, this.firstKept);
      this.firstKept = 0;
    }
  }

  latencyOver(windowMs: number, now: number) {
    const values: number[] = [];
    for (let index = this.firstKept; index < this.latencies.length; index++) {
      const sample = this.latencies[index];
      if (sample.at >= now - windowMs) values.push(sample.latencyMs);
    }
    values.sort((a, b) => a - b);
    const percentile = (p: number) =>
      values.length ? values[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)] : null;
    return { p50: percentile(0.5), p95: percentile(0.95), samples: values.length };
  }
}

/**
 * Delivery counts and end-to-end latency per destination, kept by the router in memory: what an
 * operator reads to see whether a destination keeps up and why messages did not arrive.
 */
export class DeliveryMetrics {
  private readonly byDestination = new Map<string, DestinationMetrics>();

  constructor(private readonly now: () => number = Date.now) {}

  record(
    destinationKey: string,
    outcome: DeliveryOutcomeKind,
    detail?: { latencyMs?: number; messageId?: string; reason?: string },
  ): void {
    const metrics = this.metricsOf(destinationKey);
    metrics.counts[outcome] += 1;
    if (outcome === 'delivered' && detail?.latencyMs !== undefined)
      metrics.recordLatency(this.now(), detail.latencyMs);
    if (outcome === 'discarded' && detail?.reason) {
      metrics.lastDiscardReasons.push({
        messageId: detail.messageId ?? '',
        reason: detail.reason,
        at: new Date(this.now()).toISOString(),
      });
      if (metrics.lastDiscardReasons.length > 20) metrics.lastDiscardReasons.shift();
    }
  }

  snapshot(destinationKey: string): DestinationMetricsSnapshot {
    const metrics = this.metricsOf(destinationKey);
    const now = this.now();
    const latency = Object.fromEntries(
      Object.entries(LATENCY_WINDOWS_MS).map(([name, windowMs]) => [
        name,
        metrics.latencyOver(windowMs, now),
      ]),
    ) as DestinationMetricsSnapshot['latency'];
    return { counts: { ...metrics.counts }, latency, lastDiscardReasons: [...metrics.lastDiscardReasons] };
  }

  /** Outcome counts only: what a Prometheus scrape reads, without the latency percentiles' sort. */
  countsOf(destinationKey: string): Readonly<Record<DeliveryOutcomeKind, number>> | undefined {
    return this.byDestination.get(destinationKey)?.counts;
  }

  forget(destinationKey: string): void {
    this.byDestination.delete(destinationKey);
  }

  private metricsOf(destinationKey: string): DestinationMetrics {
    let metrics = this.byDestination.get(destinationKey);
    if (!metrics) {
      metrics = new DestinationMetrics();
      this.byDestination.set(destinationKey, metrics);
    }
    return metrics;
  }
}
