import { Counter, Gauge, type Registry } from 'prom-client';
import type { DedupeIndexStats } from './dedupe-index.port';
import { hasDedupeIndex } from './deduplicated-tracking-log';

/** Stats are read once per scrape (one worker round trip), whatever number of metrics use them. */
const STATS_FRESH_MS = 1_000;

/**
 * The dedupe index's metrics, read on scrape. Registers nothing when the log has no index (the
 * embedded sqlite log, or `DEDUPE_INDEX=off`).
 */
export function registerDedupeIndexMetrics(registry: Registry, eventLog: unknown): void {
  if (!hasDedupeIndex(eventLog)) return;
  let cached: { at: number; stats: Promise<DedupeIndexStats | undefined> } | undefined;
  const stats = (): Promise<DedupeIndexStats | undefined> => {
    if (!cached || Date.now() - cached.at > STATS_FRESH_MS) {
      cached = { at: Date.now(), stats: eventLog.dedupeIndexStats().catch(() => undefined) };
    }
    return cached.stats;
  };
  const counterOf = (name: string, help: string, read: (value: DedupeIndexStats) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      async collect() {
        const value = await stats();
        if (!value) return;
        this.reset();
        this.inc(read(value));
      },
    });
  const gaugeOf = (name: string, help: string, read: (value: DedupeIndexStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const value = await stats();
        if (value) this.set(read(value));
      },
    });
  gaugeOf(
    'tributary_dedupe_index_store_bytes',
    'Bytes of the dedupe index on disk (pages in use).',
    (value) => value.storeBytes,
  );
  gaugeOf(
    'tributary_dedupe_index_filter_bytes',
    'Bytes of the in-memory filters of the dedupe index, one per hour bucket.',
    (value) => value.filterBytes,
  );
  gaugeOf('tributary_dedupe_index_ids', 'Message ids held by the dedupe index, all buckets.', (value) =>
    value.buckets.reduce((sum, bucket) => sum + bucket.ids, 0),
  );
  const perBucketGauge = (
    name: string,
    help: string,
    read: (bucket: DedupeIndexStats['buckets'][number]) => number,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['bucket'],
      registers: [registry],
      async collect() {
        const value = await stats();
        if (!value) return;
        this.reset();
        for (const bucket of value.buckets)
          this.set({ bucket: new Date(bucket.startsAt).toISOString() }, read(bucket));
      },
    });
  perBucketGauge(
    'tributary_dedupe_index_bucket_ids',
    'Message ids held by the dedupe index per hour bucket (label: the bucket start, ISO 8601).',
    (bucket) => bucket.ids,
  );
  perBucketGauge(
    'tributary_dedupe_index_bucket_runs',
    'Sorted runs of each hour bucket of the dedupe index (label: the bucket start): a lookup its filter cannot rule out reads each; merges keep it near 30 at most.',
    (bucket) => bucket.runs,
  );
  counterOf(
    'tributary_dedupe_index_lookups_total',
    'Message ids looked up in the dedupe index.',
    (value) => value.lookups,
  );
  counterOf(
    'tributary_dedupe_index_hits_total',
    'Lookups that found the id in the dedupe index (duplicates older than the guard window, or not yet forgotten by it).',
    (value) => value.hits,
  );
  counterOf(
    'tributary_dedupe_index_store_reads_total',
    'Lookups the in-memory filters could not rule out, answered from disk.',
    (value) => value.storeReads,
  );
  counterOf(
    'tributary_dedupe_index_buckets_dropped_early_total',
    'Hour buckets dropped before the end of DEDUPE_WINDOW because the index reached DEDUPE_INDEX_MAX_BYTES: the effective window is shorter.',
    (value) => value.droppedEarlyBuckets,
  );
  new Gauge({
    name: 'tributary_dedupe_index_catch_up_lag_seconds',
    help: 'Age of the oldest stored message the dedupe index has not read yet (0: caught up).',
    registers: [registry],
    collect() {
      this.set(eventLog.dedupeStatus().lagMs / 1000);
    },
  });
  new Gauge({
    name: 'tributary_dedupe_index_catch_up_lag_messages',
    help: 'Messages stored in the log beyond what the dedupe index has read, as last seen.',
    registers: [registry],
    collect() {
      this.set(eventLog.dedupeStatus().lagMessages);
    },
  });
  new Gauge({
    name: 'tributary_dedupe_index_following',
    help: "1 while the dedupe index reads the log back: catching up, or indexing other replicas' messages (its own appends are indexed from their acknowledgements).",
    registers: [registry],
    collect() {
      this.set(eventLog.dedupeStatus().following ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tributary_dedupe_index_ready',
    help: '1 when the dedupe index has caught up with the log and lags less than half the guard window.',
    registers: [registry],
    collect() {
      this.set(eventLog.dedupeStatus().ready ? 1 : 0);
    },
  });
}

/** Nest provider token of the registration. */
export const DEDUPE_INDEX_METRICS = Symbol('DedupeIndexMetrics');
