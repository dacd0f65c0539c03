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

  it('answers null for a source without a plan (R0)', () => {
    expect(registry.enforcementFor(source('a'))).toBeNull();
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
    const ofA = registry.enforcementFor(source('a'))!;
    expect(ofA.plan.planId).toBe('rs_1');
    expect(registry.enforcementFor(source('a'))).toBe(ofA);
    expect(registry.enforcementFor(source('b'))!.plan).toBe(ofA.plan);

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
    const changedSettings = registry.enforcementFor(source('a'))!;
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
    const updated = registry.enforcementFor(source('a'))!;
    expect(updated.plan).not.toBe(ofA.plan);
    expect(registry.enforcementFor(source('b'))!.plan).toBe(updated.plan);

    apply({
      type: 'TrackingPlanSourceDisconnected',
      data: { workspaceSlug: 'ws', planId: 'rs_1', sourceSlug: 'a' },
    });
    expect(registry.enforcementFor(source('a'))).toBeNull();
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
    expect(registry.enforcementFor(source('a'))!.plan.skipped.map((skipped) => skipped.rule)).toEqual([
      'global',
    ]);
    expect(await metricsRegistry.metrics()).toContain(
      'tributary_protocols_skipped_rules_total{plan_id="rs_bad"} 1',
    );
  });
});
