// Each resource of the Config API over HTTP: its shape (docs/config-api.md §3), ids (§1.3), timestamps (§1.4),
// pagination (§1.5), and the audit trail and OpenAPI document Tributary adds.
import { findCatalogDestination } from '@tributary/destinations';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  basicAuthorization,
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
} from '../../../test/support/config-api.client';
import {
  ACCESS_TOKEN,
  KSUID,
  RFC3339_MILLIS,
  RFC3339_SECONDS,
  WRITE_KEY,
} from './support/config-api-e2e.kit';

const ADMIN_EMAIL = 'Admin@Example.com';
const ADMIN_PASSWORD = 'correct horse battery staple';

/** Follows `next_page_token` to the end and returns every page. */
async function allPages(client: ConfigApiClient, path: string, listKey: string, pageSize: number) {
  const pages: any[][] = [];
  let pageToken = '';
  for (let guard = 0; guard < 100; guard++) {
    const separator = path.includes('?') ? '&' : '?';
    const query = `page_size=${pageSize}${pageToken ? `&page_token=${encodeURIComponent(pageToken)}` : ''}`;
    const body = expectJsonSuccess(await client.get(`${path}${separator}${query}`));
    pages.push(body[listKey]);
    expect(typeof body.next_page_token).toBe('string');
    if (body.next_page_token === '') return pages;
    pageToken = body.next_page_token;
  }
  throw new Error(`${path}: pagination did not end`);
}

