import { Registry } from 'prom-client';
import { FUNCTION_DURATION_SAMPLES, FunctionMetrics, type FunctionOutcome } from './function-metrics';
import { registerFunctionMetrics } from './function-metrics.prometheus';

describe('FunctionMetrics', () => {
  it('counts invocations by outcome and sums cpu time, per function', () => {
    const metrics = new FunctionMetrics();
    const outcomes: FunctionOutcome[] = [
      'success',
      'success',
      'filtered',
      'retried',
      'timeout',
      'memory_exceeded',
    ];
    outcomes.forEach((outcome, index) =>
      metrics.record('ws1', 'dfn_a', 'DESTINATION', outcome, 10 + index, 2.5),
    );
    metrics.record('ws1', 'ifnd_b', 'INSERT_DESTINATION', 'discarded', 7);

    expect(metrics.snapshot('ws1', 'dfn_a')).toEqual({
      invocations: 6,
      outcomes: { success: 2, filtered: 1, discarded: 0, retried: 1, timeout: 1, memory_exceeded: 1 },
      duration_ms: { p50: 12, p95: 15 },
      cpu_ms_total: 15,
    });
    expect(metrics.snapshot('ws1', 'ifnd_b')).toMatchObject({
      invocations: 1,
      outcomes: { discarded: 1, success: 0 },
      duration_ms: { p50: 7, p95: 7 },
      cpu_ms_total: 0,
    });
  });

  it('answers zeros and null percentiles for a function that never ran, or of another workspace', () => {
    const metrics = new FunctionMetrics();
    metrics.record('ws1', 'sfn_a', 'SOURCE', 'success', 3);
    const empty = {
      invocations: 0,
      outcomes: { success: 0, filtered: 0, discarded: 0, retried: 0, timeout: 0, memory_exceeded: 0 },
      duration_ms: { p50: null, p95: null },
      cpu_ms_total: 0,
    };
    expect(metrics.snapshot('ws1', 'sfn_never')).toEqual(empty);
    expect(metrics.snapshot('ws2', 'sfn_a')).toEqual(empty);
  });

  it('takes percentiles over the most recent invocations only, keeping a bounded sample', () => {
    const metrics = new FunctionMetrics();
    // Slow invocations first, then a full sample of fast ones: the slow ones have left the sample.
    for (let index = 0; index < 500; index += 1)
      metrics.record('ws1', 'dfn_p', 'DESTINATION', 'success', 5000);
    for (let index = 1; index <= FUNCTION_DURATION_SAMPLES; index += 1) {
      metrics.record('ws1', 'dfn_p', 'DESTINATION', 'success', index);
    }
    const snapshot = metrics.snapshot('ws1', 'dfn_p');
    expect(snapshot.invocations).toBe(500 + FUNCTION_DURATION_SAMPLES);
    expect(snapshot.duration_ms).toEqual({
      p50: FUNCTION_DURATION_SAMPLES / 2,
      p95: Math.ceil(0.95 * FUNCTION_DURATION_SAMPLES),
    });
    // One more slow one is in the sample again.
    metrics.record('ws1', 'dfn_p', 'DESTINATION', 'timeout', 5000);
    expect(metrics.snapshot('ws1', 'dfn_p').duration_ms.p95).toBe(
      Math.ceil(0.95 * FUNCTION_DURATION_SAMPLES) + 1,
    );
  });

  it('counts an invocation whose duration is not a usable number without sampling it', () => {
    const metrics = new FunctionMetrics();
    metrics.record('ws1', 'dfn_n', 'DESTINATION', 'success', Number.NaN, Number.NaN);
    metrics.record('ws1', 'dfn_n', 'DESTINATION', 'success', -4, -1);
    metrics.record('ws1', 'dfn_n', 'DESTINATION', 'success', Number.POSITIVE_INFINITY);
    expect(metrics.snapshot('ws1', 'dfn_n')).toMatchObject({
      invocations: 3,
      duration_ms: { p50: null, p95: null },
      cpu_ms_total: 0,
    });
  });

  it('refuses an unknown kind or outcome, counting nothing', () => {
    const metrics = new FunctionMetrics();
    expect(() => metrics.record('ws1', 'dfn_x', 'DESTINATION', 'exploded' as FunctionOutcome, 1)).toThrow(
      TypeError,
    );
    expect(() => metrics.record('ws1', 'dfn_x', 'LAMBDA' as 'SOURCE', 'success', 1)).toThrow(TypeError);
    expect(() => metrics.record('ws1', 'dfn_x', 'DESTINATION', 'toString' as FunctionOutcome, 1)).toThrow(
      TypeError,
    );
    expect(metrics.snapshot('ws1', 'dfn_x').invocations).toBe(0);
    expect(metrics.totalsByKind().get('DESTINATION')).toMatchObject({ success: 0 });
  });

  it('forgets a deleted function, keeping the totals by kind', () => {
    const metrics = new FunctionMetrics();
    metrics.record('ws1', 'dfn_f', 'DESTINATION', 'success', 1);
    metrics.forget('ws1', 'dfn_f');
    expect(metrics.snapshot('ws1', 'dfn_f').invocations).toBe(0);
    expect(metrics.totalsByKind().get('DESTINATION')?.success).toBe(1);
  });
});

