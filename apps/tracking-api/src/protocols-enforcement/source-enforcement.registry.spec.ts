import { DEFAULT_SCHEMA_CONFIG, type ConfigEvent } from '@tributary/config-domain';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import { MetricsRegistry } from '@tributary/platform';
import { ProtocolsMetrics } from './protocols.metrics';
import { SourceEnforcementRegistry } from './source-enforcement.registry';

const source = (slug: string) => ({
  workspaceSlug: 'ws',
  sourceSlug: slug,
  sourceId: `src_${slug}`,
  catalogName: 'catalog/sources/node',
  displayName: slug,
  writeKey: `key-${slug}`,
  createTime: '2026-01-01T00:00:00.000Z',
});
const rules = (required: string) => ({
  events: [{ name: 'E', version: 1, rules: { type: 'object', required: [required] } }],
  identify_traits: [],
  group_traits: [],
});

describe('SourceEnforcementRegistry', () => {
  let runner: ConfigProjectionRunner;
  let registry: SourceEnforcementRegistry;
  let metricsRegistry: MetricsRegistry;
  let position = 0n;

  const apply = (event: ConfigEvent) => {
    position += 1n;
    runner.apply({
      streamName: 'test',
      type: event.type,
      data: event.data as unknown as Record<string, unknown>,
      metadata: { actor: 'system', requestId: 'r', time: '2026-01-01T00:00:00.000Z' },
      revision: 0,
      position,
    });
  };
  const nextTick = () => new Promise((resolve) => setImmediate(resolve));
  /** Source a's enforcement once its plan is compiled past `plan` (compiling runs in slices). */
  const compiledBeyond = async (plan: unknown) => {
    for (;;) {
      const enforcement = (await registry.enforcementFor(source('a')))!;
      if (enforcement.plan !== plan) return enforcement;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  beforeEach(() => {
    runner = new ConfigProjectionRunner();
    metricsRegistry = new MetricsRegistry();
    registry = new SourceEnforcementRegistry(
      new ConfigReadModel(runner),
      new ProtocolsMetrics(metricsRegistry),
    );
    apply({ type: 'SourceCreated', data: { ...source('a'), schemaConfig: DEFAULT_SCHEMA_CONFIG } });
    apply({ type: 'SourceCreated', data: { ...source('b'), schemaConfig: DEFAULT_SCHEMA_CONFIG } });
  });

  afterEach(() => registry.onModuleDestroy());

  it('answers null for a source without a plan (R0)', async () => {
    expect(await registry.enforcementFor(source('a'))).toBeNull();
  });

  it('compiles a plan version once, shares it between sources, and compiles again on a change', async () => {
    apply({
      type: 'TrackingPlanCreated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_1',
        displayName: 'Plan',
        rules: rules('first'),
        createTime: '2026-01-01T00:00:00Z',
        updateTime: '2026-01-01T00:00:00Z',
      },
    });
    apply({
      type: 'TrackingPlanSourceConnected',
      data: { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'a' },
    });
    apply({
      type: 'TrackingPlanSourceConnected',
      data: { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'b' },
    });
    await nextTick();
    const ofA = (await registry.enforcementFor(source('a')))!;
    expect(ofA.plan.planId).toBe('rs_1');
    expect(await registry.enforcementFor(source('a'))).toBe(ofA);
    expect((await registry.enforcementFor(source('b')))!.plan).toBe(ofA.plan);

    apply({
      type: 'SchemaConfigUpdated',
      data: {
        workspaceSlug: 'ws',
        sourceSlug: 'a',
        sourceId: 'src_a',
        changes: { allow_unplanned_track_events: false },
      },
    });
    await nextTick();
    const changedSettings = (await registry.enforcementFor(source('a')))!;
    expect(changedSettings.settings.allow_unplanned_track_events).toBe(false);
    // Same plan version: not compiled again.
    expect(changedSettings.plan).toBe(ofA.plan);

    apply({
      type: 'TrackingPlanUpdated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_1',
        changes: { rules: rules('second') },
        updateTime: '2026-01-02T00:00:00Z',
      },
    });
    await nextTick();
    const updated = await compiledBeyond(ofA.plan);
    expect(updated.plan).not.toBe(ofA.plan);
    expect((await registry.enforcementFor(source('b')))!.plan).toBe(updated.plan);

    apply({
      type: 'TrackingPlanSourceDisconnected',
      data: { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'a' },
    });
    expect(await registry.enforcementFor(source('a'))).toBeNull();
  });

  it('counts rules that do not compile in the metrics, and still enforces the plan', async () => {
    apply({
      type: 'TrackingPlanCreated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_bad',
        displayName: 'Bad',
        rules: { ...rules('x'), global: { type: 'object', properties: { a: { pattern: '([' } } } },
        createTime: '2026-01-01T00:00:00Z',
        updateTime: '2026-01-01T00:00:00Z',
      },
    });
    apply({
      type: 'TrackingPlanSourceConnected',
      data: { workspaceSlug: 'ws', planId: 'rs_bad', sourceSlug: 'a' },
    });
    await nextTick();
    expect((await registry.enforcementFor(source('a')))!.plan.skipped.map((skipped) => skipped.rule)).toEqual(
      ['global'],
    );
    expect(await metricsRegistry.metrics()).toContain(
      'tributary_protocols_skipped_rules_total{plan_id="rs_bad"} 1',
    );
  });
  it('compiles a new version of a 1,500-rule plan in slices: the previous version applies meanwhile, and the event loop never stalls', async () => {
    const largeRules = (field: string) => ({
      events: Array.from({ length: 1_500 }, (_, index) => ({
        name: `Event ${index}`,
        version: 1,
        rules: {
          type: 'object',
          properties: {
            properties: {
              type: 'object',
              properties: {
                [`${field}_${index}`]: { type: 'string', minLength: 1, maxLength: 64 },
                amount: { type: 'number', minimum: 0, maximum: index + 1 },
                currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
              },
              required: [`${field}_${index}`],
            },
          },
        },
      })),
      identify_traits: [],
      group_traits: [],
    });
    apply({
      type: 'TrackingPlanCreated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_large',
        displayName: 'Large',
        rules: largeRules('first'),
        createTime: '2026-01-01T00:00:00Z',
        updateTime: '2026-01-01T00:00:00Z',
      },
    });
    apply({
      type: 'TrackingPlanSourceConnected',
      data: { workspaceSlug: 'ws', planId: 'rs_large', sourceSlug: 'a' },
    });
    const first = (await registry.enforcementFor(source('a')))!;
    expect(first.plan.events.size).toBe(1_500);

    // A ticker stands for concurrent requests: the longest run between its turns is how long one
    // waited. Measured in CPU time of this process, so that the machine's other load (when this
    // process is not scheduled at all) does not count as the event loop being blocked.
    let longestGap = 0;
    let last = process.cpuUsage();
    let ticking = true;
    const tick = () => {
      const used = process.cpuUsage(last);
      longestGap = Math.max(longestGap, (used.user + used.system) / 1_000);
      last = process.cpuUsage();
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    apply({
      type: 'TrackingPlanUpdated',
      data: {
        workspaceSlug: 'ws',
        planId: 'rs_large',
        changes: { rules: largeRules('second') },
        updateTime: '2026-01-02T00:00:00Z',
      },
    });
    await nextTick();
    const whileCompiling = (await registry.enforcementFor(source('a')))!.plan;
    const current = (await compiledBeyond(first.plan)).plan;
    const compileMs = performance.now() - started;
    ticking = false;

    expect(current.events.get('Event 7')).toBeDefined();
    expect(current.skipped).toEqual([]);
    expect(compileMs).toBeGreaterThan(longestGap);
    // A slice is about 10 ms; the bound leaves room for one Ajv instance being set up and for GC.
    expect(longestGap).toBeLessThan(250);
    // While the new version was being compiled, the previous one judged.
    expect(whileCompiling).toBe(first.plan);
  }, 180_000);
});
