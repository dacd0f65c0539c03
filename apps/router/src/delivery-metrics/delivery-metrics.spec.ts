import {
  DeliveryMetrics,
  LATENCY_WINDOWS_MS,
  MAX_LATENCY_SAMPLES,
  SERIES_BUCKET_MS,
  SERIES_BUCKETS,
} from './delivery-metrics';

describe('DeliveryMetrics', () => {
  const key = 'src_1/webhooks';

  it('counts outcomes and reports latency percentiles per window', () => {
    let now = 10 * LATENCY_WINDOWS_MS.last_hour;
    const metrics = new DeliveryMetrics(() => now);
    for (let latency = 1; latency <= 100; latency++) metrics.record(key, 'delivered', { latencyMs: latency });
    metrics.record(key, 'filtered');
    now += 2 * 60_000;
    metrics.record(key, 'delivered', { latencyMs: 1_000 });

    const snapshot = metrics.snapshot(key);
    expect(snapshot.counts).toMatchObject({ delivered: 101, filtered: 1, discarded: 0 });
    expect(snapshot.latency.last_minute).toEqual({ p50: 1_000, p95: 1_000, samples: 1 });
    expect(snapshot.latency.last_5_minutes).toEqual({ p50: 51, p95: 96, samples: 101 });
  });

  it('forgets samples older than the longest window', () => {
    let now = 10 * LATENCY_WINDOWS_MS.last_hour;
    const metrics = new DeliveryMetrics(() => now);
    for (let index = 0; index < 10; index++) metrics.record(key, 'delivered', { latencyMs: 5 });
    now += LATENCY_WINDOWS_MS.last_hour + 1;
    metrics.record(key, 'delivered', { latencyMs: 7 });

    expect(metrics.snapshot(key).latency.last_hour).toEqual({ p50: 7, p95: 7, samples: 1 });
    expect(metrics.snapshot(key).counts.delivered).toBe(11);
  });

  it('keeps only the newest samples beyond the cap, and stays fast there', () => {
    const now = 10 * LATENCY_WINDOWS_MS.last_hour;
    const metrics = new DeliveryMetrics(() => now);
    const beyondTheCap = 3 * MAX_LATENCY_SAMPLES;
    const startedAt = performance.now();
    // Latencies 0, 1, 2, ...: the newest MAX_LATENCY_SAMPLES are the largest.
    for (let index = 0; index < beyondTheCap; index++) metrics.record(key, 'delivered', { latencyMs: index });
    const elapsedMs = performance.now() - startedAt;

    const { last_minute } = metrics.snapshot(key).latency;
    expect(last_minute.samples).toBe(MAX_LATENCY_SAMPLES);
    expect(last_minute.p50).toBe(beyondTheCap - MAX_LATENCY_SAMPLES / 2 - 1);
    expect(last_minute.p95).toBe(beyondTheCap - MAX_LATENCY_SAMPLES * 0.05 - 1);
    // Moving the whole array per sample (the old way) took seconds here; bulk compaction takes milliseconds.
    expect(elapsedMs).toBeLessThan(1_000);
  });

  it('forgets a destination entirely', () => {
    const metrics = new DeliveryMetrics(() => 0);
    metrics.record(key, 'discarded', { messageId: 'm-1', reason: 'HTTP 404' });
    metrics.forget(key);
    expect(metrics.snapshot(key).counts.discarded).toBe(0);
    expect(metrics.snapshot(key).lastDiscardReasons).toEqual([]);
  });

  it('counts values not stored and discards by cause, keeping the recent ones with their reasons', () => {
    const metrics = new DeliveryMetrics(() => 0);
    metrics.record(key, 'delivered', {
      messageId: 'm-1',
      valuesNotStored: [
        { cause: 'type_conflict', table: 'typed', column: 'amount', reason: 'column "amount" holds numbers' },
        { cause: 'column_limit', table: 'typed', column: 'extra', reason: 'table "typed" has 500 columns' },
      ],
    });
    metrics.record(key, 'delivered', {
      messageId: 'm-2',
      valuesNotStored: [{ cause: 'type_conflict', table: 'typed', column: 'amount', reason: 'again' }],
    });
    metrics.record(key, 'discarded', {
      messageId: 'm-3',
      reason: 'not created',
      discardCause: 'foreign_table',
    });
    metrics.record(key, 'discarded', { messageId: 'm-4', reason: 'HTTP 404' });

    const snapshot = metrics.snapshot(key);
    expect(snapshot.counts).toMatchObject({ delivered: 2, discarded: 2 });
    expect(snapshot.valuesNotStored).toEqual({ type_conflict: 2, column_limit: 1 });
    expect(snapshot.discardsByCause).toEqual({
      system_schema: 0,
      foreign_table: 1,
      table_limit: 0,
      egress_denied: 0,
    });
    expect(snapshot.lastValuesNotStored.map((value) => [value.messageId, value.column])).toEqual([
      ['m-1', 'amount'],
      ['m-1', 'extra'],
      ['m-2', 'amount'],
    ]);
    for (let index = 0; index < 30; index++)
      metrics.record(key, 'delivered', {
        messageId: `bulk-${index}`,
        valuesNotStored: [{ cause: 'column_limit', table: 't', column: 'c', reason: 'r' }],
      });
    const later = metrics.snapshot(key);
    expect(later.valuesNotStored.column_limit).toBe(31);
    expect(later.lastValuesNotStored).toHaveLength(20);
    expect(later.lastValuesNotStored.at(-1)?.messageId).toBe('bulk-29');
  });

  it('counts dead letters by cause: retries exhausted or poison', () => {
    const metrics = new DeliveryMetrics(() => 0);
    expect(metrics.snapshot(key).deadLettersByCause).toEqual({ retries_exhausted: 0, poison: 0 });
    metrics.record(key, 'dead_lettered', { messageId: 'm-1', deadLetterCause: 'retries_exhausted' });
    metrics.record(key, 'dead_lettered', { messageId: 'm-2', deadLetterCause: 'poison' });
    metrics.record(key, 'dead_lettered', { messageId: 'm-3', deadLetterCause: 'poison' });
    // A cause given with another outcome is not a dead letter.
    metrics.record(key, 'retried', { messageId: 'm-4', deadLetterCause: 'poison' });
    const snapshot = metrics.snapshot(key);
    expect(snapshot.counts).toMatchObject({ dead_lettered: 3, retried: 1 });
    expect(snapshot.deadLettersByCause).toEqual({ retries_exhausted: 1, poison: 2 });
    expect(metrics.causesOf(key)?.deadLettersByCause).toEqual({ retries_exhausted: 1, poison: 2 });
  });

  it('reports the last hour minute by minute: counts by outcome and latency percentiles', () => {
    let now = 100 * SERIES_BUCKET_MS + 30_000;
    const metrics = new DeliveryMetrics(() => now);
    metrics.record(key, 'delivered', { latencyMs: 10 });
    metrics.record(key, 'delivered', { latencyMs: 30 });
    metrics.record(key, 'retried');
    now += SERIES_BUCKET_MS;
    metrics.record(key, 'dead_lettered');
    metrics.record(key, 'discarded', { reason: 'HTTP 400' });

    const series = metrics.series(key);
    expect(series).toHaveLength(SERIES_BUCKETS);
    const [previous, current] = series.slice(-2);
    expect(current.start).toBe(new Date(101 * SERIES_BUCKET_MS).toISOString());
    expect(previous.counts).toMatchObject({ delivered: 2, retried: 1, dead_lettered: 0 });
    expect(previous.latency).toEqual({ p50: 10, p95: 30 });
    expect(current.counts).toMatchObject({ delivered: 0, dead_lettered: 1, discarded: 1 });
    expect(current.latency).toEqual({ p50: null, p95: null });
    expect(series[0].counts.delivered).toBe(0);

    now += SERIES_BUCKETS * SERIES_BUCKET_MS;
    metrics.record(key, 'delivered', { latencyMs: 5 });
    const later = metrics.series(key);
    expect(later.reduce((sum, bucket) => sum + bucket.counts.delivered, 0)).toBe(1);
    expect(later.at(-1)?.latency).toEqual({ p50: 5, p95: 5 });
  });
});
