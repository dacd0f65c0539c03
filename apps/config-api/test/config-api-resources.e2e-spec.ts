import { ConfigReadModel } from '@tributary/config-projections';
import type { TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { ConfigApiClient, createFixture, startConfigApi } from './config-api-e2e.kit';

const MILLISECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('Config API resources', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let fixture: Awaited<ReturnType<typeof createFixture>>;

  beforeAll(async () => {
    ({ instance, admin } = await startConfigApi());
    fixture = await createFixture(admin);
  });
  afterAll(() => instance.stop({ removeData: true }));

  it('workspaces: listed, read, with a 10-character id', async () => {
    const workspace = await admin.ok('GET', 'workspaces/acme');
    expect(workspace).toMatchObject({ name: 'workspaces/acme', display_name: 'Acme', region: 'us' });
    expect(workspace.id).toMatch(/^[0-9a-z]{10}$/);
    expect(workspace.create_time).toMatch(MILLISECONDS);
    const list = await admin.ok('GET', 'workspaces');
    expect(list.next_page_token).toBe('');
  });

  it('tokens: plaintext once, only for the listed workspaces, never listed', async () => {
    const created = await admin.ok('POST', 'access-tokens', {
      access_token: { description: 'ci', scopes: 'workspace:read', workspace_names: ['workspaces/acme'] },
    });
    expect(created).toMatchObject({ description: 'ci', scopes: 'workspace:read', workspace_names: ['workspaces/acme'] });
    expect(created.name).toMatch(/^access-tokens\/\d+$/);
    expect(created.token).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    expect(created.create_time).toMatch(SECONDS);
    const listed = await admin.ok('GET', 'access-tokens');
    const entry = listed.access_tokens.find((token: { name: string }) => token.name === created.name);
    expect(entry).toBeDefined();
    expect(entry.token).toBeUndefined();
    const readModel = instance.app.get(ConfigReadModel);
    expect(JSON.stringify([...readModel.tokensByNumber.values()])).not.toContain(created.token);
  });

  it('catalog: sources and destinations, webhooks and postgres among them', async () => {
    const sources = await admin.ok('GET', 'catalog/sources');
    expect(sources.sources.map((source: { name: string }) => source.name)).toContain('catalog/sources/javascript');
    const webhooks = await admin.ok('GET', 'catalog/destinations/webhooks');
    expect(webhooks.settings.map((setting: { name: string }) => setting.name)).toEqual(['url', 'headers', 'shared_secret']);
    expect((await admin.ok('GET', 'catalog/destinations/postgres')).display_name).toBe('PostgreSQL');
  });

  it('sources: a 32-character write key, library_config, millisecond times', async () => {
    expect(fixture.source).toMatchObject({
      name: 'workspaces/acme/sources/web',
      parent: 'workspaces/acme',
      catalog_name: 'catalog/sources/javascript',
      library_config: { metrics_enabled: false, retry_queue: false, cross_domain_id_enabled: false, api_host: '' },
    });
    expect(fixture.source.write_keys[0]).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(fixture.source.create_time).toMatch(MILLISECONDS);
  });

  it('destinations: disabled by default, every catalog setting listed with its default', async () => {
    expect(fixture.destination.enabled).toBe(false);
    expect(fixture.destination.config.map((entry: { name: string }) => entry.name.split('/config/')[1])).toEqual([
      'url',
      'headers',
      'shared_secret',
    ]);
    expect(fixture.destination.config[1]).toMatchObject({ value: {}, type: 'map' });
  });

  it('tracking plans: rs_ ids, whole seconds, rules stored verbatim', async () => {
    const rules = {
      events: [
        {
          name: 'Order Completed',
          description: 'd',
          version: 2,
          rules: {
            $schema: 'http://json-schema.org/draft-04/schema#',
            id: 'order',
            labels: { team: 'growth' },
            type: 'object',
            properties: { properties: { type: ['object', 'null'], properties: { coupon: { enum: ['A', null], pattern: '^[A-Z]$' } } } },
          },
        },
      ],
      identify_traits: null,
    };
    const plan = await admin.ok('POST', 'workspaces/acme/tracking-plans', { tracking_plan: { display_name: 'Store', rules } });
    expect(plan.name).toMatch(/^workspaces\/acme\/tracking-plans\/rs_[0-9A-Za-z]{27}$/);
    expect(plan.create_time).toMatch(SECONDS);
    expect(plan.rules).toEqual({ events: rules.events, identify_traits: [], group_traits: [] });
    expect(await admin.ok('GET', plan.name)).toEqual(plan);
  });

  it('source connections: flat create, batch create with :batchCreateConnections, list, delete with {}', async () => {
    const plan = await admin.ok('POST', 'workspaces/acme/tracking-plans', { tracking_plan: { display_name: 'Conn', rules: {} } });
    const planId = plan.name.split('/').pop();
    await admin.ok('POST', 'workspaces/acme/sources', { source: { name: 'workspaces/acme/sources/ios', catalog_name: 'ios' } });
    const flat = await admin.ok('POST', `${plan.name}/source-connections`, { source_name: 'workspaces/acme/sources/web' });
    expect(flat).toEqual({ source_name: 'workspaces/acme/sources/web', tracking_plan_id: planId });
    const batch = await admin.ok('POST', `${plan.name}/source-connections:batchCreateConnections`, {
      source_names: ['workspaces/acme/sources/web', 'workspaces/acme/sources/ios'],
    });
    expect(batch.connections).toHaveLength(2);
    expect((await admin.ok('GET', `${plan.name}/source-connections`)).connections).toHaveLength(2);
    const removed = await admin.call('DELETE', `${plan.name}/source-connections/workspaces/acme/sources/ios`);
    expect(removed.text).toBe('{}');
    expect((await admin.ok('GET', `${plan.name}/source-connections`)).connections).toEqual([flat]);
  });

  it('pagination: pages cover everything once; the last carries an empty token', async () => {
    for (let index = 0; index < 7; index++) {
      await admin.ok('POST', 'workspaces/acme/sources', { source: { name: `workspaces/acme/sources/p${index}`, catalog_name: 'node' } });
    }
    const all = (await admin.ok('GET', 'workspaces/acme/sources?page_size=1000')).sources.map((source: { name: string }) => source.name);
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 20; page++) {
      const answer = await admin.ok('GET', `workspaces/acme/sources?&page_size=3&page_token=${token}`);
      seen.push(...answer.sources.map((source: { name: string }) => source.name));
      token = answer.next_page_token;
      if (token === '') break;
    }
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('audit trail: the change, the resource, the actor, the time and the request id; secrets masked; filtered by prefix', async () => {
    await admin.call(
      'PATCH',
      fixture.destinationPath,
      { destination: { config: [{ name: 'shared_secret', value: 'audited-secret' }] } },
      { 'x-request-id': 'req-audit-1' },
    );
    const trail = await admin.ok('GET', `workspaces/acme/audit-events?resource_name_prefix=${encodeURIComponent(fixture.destinationPath)}`);
    const change = trail.audit_events.find((entry: { request_id: string }) => entry.request_id === 'req-audit-1');
    expect(change).toMatchObject({
      type: 'DestinationUpdated',
      resource_name: fixture.destinationPath,
      actor: 'access-tokens/1',
      data: { changes: { config: { shared_secret: '********' } } },
    });
    expect(change.time).toMatch(MILLISECONDS);
    expect(JSON.stringify(trail)).not.toContain('audited-secret');
    expect(trail.audit_events.every((entry: { resource_name: string }) => entry.resource_name.startsWith(fixture.destinationPath))).toBe(true);
    const firstPage = await admin.ok('GET', 'workspaces/acme/audit-events?page_size=2');
    expect(firstPage.audit_events).toHaveLength(2);
    expect(firstPage.next_page_token).not.toBe('');
  });

  it('the OpenAPI document lists the API, custom verbs with their colon', async () => {
    const document = await admin.withToken('').call('GET', 'openapi.json');
    expect(document.status).toBe(200);
    const paths = Object.keys(document.body.paths);
    expect(paths).toContain('/v1beta/workspaces/{workspace}/sources');
    expect(paths).toContain('/v1beta/workspaces/{workspace}/tracking-plans/{plan}/source-connections:batchCreateConnections');
  });

  it('the write-key projection follows sources live: resolvable after create, gone after delete', async () => {
    const readModel = instance.app.get(ConfigReadModel);
    const changes: string[] = [];
    const stop = readModel.onChange((change) => changes.push(change.kind));
    const source = await admin.ok('POST', 'workspaces/acme/sources', { source: { name: 'workspaces/acme/sources/live', catalog_name: 'node' } });
    expect(readModel.sourceByWriteKey(source.write_keys[0])).toMatchObject({ workspaceSlug: 'acme', sourceSlug: 'live' });
    await admin.ok('DELETE', source.name);
    expect(readModel.sourceByWriteKey(source.write_keys[0])).toBeUndefined();
    expect(changes).toEqual(['source-upserted', 'source-deleted']);
    stop();
  });
});
