import {
  DEAD_LETTER_CAUSES,
  DELIVERY_OUTCOMES,
  type DeadLetterCause,
  type DeliveryOutcome,
} from '@tributary/contracts';
import type { DiscardCause, ValueNotStored, ValueNotStoredCause } from '@tributary/destinations';

/** Why a delivered message's value was not stored as sent (a warehouse's type conflict or column limit). */
export const VALUE_NOT_STORED_CAUSES: readonly ValueNotStoredCause[] = ['type_conflict', 'column_limit'];

/** Discards by the destination guard that refused them (a warehouse's system schema, foreign table, table limit). */
export const DISCARD_CAUSES: readonly DiscardCause[] = [
  'system_schema',
  'foreign_table',
  'table_limit',
  'egress_denied',
];

/** Recent discards and values not stored kept per destination, for an operator to see why. */
const RECENT_KEPT = 20;

export interface OutcomeDetail {
  latencyMs?: number;
  messageId?: string;
  reason?: string;
  /** Of a delivered message: the values the destination left out or stored as null. */
  valuesNotStored?: readonly ValueNotStored[];
  /** Of a discarded message: the guard that refused it, when one did. */
  discardCause?: DiscardCause;
  /** Of a dead-lettered message: why. */
  deadLetterCause?: DeadLetterCause;
}

export interface RecentValueNotStored {
  messageId: string;
  cause: ValueNotStoredCause;
  table: string;
  column: string;
  reason: string;
  at: string;
}

/** Recent windows over which latency percentiles are reported. */
export const LATENCY_WINDOWS_MS = {
  last_minute: 60_000,
  last_5_minutes: 300_000,
  last_hour: 3_600_000,
} as const;

/** Latency samples older than the longest window are forgotten; at most this many are kept per destination. */
export const MAX_LATENCY_SAMPLES = 50_000;

export interface DestinationMetricsSnapshot {
  counts: Record<DeliveryOutcome, number>;
  /** End-to-end latency (received by the tracking API -> delivered), milliseconds. */
  latency: Record<
    keyof typeof LATENCY_WINDOWS_MS,
    { p50: number | null; p95: number | null; samples: number }
  >;
  lastDiscardReasons: { messageId: string; reason: string; at: string }[];
  /** Values of delivered messages not stored as sent, by cause (each value counts once). */
  valuesNotStored: Record<ValueNotStoredCause, number>;
  lastValuesNotStored: RecentValueNotStored[];
  /** Discards (also counted in `counts.discarded`) by the guard that refused them. */
  discardsByCause: Record<DiscardCause, number>;
  /** Dead letters (also counted in `counts.dead_lettered`) by why. */
  deadLettersByCause: Record<DeadLetterCause, number>;
}

const zeroCounts = <Key extends string>(keys: readonly Key[]) =>
  Object.fromEntries(keys.map((key) => [key, 0])) as Record<Key, number>;

/**
 * Expired samples are dropped by moving a start index and compacted in bulk: removing them one by
 * one from the front would move the whole array on every delivery once the cap is reached.
 */
const COMPACT_AFTER_EXPIRED_SAMPLES = 4_096;

/** The time series covers the last hour in one-minute buckets (the console's delivery charts). */
export const SERIES_BUCKET_MS = 60_000;
export const SERIES_BUCKETS = 60;

export interface DeliverySeriesBucket {
  /** Start of the minute, ISO 8601. */
  start: string;
  counts: Record<DeliveryOutcome, number>;
  /** Latency of the deliveries of that minute, milliseconds; null when none was delivered. */
  latency: { p50: number | null; p95: number | null };
}

function percentileOf(sorted: ArrayLike<number>, p: number): number | null {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]! : null;
}

/**
 * Sorted ascending. A typed array sorts numbers natively, without calling a comparator per comparison:
 * a metrics read sorts up to `MAX_LATENCY_SAMPLES` values per window, often while deliveries run.
 */