describe('registerFunctionMetrics', () => {
  async function valuesOf(registry: Registry, name: string) {
    const metric = (await registry.getMetricsAsJSON()).find((candidate) => candidate.name === name);
    return metric?.values ?? [];
  }

  it('exports invocations by kind and outcome and durations by kind, with no function id', async () => {
    const registry = new Registry();
    const metrics = new FunctionMetrics();
    registerFunctionMetrics(registry, metrics);
    metrics.record('ws1', 'dfn_a', 'DESTINATION', 'success', 20);
    metrics.record('ws1', 'dfn_b', 'DESTINATION', 'success', 30);
    metrics.record('ws2', 'sfn_c', 'SOURCE', 'timeout', 5000);

    const invocations = await valuesOf(registry, 'tributary_function_invocations_total');
    expect(invocations).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { kind: 'destination', outcome: 'success' }, value: 2 }),
        expect.objectContaining({ labels: { kind: 'source', outcome: 'timeout' }, value: 1 }),
        expect.objectContaining({ labels: { kind: 'insert_destination', outcome: 'success' }, value: 0 }),
      ]),
    );
    expect(invocations).toHaveLength(3 * 6);

    // Histogram values carry the series name (`_bucket`, `_sum`, `_count`), which the type leaves out.
    const durations = (await valuesOf(registry, 'tributary_function_duration_seconds')) as Array<{
      metricName?: string;
      labels: Record<string, string | number>;
      value: number;
    }>;
    const countOf = (kind: string) =>
      durations.find(
        (value) =>
          value.metricName === 'tributary_function_duration_seconds_count' && value.labels.kind === kind,
      )?.value;
    const sumOf = (kind: string) =>
      durations.find(
        (value) =>
          value.metricName === 'tributary_function_duration_seconds_sum' && value.labels.kind === kind,
      )?.value;
    expect(countOf('destination')).toBe(2);
    expect(sumOf('destination')).toBeCloseTo(0.05);
    expect(countOf('source')).toBe(1);
    expect(sumOf('source')).toBeCloseTo(5);
    for (const value of [...invocations, ...durations]) {
      expect(Object.keys(value.labels).sort()).not.toContain('function_id');
    }

    // The text a scrape reads.
    const text = await registry.metrics();
    expect(text).toContain('tributary_function_invocations_total{kind="destination",outcome="success"} 2');
    expect(text).toContain('tributary_function_duration_seconds_bucket{le="0.025",kind="destination"} 1');
  });
});
