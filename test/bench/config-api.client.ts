/**
 * The few Config API calls the bench makes, as an operator would: a workspace, sources, webhook
 * destinations and replays. Every call must answer 200; anything else fails the bench with the body.
 */
export interface ReplayState {
  name: string;
  state: 'RUNNING' | 'COMPLETED' | 'FAILED' | string;
  counts: Record<string, number> | null;
  failure_reason: string | null;
  create_time: string;
  finish_time: string | null;
}

export class BenchConfigApi {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string,
  ) {}

  async createWorkspace(slug: string, displayName: string): Promise<void> {
    await this.call('POST', 'workspaces', {
      workspace: { name: `workspaces/${slug}`, display_name: displayName },
    });
  }

  /** A Node source; returns its write key. */
  async createSource(workspace: string, slug: string): Promise<string> {
    const source = await this.call('POST', `workspaces/${workspace}/sources`, {
      source: { name: slug, catalog_name: 'node' },
    });
    return source.write_keys[0];
  }

  /**
   * A webhooks destination named `slug`; any slug but `webhooks` names the catalog entry explicitly,
   * which is how one source has two webhooks.
   */
  async createWebhookDestination(
    workspace: string,
    source: string,
    slug: string,
    options: { url: string; sharedSecret: string; enabled: boolean },
  ): Promise<void> {
    const name = `workspaces/${workspace}/sources/${source}/destinations/${slug}`;
    await this.call('POST', `workspaces/${workspace}/sources/${source}/destinations`, {
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
  async createPostgresDestination(
    workspace: string,
    source: string,
    options: { connectionString: string; schema: string },
  ): Promise<void> {
    const name = `workspaces/${workspace}/sources/${source}/destinations/postgres`;
    await this.call('POST', `workspaces/${workspace}/sources/${source}/destinations`, {
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
  async setDestinationEnabled(
    workspace: string,
    source: string,
    destination: string,
    enabled: boolean,
  ): Promise<void> {
    await this.call('PATCH', `workspaces/${workspace}/sources/${source}/destinations/${destination}`, {
      destination: { enabled },
      update_mask: { paths: ['destination.enabled'] },
    });
  }

  /** The destination's delivery counts (`delivered`, `retried`, ...) from its metrics. */
  async deliveryCounts(
    workspace: string,
    source: string,
    destination: string,
  ): Promise<Record<string, number>> {
    const metrics = await this.call(
      'GET',
      `workspaces/${workspace}/sources/${source}/destinations/${destination}/metrics`,
    );
    return metrics.counts;
  }

  /** Starts a replay; returns its id. */
  async requestReplay(
    workspace: string,
    source: string,
    destination: string,
    startTime: Date,
  ): Promise<string> {
    const replay: ReplayState = await this.call(
      'POST',
      `workspaces/${workspace}/sources/${source}/destinations/${destination}/replays`,
      { start_time: startTime.toISOString() },
    );
    return replay.name.split('/').pop()!;
  }

  replay(workspace: string, source: string, destination: string, replayId: string): Promise<ReplayState> {
    return this.call(
      'GET',
      `workspaces/${workspace}/sources/${source}/destinations/${destination}/replays/${replayId}`,
    );
  }

  private async call(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<any> {
    const response = await fetch(`${this.baseUrl}/v1beta/${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} /v1beta/${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  }
}
