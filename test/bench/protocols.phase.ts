/**
 * The Protocols ingest phase of `npm run bench`: the same `/v1/batch` load as the plain ingest phase,
 * sent to a source connected to a realistic tracking plan (50 events with 10 typed properties each,
 * identify traits, a common schema on `context`) with a strict schema config, so every message is
 * validated and its properties checked against the plan. Reported as `ratio protocols/ingest`.
 *
 * The bench messages fit the plan, as most production traffic does: the phase measures the cost of
 * checking, not of rewriting messages.
 */
import {
  compilePlan,
  judgeMessage,
  type EnforcementSettings,
  type PlanRules,
  type TrackingMessage,
} from '@tributary/protocols';
import type { ConfigApiClient } from '../support/config-api.client';

/** The bench source's schema config: everything the plan does not allow is blocked or omitted. */
const STRICT_SCHEMA_CONFIG = {
  allow_unplanned_track_events: false,
  allow_unplanned_track_event_properties: false,
  allow_unplanned_identify_traits: false,
  allow_track_event_on_violations: false,
  allow_identify_traits_on_violations: false,
  common_track_event_on_violations: 'BLOCK',
  common_identify_event_on_violations: 'BLOCK',
} as const;

/** Events of the bench messages (bench-messages.ts) first, then made-up ones up to 50. */
const BENCH_EVENTS = [
  'Order Completed',
  'Product Viewed',
  'Product Added',
  'Checkout Started',
  'Signed Up',
  'Subscription Renewed',
  'Search Performed',
  'Coupon Applied',
];
const PLAN_EVENT_COUNT = 50;

/** Ten typed properties: the five the bench's track messages carry, and five optional others. */
function trackProperties(): Record<string, unknown> {
  return {
    orderId: { type: 'string', pattern: '^ord_[0-9]+$' },
    revenue: { type: 'number', minimum: 0 },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP'] },
    plan: { type: 'string', enum: ['free', 'starter', 'pro', 'enterprise'] },
    products: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string' },
          price: { type: 'number', minimum: 0 },
          quantity: { type: 'integer', minimum: 1 },
        },
        required: ['sku', 'price', 'quantity'],
      },
    },
    coupon: { type: ['string', 'null'] },
    discount: { type: 'number' },
    affiliation: { type: 'string' },
    shipping: { type: 'number' },
    completedAt: { type: 'string', format: 'date-time' },
  };
}

export function realisticPlanRules(): Record<string, unknown> {
  const names = [
    ...BENCH_EVENTS,
    ...Array.from(
      { length: PLAN_EVENT_COUNT - BENCH_EVENTS.length },
      (_, index) => `Planned Event ${index + 1}`,
    ),
  ];
  return {
    events: names.map((name) => ({
      name,
      version: 1,
      description: `${name}, as the bench sends it`,
      rules: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        labels: {},
        properties: {
          context: {},
          traits: { type: 'object' },
          properties: {
            type: 'object',
            properties: trackProperties(),
            required: ['orderId', 'revenue', 'currency'],
          },
        },
        required: ['properties'],
      },
    })),
    identify: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        traits: {
          type: 'object',
          properties: {
            email: { type: 'string', format: 'email' },
            name: { type: 'string' },
            plan: { type: 'string', enum: ['free', 'starter', 'pro', 'enterprise'] },
            city: { type: 'string' },
            createdAt: { type: 'string', format: 'date-time' },
            logins: { type: 'integer', minimum: 0 },
          },
          required: ['email'],
        },
      },
    },
    global: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        context: {
          type: 'object',
          properties: {
            library: {
              type: 'object',
              properties: { name: { type: 'string' }, version: { type: 'string' } },
              required: ['name', 'version'],
            },
            ip: { type: 'string', format: 'ipv4' },
            userAgent: { type: 'string', minLength: 1 },
            locale: { type: 'string', pattern: '^[a-z]{2}-[A-Z]{2}$' },
          },
          required: ['library'],
        },
      },
    },
    identify_traits: [],
    group_traits: [],
  };
}

/**
 * Creates the source, the plan and the connection, and sets a strict schema config: unplanned events
 * blocked, unplanned properties and traits omitted, violations blocked. Returns the write key.
 */
export async function createPlannedSource(
  api: ConfigApiClient,
  workspace: string,
  sourceSlug: string,
): Promise<string> {
  const call = (method: 'POST' | 'PATCH', path: string, body: unknown) => api.ok(method, path, body);
  const source = await call('POST', `workspaces/${workspace}/sources`, {
    source: { name: sourceSlug, catalog_name: 'node' },
  });
  const plan = await call('POST', `workspaces/${workspace}/tracking-plans`, {
    tracking_plan: { display_name: 'Bench plan', rules: realisticPlanRules() },
  });
  const planId = String(plan.name).split('/').pop();
  await call('POST', `workspaces/${workspace}/tracking-plans/${planId}/source-connections`, {
    source_name: `workspaces/${workspace}/sources/${sourceSlug}`,
  });
  const strict = STRICT_SCHEMA_CONFIG;
  await call('PATCH', `workspaces/${workspace}/sources/${sourceSlug}/schema-config`, {
    schema_config: strict,
    update_mask: { paths: Object.keys(strict).map((field) => `schema_config.${field}`) },
  });
  return source.write_keys[0];
}

/**
 * Fails unless the plan lets every bench message through unchanged: a blocked message is not
 * appended, and would make the phase look faster than it is.
 */
export function assertBenchMessagesFitPlan(storedMessages: Record<string, unknown>[]): void {
  const plan = compilePlan({
    planId: 'rs_bench',
    planName: 'Bench plan',
    rules: realisticPlanRules() as PlanRules,
  });
  if (plan.skipped.length > 0)
    throw new Error(`the bench plan does not compile: ${JSON.stringify(plan.skipped)}`);
  const settings: EnforcementSettings = {
    allow_unplanned_group_traits: true,
    forwarding_blocked_events_to: '',
    allow_group_traits_on_violations: true,
    forwarding_violations_to: '',
    allow_track_properties_on_violations: true,
    common_group_event_on_violations: 'ALLOW',
    ...STRICT_SCHEMA_CONFIG,
  };
  for (const message of storedMessages) {
    const verdict = judgeMessage(plan, settings, 'src_bench', message as TrackingMessage);
    if (verdict.kind !== 'allow' || verdict.changed) {
      throw new Error(`a bench message does not fit the bench plan: ${JSON.stringify({ message, verdict })}`);
    }
  }
}

/**
 * Proves the plan was enforced during the phase: one unplanned event sent to the planned source must
 * be counted as blocked by the violations route. Throws otherwise.
 */
export async function assertPlanEnforced(
  api: ConfigApiClient,
  workspace: string,
  sourceSlug: string,
  writeKey: string,
): Promise<void> {
  const probe = await fetch(`${api.instance.baseUrl}/v1/track`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      userId: 'bench-probe',
      event: 'Not In The Bench Plan',
      messageId: `probe-${Date.now()}`,
    }),
  });
  if (probe.status !== 200) throw new Error(`the Protocols probe got HTTP ${probe.status}`);
  const response = await api.get<{ blocked?: { unplanned?: number } }>(
    `workspaces/${workspace}/sources/${sourceSlug}/violations?window=1h`,
  );
  const summary = response.body;
  if (response.status !== 200 || (summary?.blocked?.unplanned ?? 0) < 1) {
    throw new Error(
      `the planned source did not block an unplanned event: ${response.status} ${JSON.stringify(summary)}`,
    );
  }
}