function sortedLatencies(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

class DestinationMetrics {
  readonly counts = Object.fromEntries(DELIVERY_OUTCOMES.map((outcome) => [outcome, 0])) as Record<
    DeliveryOutcome,
    number
  >;
  /** Pairs of (delivered at, latency), oldest first; the ones before `firstKept` are expired. */
  private readonly latencies: { at: number; latencyMs: number }[] = [];
  private firstKept = 0;
  readonly lastDiscardReasons: { messageId: string; reason: string; at: string }[] = [];
  readonly valuesNotStored = zeroCounts(VALUE_NOT_STORED_CAUSES);
  readonly lastValuesNotStored: RecentValueNotStored[] = [];
  readonly discardsByCause = zeroCounts(DISCARD_CAUSES);
  readonly deadLettersByCause = zeroCounts(DEAD_LETTER_CAUSES);

  /** Outcome counts per minute of the last hour, by the minute's start; older minutes are dropped. */
  private readonly countsByMinute = new Map<number, Record<DeliveryOutcome, number>>();

  countInMinute(at: number, outcome: DeliveryOutcome): void {
    const minute = at - (at % SERIES_BUCKET_MS);
    let counts = this.countsByMinute.get(minute);
    if (!counts) {
      counts = zeroCounts(DELIVERY_OUTCOMES);
      this.countsByMinute.set(minute, counts);
      const horizon = minute - SERIES_BUCKETS * SERIES_BUCKET_MS;
      for (const known of this.countsByMinute.keys()) if (known <= horizon) this.countsByMinute.delete(known);
    }
    counts[outcome] += 1;
  }

  series(now: number): DeliverySeriesBucket[] {
    const currentMinute = now - (now % SERIES_BUCKET_MS);
    const firstMinute = currentMinute - (SERIES_BUCKETS - 1) * SERIES_BUCKET_MS;
    const latencies = new Map<number, number[]>();
    for (let index = this.firstKept; index < this.latencies.length; index++) {
      const sample = this.latencies[index];
      if (sample.at < firstMinute) continue;
      const minute = sample.at - (sample.at % SERIES_BUCKET_MS);
      const values = latencies.get(minute) ?? [];
      values.push(sample.latencyMs);
      latencies.set(minute, values);
    }
    return Array.from({ length: SERIES_BUCKETS }, (_, index) => {
      const minute = firstMinute + index * SERIES_BUCKET_MS;
      const values = sortedLatencies(latencies.get(minute) ?? []);
      return {
        start: new Date(minute).toISOString(),
        counts: { ...(this.countsByMinute.get(minute) ?? zeroCounts(DELIVERY_OUTCOMES)) },
        latency: { p50: percentileOf(values, 0.5), p95: percentileOf(values, 0.95) },
      };
    });
  }

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

  /**
   * Percentiles of every window. The windows are nested, so one holding as many samples as the next
   * larger one holds the same samples: its percentiles are that one's, without another sort (under
   * steady load every sample is recent, and all windows are the same).
   */
  latencyOverWindows(now: number): DestinationMetricsSnapshot['latency'] {
    const windows = (Object.entries(LATENCY_WINDOWS_MS) as [keyof typeof LATENCY_WINDOWS_MS, number][]).sort(
      ([, left], [, right]) => right - left,
    );
    const result = {} as DestinationMetricsSnapshot['latency'];
    let larger: { p50: number | null; p95: number | null; samples: number } | undefined;
    for (const [name, windowMs] of windows) {
      let samples = 0;
      for (let index = this.firstKept; index < this.latencies.length; index++) {
        if (this.latencies[index].at >= now - windowMs) samples += 1;
      }
      larger = larger?.samples === samples ? larger : this.latencyOver(windowMs, now);
      result[name] = larger;
    }
    return result;
  }

  latencyOver(windowMs: number, now: number) {
    const values: number[] = [];
    for (let index = this.firstKept; index < this.latencies.length; index++) {
      const sample = this.latencies[index];
      if (sample.at >= now - windowMs) values.push(sample.latencyMs);
    }
    const sorted = sortedLatencies(values);
    return { p50: percentileOf(sorted, 0.5), p95: percentileOf(sorted, 0.95), samples: sorted.length };
  }
}

/**
 * Delivery counts and end-to-end latency per destination, kept by the router in memory: what an
 * operator reads to see whether a destination keeps up and why messages did not arrive.
 */
export class DeliveryMetrics {
  private readonly byDestination = new Map<string, DestinationMetrics>();

  constructor(private readonly now: () => number = Date.now) {}

  record(destinationKey: string, outcome: DeliveryOutcome, detail?: OutcomeDetail): void {
    const metrics = this.metricsOf(destinationKey);
    metrics.counts[outcome] += 1;
    metrics.countInMinute(this.now(), outcome);
    if (outcome === 'delivered' && detail?.latencyMs !== undefined)
      metrics.recordLatency(this.now(), detail.latencyMs);
    if (outcome === 'delivered' && detail?.valuesNotStored?.length) {
      const at = new Date(this.now()).toISOString();
      for (const value of detail.valuesNotStored) {
        metrics.valuesNotStored[value.cause] += 1;
        metrics.lastValuesNotStored.push({ messageId: detail.messageId ?? '', ...value, at });
      }
      metrics.lastValuesNotStored.splice(0, metrics.lastValuesNotStored.length - RECENT_KEPT);
    }
    if (outcome === 'discarded' && detail?.discardCause !== undefined)
      metrics.discardsByCause[detail.discardCause] += 1;
    if (outcome === 'dead_lettered' && detail?.deadLetterCause !== undefined)
      metrics.deadLettersByCause[detail.deadLetterCause] += 1;
    if (outcome === 'discarded' && detail?.reason) {
      metrics.lastDiscardReasons.push({
        messageId: detail.messageId ?? '',
        reason: detail.reason,
        at: new Date(this.now()).toISOString(),
      });
      if (metrics.lastDiscardReasons.length > RECENT_KEPT) metrics.lastDiscardReasons.shift();
    }
  }

  snapshot(destinationKey: string): DestinationMetricsSnapshot {
    const metrics = this.metricsOf(destinationKey);
    const now = this.now();
    const latency = metrics.latencyOverWindows(now);
    return {
      counts: { ...metrics.counts },
      latency: {
        last_minute: { ...latency.last_minute },
        last_5_minutes: { ...latency.last_5_minutes },
        last_hour: { ...latency.last_hour },
      },
      lastDiscardReasons: [...metrics.lastDiscardReasons],
      valuesNotStored: { ...metrics.valuesNotStored },
      lastValuesNotStored: [...metrics.lastValuesNotStored],
      discardsByCause: { ...metrics.discardsByCause },
      deadLettersByCause: { ...metrics.deadLettersByCause },
    };
  }

  /** The last hour, minute by minute, oldest first (always `SERIES_BUCKETS` buckets). */
  series(destinationKey: string): DeliverySeriesBucket[] {
    return this.metricsOf(destinationKey).series(this.now());
  }

  /** Outcome counts only: what a Prometheus scrape reads, without the latency percentiles' sort. */
  countsOf(destinationKey: string): Readonly<Record<DeliveryOutcome, number>> | undefined {
    return this.byDestination.get(destinationKey)?.counts;
  }

  /** Values not stored, discards and dead letters by cause, for a Prometheus scrape. */
  causesOf(destinationKey: string):
    | {
        readonly valuesNotStored: Readonly<Record<ValueNotStoredCause, number>>;
        readonly discardsByCause: Readonly<Record<DiscardCause, number>>;
        readonly deadLettersByCause: Readonly<Record<DeadLetterCause, number>>;
      }
    | undefined {
    return this.byDestination.get(destinationKey);
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
