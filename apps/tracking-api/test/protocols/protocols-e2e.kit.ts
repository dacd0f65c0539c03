// Set-up for the Protocols end-to-end suites: tracking plans, connections and schema configs made
// through the Config API, messages sent with the real @segment/analytics-node, and the log, the
// forwarding sources and the violations route read back.
import { sourceName, trackingPlanName, workspaceName } from '@tributary/contracts';
import { Analytics } from '@segment/analytics-node';
import {
  createSource,
  createWorkspace,
  readSourceMessages,
  type ApiEndpoint,
  type StoredMessage,
  type TestSource,
} from '../../../../test/support/tracking-e2e.kit';
import { configApi } from '../../../../test/support/config-api.client';
import type { TributaryTestInstance } from '../../../../test/support/tributary-test-instance';

/** A source connected to a plan, with two sibling sources that can receive forwards. */
export interface PlannedSource {
  source: TestSource;
  blockedTarget: TestSource;
  violationsTarget: TestSource;
  planId: string;
  planName: string;
}

export async function createPlan(
  t: ApiEndpoint,
  workspaceSlug: string,
  rules: Record<string, unknown>,
  displayName = 'E2E plan',
): Promise<{ planId: string; body: any }> {
  const response = await configApi(t, 'POST', `${workspaceName(workspaceSlug)}/tracking-plans`, {
    tracking_plan: { display_name: displayName, rules },
  });
  if (response.status !== 200)
    throw new Error(`creating plan: ${response.status} ${JSON.stringify(response.body)}`);
  return { planId: String(response.body.name).split('/').pop()!, body: response.body };
}

export async function connectPlan(t: ApiEndpoint, source: TestSource, planId: string): Promise<void> {
  const response = await configApi(
    t,
    'POST',
    `${trackingPlanName({ workspaceSlug: source.workspaceSlug, planId })}/source-connections`,
    { source_name: sourceName(source) },
  );
  if (response.status !== 200)
    throw new Error(`connecting: ${response.status} ${JSON.stringify(response.body)}`);
}

export async function disconnectPlan(t: ApiEndpoint, source: TestSource, planId: string): Promise<void> {
  const response = await configApi(
    t,
    'DELETE',
    `${trackingPlanName({ workspaceSlug: source.workspaceSlug, planId })}/source-connections/${source.sourceSlug}`,
  );
  if (response.status !== 200)
    throw new Error(`disconnecting: ${response.status} ${JSON.stringify(response.body)}`);
}

/** PATCHes the named schema-config fields (masked) of the source. */
export function patchSchemaConfig(
  t: ApiEndpoint,
  source: TestSource,
  changes: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  return configApi(t, 'PATCH', `${sourceName(source)}/schema-config`, {
    schema_config: changes,
    update_mask: { paths: Object.keys(changes).map((field) => `schema_config.${field}`) },
  });
}

export async function setSchemaConfig(t: ApiEndpoint, source: TestSource, changes: Record<string, unknown>) {
  const response = await patchSchemaConfig(t, source, changes);
  if (response.status !== 200)
    throw new Error(`schema config: ${response.status} ${JSON.stringify(response.body)}`);
}

/**
 * A workspace with a source connected to a new plan with these rules and this schema config, and
 * two more sources to forward to (named in the config only when `forward` is set).
 */
export async function plannedSource(
  t: ApiEndpoint,
  rules: Record<string, unknown>,
  config: Record<string, unknown> = {},
  options: { forward?: boolean } = {},
): Promise<PlannedSource> {
  const workspace = await createWorkspace(t);
  const source = await createSource(t, workspace);
  const blockedTarget = await createSource(t, workspace);
  const violationsTarget = await createSource(t, workspace);
  const planName = `Plan of ${source.sourceSlug}`;
  const { planId } = await createPlan(t, workspace.slug, rules, planName);
  await connectPlan(t, source, planId);
  const forwarding = options.forward
    ? {
        forwarding_blocked_events_to: blockedTarget.sourceSlug,
        forwarding_violations_to: violationsTarget.sourceSlug,
      }
    : {};
  if (Object.keys(config).length + Object.keys(forwarding).length > 0) {
    await setSchemaConfig(t, source, { ...config, ...forwarding });
  }
  return { source, blockedTarget, violationsTarget, planId, planName };
}

/** Sends with a real analytics-node client in one batch; resolves with the HTTP statuses once flushed. */
export async function sendWithAnalyticsNode(
  t: ApiEndpoint,
  writeKey: string,
  send: (analytics: Analytics) => void,
): Promise<number[]> {
  const analytics = new Analytics({
    writeKey,
    host: t.baseUrl,
    path: '/v1/batch',
    flushAt: 500,
    flushInterval: 50,
    maxRetries: 0,
    httpRequestTimeout: 15_000,
  });
  const statuses: number[] = [];
  analytics.on('http_response', (response) => statuses.push(response.status));
  send(analytics);
  await analytics.closeAndFlush({ timeout: 20_000 });
  return statuses;
}

/** The stored payloads of a source by messageId. */
export async function storedPayloads(
  t: TributaryTestInstance,
  source: TestSource,
): Promise<Map<string, StoredMessage['payload']>> {
  const stored = await readSourceMessages(t, source);
  return new Map([...stored].map(([id, message]) => [id, message.payload]));
}

export async function violationsOf(
  t: ApiEndpoint,
  source: TestSource,
  window = '24h',
): Promise<{ status: number; body: any }> {
  return configApi(t, 'GET', `${sourceName(source)}/violations?window=${window}`);
}

/** Rules of one event whose `properties` object has these property schemas (draft-07, typewriter's shape). */
export function eventRule(
  name: string,
  properties: Record<string, unknown>,
  required: string[] = [],
  version = 1,
): Record<string, unknown> {
  return {
    name,
    version,
    rules: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      labels: {},
      properties: {
        context: {},
        traits: { type: 'object' },
        properties: { type: 'object', properties, required },
      },
      required: ['properties'],
    },
  };
}