describe('Config API resources', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  const basic = { authorization: basicAuthorization(ADMIN_EMAIL, ADMIN_PASSWORD) };

  beforeAll(async () => {
    instance = await startTributary({
      environment: { TRIBUTARY_ADMIN_EMAIL: ADMIN_EMAIL, TRIBUTARY_ADMIN_PASSWORD: ADMIN_PASSWORD },
    });
    admin = new ConfigApiClient(instance);
    for (const slug of ['alpha', 'beta']) {
      await admin.ok('POST', 'workspaces', {
        workspace: { name: `workspaces/${slug}`, display_name: slug.toUpperCase() },
      });
    }
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  describe('access tokens (docs/config-api.md §2.1)', () => {
    it('creates a token with Basic email:password and returns its plaintext once', async () => {
      const before = Math.floor(Date.now() / 1000) * 1000;
      const created = expectJsonSuccess(
        await admin.request('POST', 'access-tokens', {
          token: null,
          headers: basic,
          json: {
            access_token: { description: 'ci', scopes: 'workspace', workspace_names: ['workspaces/alpha'] },
          },
        }),
      );
      expect(created).toEqual({
        name: expect.stringMatching(/^access-tokens\/\d+$/),
        description: 'ci',
        scopes: 'workspace',
        workspace_names: ['workspaces/alpha'],
        create_time: expect.stringMatching(RFC3339_SECONDS),
        token: expect.stringMatching(ACCESS_TOKEN),
      });
      expect(Date.parse(created.create_time)).toBeGreaterThanOrEqual(before);

      const listed = expectJsonSuccess(
        await admin.request('GET', 'access-tokens', { token: null, headers: basic }),
      );
      expect(listed.next_page_token).toBe('');
      const entry = listed.access_tokens.find((token: any) => token.name === created.name);
      expect(entry).toEqual({ ...created, token: undefined });
      expect(Object.keys(entry)).not.toContain('token');
      expect(JSON.stringify(listed)).not.toContain(created.token);
      // The same list with an instance-admin bearer token.
      expect(expectJsonSuccess(await admin.get('access-tokens')).access_tokens).toEqual(listed.access_tokens);
    });

    it('takes the e-mail address in any case', async () => {
      const lowerCase = { authorization: basicAuthorization(ADMIN_EMAIL.toLowerCase(), ADMIN_PASSWORD) };
      expectJsonSuccess(await admin.request('GET', 'access-tokens', { token: null, headers: lowerCase }));
      const wrongPassword = { authorization: basicAuthorization(ADMIN_EMAIL, `${ADMIN_PASSWORD}!`) };
      expectConfigApiError(
        await admin.request('GET', 'access-tokens', { token: null, headers: wrongPassword }),
        401,
        16,
      );
    });

    it('creates a token with the admin bearer token, limited to the listed workspaces', async () => {
      const created = await admin.ok('POST', 'access-tokens', {
        access_token: {
          description: 'beta only',
          scopes: 'workspace:read',
          workspace_names: ['workspaces/beta'],
        },
      });
      expect(created).toMatchObject({ scopes: 'workspace:read', workspace_names: ['workspaces/beta'] });
      expect(created.token).toMatch(ACCESS_TOKEN);
      const betaReader = admin.as(created.token);
      const workspaces = expectJsonSuccess(await betaReader.get('workspaces'));
      expect(workspaces.workspaces.map((workspace: any) => workspace.name)).toEqual(['workspaces/beta']);
      expectJsonSuccess(await betaReader.get('workspaces/beta/sources'));
      expectConfigApiError(await betaReader.get('workspaces/alpha'), 404, 5);
      expectConfigApiError(await betaReader.get('workspaces/alpha/sources'), 404, 5);

      expect(await admin.ok('DELETE', created.name)).toEqual({});
      expectConfigApiError(await betaReader.get('workspaces'), 401, 16);
      const listed = expectJsonSuccess(await admin.get('access-tokens'));
      expect(listed.access_tokens.map((token: any) => token.name)).not.toContain(created.name);
    });

    it('deletes with Basic credentials', async () => {
      const created = await admin.ok('POST', 'access-tokens', {
        access_token: { scopes: 'workspace', workspace_names: ['workspaces/alpha'] },
      });
      const deleted = await admin.request('DELETE', created.name, { token: null, headers: basic });
      expect(deleted.status).toBe(200);
      expect(deleted.text).toBe('{}');
      expectConfigApiError(await admin.as(created.token).get('workspaces'), 401, 16);
    });

    it('answers a token for an unknown workspace with 404 and a bad scope with 400', async () => {
      expectConfigApiError(
        await admin.post('access-tokens', {
          access_token: { scopes: 'workspace', workspace_names: ['workspaces/nope'] },
        }),
        404,
        5,
      );
      expectConfigApiError(
        await admin.post('access-tokens', {
          access_token: { scopes: 'admin', workspace_names: ['workspaces/alpha'] },
        }),
        400,
        3,
      );
    });
  });

  describe('workspaces (docs/config-api.md §2.2)', () => {
    it('creates, gets and lists workspaces', async () => {
      const created = await admin.ok('POST', 'workspaces', {
        workspace: {
          name: 'workspaces/gamma',
          display_name: 'Gamma Space',
          id: 'ignored',
          create_time: '0001-01-01T00:00:00Z',
        },
      });
      expect(created).toEqual({
        name: 'workspaces/gamma',
        display_name: 'Gamma Space',
        id: expect.stringMatching(/^[a-z0-9]{10}$/),
        region: 'us',
        oauth_required: false,
        create_time: expect.stringMatching(RFC3339_MILLIS),
      });
      expect(await admin.ok('GET', 'workspaces/gamma')).toEqual(created);
      const listed = expectJsonSuccess(await admin.get('workspaces'));
      expect(listed.next_page_token).toBe('');
      expect(listed.workspaces.map((workspace: any) => workspace.name)).toEqual([
        'workspaces/alpha',
        'workspaces/beta',
        'workspaces/gamma',
      ]);
    });

    it('lets only an instance administrator create one', async () => {
      const { writer } = await createWorkspaceWithTokens(admin, 'delta');
      expectConfigApiError(
        await writer.post('workspaces', { workspace: { name: 'workspaces/epsilon' } }),
        403,
        7,
      );
      const own = expectJsonSuccess(await writer.get('workspaces'));
      expect(own.workspaces.map((workspace: any) => workspace.name)).toEqual(['workspaces/delta']);
      expect(expectJsonSuccess(await writer.get('workspaces/delta')).display_name).toBe('E2E delta');
    });
  });

  describe('catalog (docs/config-api.md §2.3)', () => {
    it('lists and gets catalog sources', async () => {
      const listed = expectJsonSuccess(await admin.get('catalog/sources'));
      expect(listed.next_page_token).toBe('');
      expect(listed.sources.map((source: any) => source.name)).toContain('catalog/sources/javascript');
      expect(expectJsonSuccess(await admin.get('catalog/sources/javascript'))).toEqual({
        name: 'catalog/sources/javascript',
        display_name: expect.any(String),
        description: expect.any(String),
        categories: expect.any(Array),
      });
    });

    it('lists and gets catalog destinations in the shape Go clients decode', async () => {
      const listed = expectJsonSuccess(await admin.get('catalog/destinations'));
      expect(listed.destinations.map((destination: any) => destination.name)).toEqual(
        expect.arrayContaining([
          'catalog/destinations/actions-google-analytics-4',
          'catalog/destinations/actions-mixpanel',
        ]),
      );
      const analytics = expectJsonSuccess(await admin.get('catalog/destinations/actions-amplitude'));
      expect(analytics).toMatchObject({
        name: 'catalog/destinations/actions-amplitude',
        display_name: 'Actions Amplitude',
        type: 'STREAMING',
        status: expect.stringMatching(/^(PUBLIC|PRIVATE)$/),
        logos: { logo: expect.any(String), mark: expect.any(String) },
        components: [{ type: 'CLOUD' }],
        categories: {
          primary: expect.any(String),
          secondary: expect.any(String),
          additional: expect.any(Array),
        },
      });
      expect(analytics.settings.find((setting: any) => setting.name === 'apiKey')).toMatchObject({
        display_name: 'API Key',
        type: 'password',
        required: true,
        deprecated: false,
        string_validators: { regexp: expect.any(String) },
        map_validators: expect.any(Object),
        settings: [],
      });
      // Tributary's addition for a subscription editor: the actions and presets, on Actions entries only.
      expect(analytics.actions.partner_actions).toEqual(
        expect.arrayContaining([{ name: 'identifyUser', display_name: 'Identify User', batch: false }]),
      );
      expect(analytics.actions.presets).toContainEqual(
        expect.objectContaining({
          name: 'Identify Calls',
          subscribe: 'type = "identify"',
          partnerAction: 'identifyUser',
        }),
      );
      expect(analytics.actions.has_test_authentication).toBe(true);
      expect(expectJsonSuccess(await admin.get('catalog/destinations/webhooks'))).not.toHaveProperty(
        'actions',
      );
    });
  });

  describe('sources, destinations and filters (docs/config-api.md §2.4–§2.6)', () => {
    const source = 'workspaces/alpha/sources/web';

    it('creates a source with a generated write key and millisecond timestamps', async () => {
      const created = await admin.ok('POST', 'workspaces/alpha/sources', {
        source: { name: source, catalog_name: 'catalog/sources/javascript' },
      });
      expect(created).toMatchObject({
        name: source,
        parent: 'workspaces/alpha',
        catalog_name: 'catalog/sources/javascript',
        write_keys: [expect.stringMatching(WRITE_KEY)],
        library_config: {
          metrics_enabled: false,
          retry_queue: false,
          cross_domain_id_enabled: false,
          api_host: '',
        },
        create_time: expect.stringMatching(RFC3339_MILLIS),
      });
      expect(await admin.ok('GET', source)).toEqual(created);
      // A bare slug for the name and a bare catalog slug are accepted too.
      const bare = await admin.ok('POST', 'workspaces/alpha/sources', {
        source: { name: 'server', catalog_name: 'node' },
      });
      expect(bare).toMatchObject({
        name: 'workspaces/alpha/sources/server',
        catalog_name: 'catalog/sources/node',
      });
      expect(bare.write_keys[0]).not.toBe(created.write_keys[0]);
    });

    it('creates a destination disabled by default, listing every catalog setting with its default', async () => {
      const destination = `${source}/destinations/webhooks`;
      const created = await admin.ok('POST', `${source}/destinations`, {
        destination: {
          name: destination,
          connection_mode: 'CLOUD',
          config: [
            {
              name: `${destination}/config/url`,
              value: 'https://hooks.example.com/T1',
              type: 'string',
            },
          ],
        },
      });
      expect(created).toMatchObject({
        name: destination,
        parent: source,
        display_name: 'Webhooks',
        enabled: false,
        connection_mode: 'CLOUD',
        create_time: expect.stringMatching(RFC3339_MILLIS),
        update_time: expect.stringMatching(RFC3339_MILLIS),
      });
      const catalogSettings = findCatalogDestination('webhooks')!.settings;
      expect(created.config).toEqual(
        catalogSettings.map((setting) => ({
          name: `${destination}/config/${setting.key}`,
          display_name: setting.displayName,
          type: setting.type,
          value: setting.key === 'url' ? 'https://hooks.example.com/T1' : setting.defaultValue,
        })),
      );
      const listed = expectJsonSuccess(await admin.get(`${source}/destinations`));
      expect(listed).toEqual({ destinations: [created], next_page_token: '' });
    });

    it('creates filters with df_ ids, returns them flat, and echoes the block-list spelling received', async () => {
      const destination = `${source}/destinations/webhooks`;
      const blacklist = await admin.ok('POST', `${destination}/filters`, {
        filter: {
          title: 'No emails',
          if: 'all',
          enabled: true,
          actions: [{ type: 'blacklist_fields', fields: { traits: { fields: ['email'] } } }],
        },
      });
      expect(blacklist).toEqual({
        name: expect.stringMatching(new RegExp(`^${destination}/filters/df_[0-9A-Za-z]{27}$`)),
        title: 'No emails',
        description: '',
        if: 'all',
        enabled: true,
        actions: [{ type: 'blacklist_fields', fields: { traits: { fields: ['email'] } } }],
      });
      const blocklist = await admin.ok('POST', `${destination}/filters`, {
        filter: {
          title: 'Sample',
          if: "event = 'Clicked'",
          actions: [
            { type: 'sample_event', percent: 0.6, path: 'userId' },
            { type: 'blocklist_fields', fields: { properties: { fields: ['ip'] } } },
          ],
        },
      });
      expect(blocklist.actions[1].type).toBe('blocklist_fields');
      expect(blocklist.enabled).toBe(false);
      expect(blocklist.name).not.toBe(blacklist.name);
      const listed = expectJsonSuccess(await admin.get(`${destination}/filters`));
      expect(listed).toEqual({ filters: [blacklist, blocklist], next_page_token: '' });
      expect(await admin.ok('GET', blacklist.name)).toEqual(blacklist);
    });
  });

  describe('tracking plans and source connections (docs/config-api.md §2.7)', () => {
    const rules = {
      events: [
        {
          name: 'Order Completed',
          description: 'A purchase',
          version: 2,
          rules: {
            $schema: 'http://json-schema.org/draft-04/schema#',
            id: 'order-completed',
            type: 'object',
            labels: { team: 'checkout' },
            properties: {
              context: {},
              traits: {},
              properties: {
                type: 'object',
                properties: {
                  total: { type: ['number', 'null'], description: 'in cents' },
                  currency: { type: 'string', enum: ['EUR', 'USD', null], pattern: '^[A-Z]{3}$' },
                  placed_at: { type: 'string', format: 'date-time' },
                },
                required: ['total'],
              },
            },
            required: ['properties'],
          },
        },
      ],
      identify_traits: null,
      group_traits: [],
      global: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { context: { type: 'object', required: ['app'] }, traits: {}, properties: {} },
      },
    };
    let plan: any;

    beforeAll(async () => {
      for (const slug of ['ios', 'android', 'web-app']) {
        await admin.ok('POST', 'workspaces/beta/sources', {
          source: { name: `workspaces/beta/sources/${slug}`, catalog_name: 'catalog/sources/javascript' },
        });
      }
    });

    it('creates a plan with an rs_ id, whole-second timestamps, and the rules stored verbatim', async () => {
      plan = await admin.ok('POST', 'workspaces/beta/tracking-plans', {
        tracking_plan: { display_name: 'Checkout', rules },
      });
      const planId = plan.name.split('/').pop();
      expect(plan.name.split('/')).toEqual(['workspaces', 'beta', 'tracking-plans', planId]);
      expect(planId).toMatch(/^rs_/);
      expect(planId.slice(3)).toMatch(KSUID);
      expect(plan.create_time).toMatch(RFC3339_SECONDS);
      expect(plan.update_time).toMatch(RFC3339_SECONDS);
      expect(plan.display_name).toBe('Checkout');
      // `identify_traits: null` means empty; everything else comes back as sent.
      expect(plan.rules).toEqual({ ...rules, identify_traits: [] });
      expect(await admin.ok('GET', plan.name)).toEqual(plan);
      const listed = expectJsonSuccess(await admin.get('workspaces/beta/tracking-plans'));
      expect(listed).toEqual({ tracking_plans: [plan], next_page_token: '' });
    });

    it('connects sources: flat create, :batchCreateConnections, list and delete', async () => {
      const connections = `${plan.name}/source-connections`;
      const planId = plan.name.split('/').pop();
      const single = await admin.ok('POST', connections, { source_name: 'workspaces/beta/sources/ios' });
      expect(single).toEqual({ source_name: 'workspaces/beta/sources/ios', tracking_plan_id: planId });

      const batch = await admin.ok('POST', `${connections}:batchCreateConnections`, {
        source_names: ['workspaces/beta/sources/android', 'workspaces/beta/sources/web-app'],
      });
      expect(batch).toEqual({
        connections: [
          { source_name: 'workspaces/beta/sources/android', tracking_plan_id: planId },
          { source_name: 'workspaces/beta/sources/web-app', tracking_plan_id: planId },
        ],
      });
      // The colon percent-encoded, as some HTTP libraries send it.
      const encoded = await admin.post(`${connections}%3AbatchCreateConnections`, {
        source_names: ['workspaces/beta/sources/ios'],
      });
      expect(expectJsonSuccess(encoded).connections).toEqual([single]);

      const listed = expectJsonSuccess(await admin.get(connections));
      expect(listed.connections).toEqual(expect.arrayContaining([single, ...batch.connections]));
      expect(listed.connections).toHaveLength(3);

      const deleted = await admin.delete(`${connections}/android`);
      expect(deleted.status).toBe(200);
      expect(deleted.text).toBe('{}');
      expect(expectJsonSuccess(await admin.get(connections)).connections).toHaveLength(2);

      expectConfigApiError(
        await admin.post(connections, { source_name: 'workspaces/beta/sources/ghost' }),
        404,
        5,
      );
      const other = await admin.ok('POST', 'workspaces/beta/tracking-plans', {
        tracking_plan: { display_name: 'Other' },
      });
      expectConfigApiError(
        await admin.post(`${other.name}/source-connections`, { source_name: 'workspaces/beta/sources/ios' }),
        409,
        6,
      );
    });
  });

  describe('pagination (docs/config-api.md §1.5)', () => {
    it('covers every item once, in pages ending with next_page_token ""', async () => {
      for (let index = 0; index < 7; index++) {
        await admin.ok('POST', 'workspaces/gamma/sources', {
          source: { name: `workspaces/gamma/sources/s${index}`, catalog_name: 'catalog/sources/node' },
        });
      }
      const everything = expectJsonSuccess(await admin.get('workspaces/gamma/sources'));
      expect(everything.sources).toHaveLength(7);
      expect(everything.next_page_token).toBe('');

      for (const pageSize of [1, 3, 7, 8]) {
        const pages = await allPages(admin, 'workspaces/gamma/sources', 'sources', pageSize);
        expect(pages.every((page) => page.length <= pageSize)).toBe(true);
        expect(pages.length).toBe(Math.max(1, Math.ceil(7 / pageSize)));
        const names = pages.flat().map((source: any) => source.name);
        expect(names).toEqual(everything.sources.map((source: any) => source.name));
        expect(new Set(names).size).toBe(7);
      }

      const catalogPages = await allPages(admin, 'catalog/destinations', 'destinations', 2);
      // More entries than the default page of 100: one page as large as the catalog.
      const all = expectJsonSuccess(await admin.get('catalog/destinations?page_size=1000')).destinations;
      expect(all.length).toBeGreaterThan(100);
      expect(catalogPages.flat()).toEqual(all);
    });

    it('answers an empty collection with an empty list and ""', async () => {
      const { writer } = await createWorkspaceWithTokens(admin, 'empty');
      expect(expectJsonSuccess(await writer.get('workspaces/empty/sources'))).toEqual({
        sources: [],
        next_page_token: '',
      });
      expect(expectJsonSuccess(await writer.get('workspaces/empty/tracking-plans'))).toEqual({
        tracking_plans: [],
        next_page_token: '',
      });
    });
  });

  describe('audit trail', () => {
    it('records each change with resource, actor, time and the request id, newest first', async () => {
      const { writer, writerToken } = await createWorkspaceWithTokens(admin, 'audited');
      const tokenName = (await admin.ok('GET', 'access-tokens')).access_tokens.find(
        (token: any) => token.workspace_names[0] === 'workspaces/audited' && token.scopes === 'workspace',
      ).name;
      expect(writerToken).toMatch(ACCESS_TOKEN);
      const requestId = `e2e-${Date.now()}-create-source`;
      const before = Date.now();
      const sourceCreate = await writer.request('POST', 'workspaces/audited/sources', {
        json: {
          source: { name: 'workspaces/audited/sources/js', catalog_name: 'catalog/sources/javascript' },
        },
        headers: { 'x-request-id': requestId },
      });
      expectJsonSuccess(sourceCreate);
      expect(sourceCreate.headers.get('x-request-id')).toBe(requestId);
      // Without the header, the server names the request itself and says which id it gave.
      const unnamed = await writer.request('PATCH', 'workspaces/audited/sources/js/schema-config', {
        json: { schema_config: { forwarding_violations_to: '' } },
      });
      const generatedId = unnamed.headers.get('x-request-id');
      expect(generatedId).toMatch(/^[0-9a-f-]{36}$/);
      await writer.ok('POST', 'workspaces/audited/sources/js/destinations', {
        destination: {
          name: 'workspaces/audited/sources/js/destinations/actions-mixpanel',
          config: [
            { name: 'projectToken', value: 'mp' },
            { name: 'apiSecret', value: 'mixpanel-api-secret-value' },
          ],
        },
      });
      await writer.ok('PATCH', 'workspaces/audited/sources/js/schema-config', {
        schema_config: {},
        update_mask: { paths: ['schema_config.allow_unplanned_track_events'] },
      });

      const trail = expectJsonSuccess(await writer.get('workspaces/audited/audit-events'));
      expect(trail.next_page_token).toBe('');
      const types = trail.audit_events.map((entry: any) => entry.type);
      expect(types).toEqual([
        'SchemaConfigUpdated',
        'DestinationCreated',
        'SchemaConfigUpdated',
        'SourceCreated',
        'AccessTokenCreated',
        'AccessTokenCreated',
        'WorkspaceCreated',
      ]);
      const sourceCreated = trail.audit_events.find((entry: any) => entry.request_id === requestId);
      expect(sourceCreated).toMatchObject({
        name: expect.stringMatching(/^workspaces\/audited\/audit-events\/\d+$/),
        type: 'SourceCreated',
        resource_name: 'workspaces/audited/sources/js',
        actor: tokenName,
        time: expect.stringMatching(RFC3339_MILLIS),
      });
      expect(Date.parse(sourceCreated.time)).toBeGreaterThanOrEqual(before - 1000);
      expect(trail.audit_events.find((entry: any) => entry.type === 'WorkspaceCreated').actor).toMatch(
        /^access-tokens\/\d+$/,
      );

      const text = JSON.stringify(trail);
      expect(text).not.toContain('mixpanel-api-secret-value');
      expect(text).not.toContain('tokenHash');
      const destinationCreated = trail.audit_events.find((entry: any) => entry.type === 'DestinationCreated');
      expect(destinationCreated.data.config.apiSecret).toBe('********');

      const narrowed = expectJsonSuccess(
        await writer.get(
          'workspaces/audited/audit-events?resource_name_prefix=workspaces/audited/sources/js',
        ),
      );
      expect(narrowed.audit_events.map((entry: any) => entry.resource_name)).toEqual([
        'workspaces/audited/sources/js/schema-config',
        'workspaces/audited/sources/js/destinations/actions-mixpanel',
        'workspaces/audited/sources/js/schema-config',
        'workspaces/audited/sources/js',
      ]);
      expect(narrowed.audit_events[2].request_id).toBe(generatedId);

      const pages = await allPages(writer, 'workspaces/audited/audit-events', 'audit_events', 4);
      expect(pages.map((page) => page.length)).toEqual([4, 3]);
      expect(pages.flat()).toEqual(trail.audit_events);

      // The trail of one workspace shows nothing of another.
      const alpha = expectJsonSuccess(await admin.get('workspaces/alpha/audit-events'));
      expect(
        alpha.audit_events.every((entry: any) => !entry.resource_name.startsWith('workspaces/audited')),
      ).toBe(true);
    });
  });

  describe('OpenAPI document', () => {
    it('serves /v1beta/openapi.json without a token, listing the main paths', async () => {
      const response = await admin.get('openapi.json', { token: null });
      const document = expectJsonSuccess(response);
      expect(document.openapi).toMatch(/^3\./);
      const paths = Object.keys(document.paths);
      expect(paths).toEqual(
        expect.arrayContaining([
          '/v1beta/workspaces',
          '/v1beta/workspaces/{workspace}',
          '/v1beta/access-tokens',
          '/v1beta/catalog/destinations',
          '/v1beta/workspaces/{workspace}/sources',
          '/v1beta/workspaces/{workspace}/sources/{source}/destinations/{destination}',
          '/v1beta/workspaces/{workspace}/sources/{source}/destinations/{destination}/filters',
          '/v1beta/workspaces/{workspace}/tracking-plans/{plan}',
          '/v1beta/workspaces/{workspace}/tracking-plans/{plan}/source-connections:batchCreateConnections',
          '/v1beta/workspaces/{workspace}/audit-events',
        ]),
      );
      expect(paths.some((path) => path.includes('/@'))).toBe(false);
      expect(Object.keys(document.paths['/v1beta/workspaces/{workspace}/tracking-plans/{plan}'])).toEqual(
        expect.arrayContaining(['get', 'put', 'patch', 'delete']),
      );
    });
  });
});
