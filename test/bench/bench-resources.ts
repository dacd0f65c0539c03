/**
 * What the bench sets up through the Config API, as an operator would: a workspace, sources, webhook
 * and PostgreSQL destinations, and replays. Steps over the one Config API test client
 * (test/support/config-api.client.ts): every call must answer 200, anything else fails the bench
 * with the body.
 */
import {
  destinationName,
  lastSegment,
  workspaceName,
  type DeliveryMetricsResource,
  type ReplayResource,
  type SourceResource,
} from '@tributary/contracts';
import type { ConfigApiClient } from '../support/config-api.client';

export async function createWorkspace(
  api: ConfigApiClient,
  slug: string,
  displayName: string,
): Promise<void> {
  await api.ok('POST', 'workspaces', {
    workspace: { name: workspaceName(slug), display_name: displayName },
  });
}

/** A Node source; returns its write key. */
export async function createSource(api: ConfigApiClient, workspace: string, slug: string): Promise<string> {
  const source = await api.ok<SourceResource>('POST', `workspaces/${workspace}/sources`, {
    source: { name: slug, catalog_name: 'node' },
  });
  return source.write_keys[0]!;
}

/** The id of the source `slug`: its messages' subject in the tracking log, which the replay floor reads. */
export async function sourceIdOf(api: ConfigApiClient, workspace: string, slug: string): Promise<string> {
  const source = await api.ok<SourceResource>('GET', `workspaces/${workspace}/sources/${slug}`);
  return source.id!;
}

/**
 * A webhooks destination named `slug`; any slug but `webhooks` names the catalog entry explicitly,
 * which is how one source has two webhooks.
 */
export async function createWebhookDestination(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  slug: string,
  options: { url: string; sharedSecret: string; enabled: boolean },
): Promise<void> {
  const name = destinationName({ workspaceSlug: workspace, sourceSlug: source, destinationSlug: slug });
  await api.ok('POST', `workspaces/${workspace}/sources/${source}/destinations`, {
    destination: {
      name,
      ...(slug !== 'webhooks' && { catalog_name: 'catalog/destinations/webhooks' }),
      enabled: options.enabled,
      config: [
        { name: `${name}/config/url`, value: options.url },
        { name: `${name}/config/shared_secret`, value: options.sharedSecret },
      ],
    },
  });
}

/** A PostgreSQL destination writing into `schema`. */
export async function createPostgresDestination(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  options: { connectionString: string; schema: string },
): Promise<void> {
  const name = destinationName({ workspaceSlug: workspace, sourceSlug: source, destinationSlug: 'postgres' });
  await api.ok('POST', `workspaces/${workspace}/sources/${source}/destinations`, {
    destination: {
      name,
      enabled: true,
      config: [
        { name: `${name}/config/connection_string`, value: options.connectionString },
        { name: `${name}/config/schema`, value: options.schema },
      ],
    },
  });
}

/**
 * Enables or disables a destination. A disabled one still has its consumer, which acknowledges
 * every message as skipped; a replay still sends it history.
 */
export async function setDestinationEnabled(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  destination: string,
  enabled: boolean,
): Promise<void> {
  await api.ok('PATCH', `workspaces/${workspace}/sources/${source}/destinations/${destination}`, {
    destination: { enabled },
    update_mask: { paths: ['destination.enabled'] },
  });
}

/** The destination's delivery counts (`delivered`, `retried`, ...) from its metrics. */
export async function deliveryCounts(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  destination: string,
): Promise<Record<string, number>> {
  const metrics = await api.ok<DeliveryMetricsResource>(
    'GET',
    `workspaces/${workspace}/sources/${source}/destinations/${destination}/metrics`,
  );
  return metrics.counts;
}

/** Starts a replay; returns its id. */
export async function requestReplay(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  destination: string,
  startTime: Date,
): Promise<string> {
  const replay = await api.ok<ReplayResource>(
    'POST',
    `workspaces/${workspace}/sources/${source}/destinations/${destination}/replays`,
    { start_time: startTime.toISOString() },
  );
  return lastSegment(replay.name);
}

export function replayOf(
  api: ConfigApiClient,
  workspace: string,
  source: string,
  destination: string,
  replayId: string,
): Promise<ReplayResource> {
  return api.ok<ReplayResource>(
    'GET',
    `workspaces/${workspace}/sources/${source}/destinations/${destination}/replays/${replayId}`,
  );
}
