// Function instances over HTTP (docs/functions.md §1, §2): destination functions
// as destinations, insert functions on destinations, source functions as sources, and the Public
// API's insert-function instances; each only ever naming a function of its own workspace, with
// sensitive settings encrypted at rest and masked in every response and audit entry.
import { generateKsuid } from '@tributary/auth';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { FUNCTION_ID_PREFIXES, functionAggregate, type FunctionKind } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { eventStoreOf, readAllEvents, RFC3339_MILLIS } from './support/config-api-e2e.kit';

const MASK = '********';
const PUBLIC_MASK = '\u2022'.repeat(10);
const SECRET = 'k-123-very-secret';

const SETTINGS = [
  { name: 'apiKey', label: 'API key', type: 'string', description: '', required: true, sensitive: true },
  { name: 'endpoint', label: 'Endpoint', type: 'string', description: '', required: true, sensitive: false },
  { name: 'tags', label: 'Tags', type: 'array', description: '', required: false, sensitive: false },
];

const CODE: Record<FunctionKind, string> = {
  SOURCE: 'async function onRequest(request, settings) {}',
  DESTINATION: 'async function onTrack(event, settings) {}',
  INSERT_DESTINATION: 'async function onTrack(event, settings) { return event; }',
};

describe('function instances', () => {
  let instance: TributaryTestInstance;
  let acme: WorkspaceAccess;
  let other: WorkspaceAccess;
  let api: ConfigApiClient;
  const fns: Record<string, string> = {};

  /**
   * A function made through the function aggregate's own command, as the function routes make one
   * (those routes check code in the sandbox; these tests are about instances).
   */
  async function seedFunction(workspaceSlug: string, kind: FunctionKind, displayName: string) {
    const readModel = instance.app.get(ConfigReadModel);
    const workspace = readModel.workspace(workspaceSlug)!;
    const now = new Date().toISOString();
    const functionId = `${FUNCTION_ID_PREFIXES[kind]}${generateKsuid()}`;
    await instance.app.get(ConfigCommandHandler).handle(
      functionAggregate,
      { workspaceSlug, functionId },
      {
        type: 'CreateFunction',
        workspaceSlug,
        workspaceId: workspace.id,
        functionId,
        kind,
        draft: { displayName, description: '', logoUrl: '', code: CODE[kind], settings: SETTINGS },
        workspaceExists: true,
        functionsInWorkspace: readModel.listFunctions(workspaceSlug).length,
        limits: { maxCodeBytes: 128 * 1024, maxFunctions: 100 },
        now,
        actor: 'system',
      },
      { actor: 'system', requestId: 'seed', time: now },
    );
    return functionId;
  }

  async function publicApi(method: string, path: string, body?: unknown, token = acme.writerToken) {
    const response = await fetch(`${instance.baseUrl}/public-api${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  /** Every audit entry of the workspace whose resource name starts with `prefix`, as JSON text. */
  async function auditText(prefix: string): Promise<string> {
    const trail = await api.ok(
      'GET',
      `workspaces/acme/audit-events?resource_name_prefix=${encodeURIComponent(prefix)}`,
    );
    expect(trail.audit_events.length).toBeGreaterThan(0);
    return JSON.stringify(trail);
  }

  beforeAll(async () => {
    instance = await startTributary();
    const admin = new ConfigApiClient(instance);
    acme = await createWorkspaceWithTokens(admin, 'acme');
    other = await createWorkspaceWithTokens(admin, 'other');
    api = acme.writer;
    fns.destination = await seedFunction('acme', 'DESTINATION', 'Order relay');
    fns.insert = await seedFunction('acme', 'INSERT_DESTINATION', 'Renamer');
    fns.source = await seedFunction('acme', 'SOURCE', 'Shop webhook');
    fns.otherDestination = await seedFunction('other', 'DESTINATION', 'Not yours');
    fns.otherInsert = await seedFunction('other', 'INSERT_DESTINATION', 'Not yours either');
    fns.otherSource = await seedFunction('other', 'SOURCE', 'Nor this');
    await api.ok('POST', 'workspaces/acme/sources', {
      source: { name: 'workspaces/acme/sources/web', catalog_name: 'catalog/sources/javascript' },
    });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  describe('destination functions', () => {
    const destinations = 'workspaces/acme/sources/web/destinations';

    it('creates a destination whose slug is the function id, settings from the function, secrets masked', async () => {
      const created = await api.ok('POST', destinations, {
        destination: {
          name: `${destinations}/${fns.destination}`,
          enabled: true,
          connection_mode: 'CLOUD',
          config: [
            { name: 'apiKey', value: SECRET },
            { name: 'endpoint', value: 'https://orders.example/in' },
          ],
        },
      });
      const name = `${destinations}/${fns.destination}`;
      expect(created).toEqual({
        name,
        parent: 'workspaces/acme/sources/web',
        display_name: 'Order relay',
        catalog_name: `catalog/destinations/${fns.destination}`,
        enabled: true,
        connection_mode: 'CLOUD',
        config: [
          { name: `${name}/config/apiKey`, display_name: 'API key', value: MASK, type: 'password' },
          {
            name: `${name}/config/endpoint`,
            display_name: 'Endpoint',
            value: 'https://orders.example/in',
            type: 'string',
          },
          { name: `${name}/config/tags`, display_name: 'Tags', value: [], type: 'list' },
        ],
        create_time: expect.stringMatching(RFC3339_MILLIS),
        update_time: expect.stringMatching(RFC3339_MILLIS),
      });
      expect(await api.ok('GET', name)).toEqual(created);
      const listed = await api.ok('GET', destinations);
      expect(listed.destinations).toContainEqual(created);
    });

    it('keeps the secret encrypted in the event store and masked in the audit trail', async () => {
      const stored = JSON.stringify(await readAllEvents(eventStoreOf(instance)), (_, value: unknown) =>
        typeof value === 'bigint' ? String(value) : value,
      );
      expect(stored).toContain(fns.destination);
      expect(stored).not.toContain(SECRET);
      const trail = await auditText(`${destinations}/${fns.destination}`);
      expect(trail).toContain('DestinationCreated');
      expect(trail).toContain(MASK);
      expect(trail).not.toContain(SECRET);
      expect(trail).not.toContain('enc:v1:');
    });

    it('updates the config as other destinations: the mask keeps the secret, a new target needs it again', async () => {
      const name = `${destinations}/${fns.destination}`;
      const kept = await api.ok('PATCH', name, {
        destination: {
          config: [
            { name: 'apiKey', value: MASK },
            { name: 'tags', value: ['a', 'b'] },
          ],
        },
        update_mask: { paths: ['destination.config'] },
      });
      expect(kept.config.map((entry: any) => entry.value)).toEqual([
        MASK,
        'https://orders.example/in',
        ['a', 'b'],
      ]);

      expectConfigApiError(
        await api.patch(name, {
          destination: { config: [{ name: 'endpoint', value: 'https://attacker.example/in' }] },
          update_mask: { paths: ['destination.config'] },
        }),
        400,
        3,
      );
      const moved = await api.ok('PATCH', name, {
        destination: {
          config: [
            { name: 'endpoint', value: 'https://orders2.example/in' },
            { name: 'apiKey', value: 'k-456' },
          ],
        },
        update_mask: { paths: ['destination.config'] },
      });
      expect(moved.config[1].value).toBe('https://orders2.example/in');

      for (const config of [
        [{ name: 'apiKey', value: '' }],
        [{ name: 'nope', value: 'x' }],
        [{ name: 'tags', value: [1] }],
      ]) {
        expectConfigApiError(
          await api.patch(name, { destination: { config }, update_mask: { paths: ['destination.config'] } }),
          400,
          3,
        );
      }
      const disabled = await api.ok('PATCH', name, {
        destination: { enabled: false },
        update_mask: { paths: ['destination.enabled'] },
      });
      expect(disabled.enabled).toBe(false);
    });

    it('takes filters, and answers metrics and dead letters like any destination', async () => {
      const name = `${destinations}/${fns.destination}`;
      const filter = await api.ok('POST', `${name}/filters`, {
        filter: {
          title: 'only tracks',
          if: "type != 'track'",
          actions: [{ type: 'drop_event' }],
          enabled: true,
        },
      });
      expect(filter.name).toMatch(new RegExp(`^${name}/filters/`));
      expect((await api.ok('GET', `${name}/filters`)).filters).toHaveLength(1);
      await api.ok('GET', `${name}/metrics`);
      await api.ok('GET', `${name}/dead-letters`);
    });

    it('refuses a missing required setting even on a disabled instance, 400 code 3', async () => {
      const response = await api.post('workspaces/acme/sources/web/destinations', {
        destination: {
          name: `${destinations}/${fns.destination}-2`,
          enabled: false,
          config: [{ name: 'apiKey', value: SECRET }],
        },
      });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toContain('endpoint');
    });

    it('makes a second instance named {function id}-2', async () => {
      const second = await api.ok('POST', destinations, {
        destination: {
          name: `${destinations}/${fns.destination}-2`,
          config: [
            { name: 'apiKey', value: SECRET },
            { name: 'endpoint', value: 'https://orders.example/other' },
          ],
        },
      });
      expect(second).toMatchObject({
        display_name: 'Order relay',
        catalog_name: `catalog/destinations/${fns.destination}`,
        enabled: false,
      });
      await api.ok('DELETE', `${destinations}/${fns.destination}-2`);
    });

    it("refuses another kind of function, another workspace's, and an unknown id, 400 code 3", async () => {
      for (const id of [fns.insert, fns.source, fns.otherDestination, 'dfn_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ']) {
        const response = await api.post(destinations, {
          destination: {
            name: `${destinations}/${id}`,
            config: [
              { name: 'apiKey', value: SECRET },
              { name: 'endpoint', value: 'https://orders.example/in' },
            ],
          },
        });
        expectConfigApiError(response, 400, 3);
        expect(response.body.error).toContain(id);
      }
    });

    it('is never listed in the global catalog', async () => {
      const catalog = await api.ok('GET', 'catalog/destinations?page_size=1000');
      expect(JSON.stringify(catalog)).not.toContain('dfn_');
      expect((await api.get(`catalog/destinations/${fns.destination}`)).status).toBe(404);
    });
  });

  describe('insert functions', () => {
    const destination = 'workspaces/acme/sources/web/destinations/webhooks';
    const insertFunctions = `${destination}/insert-functions`;

    beforeAll(async () => {
      await api.ok('POST', 'workspaces/acme/sources/web/destinations', {
        destination: {
          name: destination,
          enabled: true,
          config: [{ name: 'url', value: 'https://hooks.example/in' }],
        },
      });
    });

    it('adds one to a destination, flat, its secret masked', async () => {
      const created = await api.ok('POST', insertFunctions, {
        insert_function: {
          function_id: fns.insert,
          enabled: true,
          config: [
            { name: 'apiKey', value: SECRET },
            { name: 'endpoint', value: 'https://rename.example' },
          ],
        },
      });
      const name = `${insertFunctions}/${fns.insert}`;
      expect(created).toEqual({
        name,
        function_id: fns.insert,
        enabled: true,
        config: [
          { name: `${name}/config/apiKey`, display_name: 'API key', value: MASK, type: 'password' },
          {
            name: `${name}/config/endpoint`,
            display_name: 'Endpoint',
            value: 'https://rename.example',
            type: 'string',
          },
          { name: `${name}/config/tags`, display_name: 'Tags', value: [], type: 'list' },
        ],
        create_time: expect.stringMatching(RFC3339_MILLIS),
        update_time: expect.stringMatching(RFC3339_MILLIS),
      });
      expect(await api.ok('GET', name)).toEqual(created);
      expect(await api.ok('GET', insertFunctions)).toEqual({
        insert_functions: [created],
        next_page_token: '',
      });
      expect(await acme.reader.ok('GET', name)).toEqual(created);

      const trail = await auditText(name);
      expect(trail).toContain('DestinationInsertFunctionCreated');
      expect(trail).not.toContain(SECRET);
      const stored = JSON.stringify(await readAllEvents(eventStoreOf(instance)), (_, value: unknown) =>
        typeof value === 'bigint' ? String(value) : value,
      );
      expect(stored).not.toContain(SECRET);
    });

    it('refuses a second insert function on the destination, 409 code 6', async () => {
      expectConfigApiError(
        await api.post(insertFunctions, {
          insert_function: {
            function_id: fns.insert,
            config: [
              { name: 'apiKey', value: SECRET },
              { name: 'endpoint', value: 'https://rename.example' },
            ],
          },
        }),
        409,
        6,
      );
    });

    it('updates enabled and config by mask; the mask sent back keeps the secret', async () => {
      const name = `${insertFunctions}/${fns.insert}`;
      const updated = await api.ok('PATCH', name, {
        insert_function: {
          enabled: false,
          config: [
            { name: 'apiKey', value: MASK },
            { name: 'tags', value: ['x'] },
          ],
        },
        update_mask: { paths: ['insert_function.enabled', 'insert_function.config'] },
      });
      expect(updated.enabled).toBe(false);
      expect(updated.config.map((entry: any) => entry.value)).toEqual([
        MASK,
        'https://rename.example',
        ['x'],
      ]);
      expectConfigApiError(
        await api.patch(name, {
          insert_function: { config: [{ name: 'apiKey', value: '' }] },
          update_mask: { paths: ['insert_function.config'] },
        }),
        400,
        3,
      );
      expectConfigApiError(
        await api.patch(name, {
          insert_function: {},
          update_mask: { paths: ['insert_function.function_id'] },
        }),
        400,
        3,
      );
      expectConfigApiError(await acme.reader.patch(name, { insert_function: { enabled: true } }), 403, 7);
    });

    it("refuses another kind of function, another workspace's, a missing id or required setting, 400 code 3", async () => {
      await api.ok('POST', 'workspaces/acme/sources/web/destinations', {
        destination: {
          name: 'workspaces/acme/sources/web/destinations/webhooks-2',
          catalog_name: 'catalog/destinations/webhooks',
        },
      });
      const onSecond = 'workspaces/acme/sources/web/destinations/webhooks-2/insert-functions';
      const config = [
        { name: 'apiKey', value: SECRET },
        { name: 'endpoint', value: 'https://rename.example' },
      ];
      for (const body of [
        { function_id: fns.destination, config },
        { function_id: fns.otherInsert, config },
        { function_id: 'ifnd_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ', config },
        { config },
        { function_id: fns.insert, config: [{ name: 'apiKey', value: SECRET }] },
        { function_id: fns.insert, config: [...config, { name: 'region', value: 'eu' }] },
      ]) {
        expectConfigApiError(await api.post(onSecond, { insert_function: body }), 400, 3);
      }
      expectConfigApiError(await api.post(onSecond, { insert_function: 'nope' }), 400, 3);
      expect((await api.ok('GET', onSecond)).insert_functions).toEqual([]);
    });

    it("answers 404 for another id, another workspace's destination, and after delete", async () => {
      expectConfigApiError(await api.get(`${insertFunctions}/ifnd_2Lr0vWv9yW7rJ8dYkS1Fq5c0XbQ`), 404, 5);
      expectConfigApiError(await other.writer.get(`${insertFunctions}/${fns.insert}`), 404, 5);
      expect(await api.ok('DELETE', `${insertFunctions}/${fns.insert}`)).toEqual({});
      expectConfigApiError(await api.get(`${insertFunctions}/${fns.insert}`), 404, 5);
      expectConfigApiError(await api.delete(`${insertFunctions}/${fns.insert}`), 404, 5);
      // Gone, so another may be added.
      await api.ok('POST', insertFunctions, {
        insert_function: {
          function_id: fns.insert,
          config: [
            { name: 'apiKey', value: SECRET },
            { name: 'endpoint', value: 'https://rename.example' },
          ],
        },
      });
    });
  });

  describe('source functions', () => {
    const sources = 'workspaces/acme/sources';

    it('creates a source running the function, with write keys, a masked config and its webhook URL', async () => {
      const created = await api.ok('POST', sources, {
        source: {
          name: `${sources}/shop`,
          catalog_name: `catalog/sources/${fns.source}`,
          function_config: [
            { name: 'apiKey', value: SECRET },
            { name: 'endpoint', value: 'https://shop.example' },
          ],
        },
      });
      expect(created).toMatchObject({
        name: `${sources}/shop`,
        catalog_name: `catalog/sources/${fns.source}`,
        write_keys: [expect.any(String)],
        function_config: [
          { name: 'apiKey', display_name: 'API key', value: MASK, type: 'password' },
          { name: 'endpoint', display_name: 'Endpoint', value: 'https://shop.example', type: 'string' },
          { name: 'tags', display_name: 'Tags', value: [], type: 'list' },
        ],
      });
      const writeKey = created.write_keys[0];
      expect(created.webhook_url).toBe(
        `${instance.baseUrl}/v1/fn?b=${Buffer.from(writeKey).toString('base64url')}`,
      );
      expect(await api.ok('GET', `${sources}/shop`)).toEqual(created);

      const trail = await auditText(`${sources}/shop`);
      expect(trail).toContain('SourceCreated');
      expect(trail).not.toContain(SECRET);
      // A plain source shows neither.
      const web = await api.ok('GET', `${sources}/web`);
      expect(web).not.toHaveProperty('function_config');
      expect(web).not.toHaveProperty('webhook_url');
    });

    it('updates function_config by mask, the mask keeping the secret', async () => {
      const updated = await api.ok('PATCH', `${sources}/shop`, {
        source: {
          function_config: [
            { name: 'apiKey', value: MASK },
            { name: 'tags', value: ['vip'] },
          ],
        },
        update_mask: { paths: ['source.function_config'] },
      });
      expect(updated.function_config.map((entry: any) => entry.value)).toEqual([
        MASK,
        'https://shop.example',
        ['vip'],
      ]);
      expectConfigApiError(
        await api.patch(`${sources}/shop`, {
          source: { function_config: [{ name: 'endpoint', value: '' }] },
          update_mask: { paths: ['source.function_config'] },
        }),
        400,
        3,
      );
      expectConfigApiError(
        await api.patch(`${sources}/web`, {
          source: { function_config: [{ name: 'tags', value: ['x'] }] },
          update_mask: { paths: ['source.function_config'] },
        }),
        400,
        3,
      );
    });

    it("refuses another kind of function, another workspace's, a missing setting, 400 code 3", async () => {
      const config = [
        { name: 'apiKey', value: SECRET },
        { name: 'endpoint', value: 'https://shop.example' },
      ];
      for (const [catalogName, functionConfig] of [
        [fns.destination, config],
        [fns.otherSource, config],
        [fns.source, [config[0]]],
        ['javascript', config],
      ] as const) {
        expectConfigApiError(
          await api.post(sources, {
            source: {
              name: `${sources}/refused`,
              catalog_name: `catalog/sources/${catalogName}`,
              function_config: functionConfig,
            },
          }),
          400,
          3,
        );
      }
      expectConfigApiError(await api.get(`${sources}/refused`), 404, 5);
    });
  });

  describe('Public API insert-function instances', () => {
    let integrationId: string;

    beforeAll(async () => {
      await api.ok('POST', 'workspaces/acme/sources', {
        source: { name: 'workspaces/acme/sources/app', catalog_name: 'catalog/sources/javascript' },
      });
      await api.ok('POST', 'workspaces/acme/sources/app/destinations', {
        destination: {
          name: 'workspaces/acme/sources/app/destinations/webhooks',
          config: [{ name: 'url', value: 'https://hooks.example/app' }],
        },
      });
      const listed = await publicApi('GET', '/destinations');
      integrationId = listed.body.data.destinations.find(
        (destination: any) =>
          destination.sourceId !== undefined &&
          destination.metadata.id === 'webhooks' &&
          destination.settings.url === 'https://hooks.example/app',
      ).id;
    });

    it("creates, lists, reads, updates and deletes an instance, in the SDK's shapes", async () => {
      const created = await publicApi('POST', '/insert-function-instances', {
        functionId: fns.insert,
        integrationId,
        name: 'Rename on app',
        enabled: true,
        settings: { apiKey: SECRET, endpoint: 'https://rename.example' },
      });
      expect(created.status).toBe(200);
      const made = created.body.data.insertFunctionInstance;
      expect(made).toEqual({
        id: expect.any(String),
        name: 'Rename on app',
        integrationId,
        classId: fns.insert,
        enabled: true,
        settings: { endpoint: 'https://rename.example', tags: [] },
        encryptedSettings: { apiKey: PUBLIC_MASK },
        createdAt: expect.stringMatching(RFC3339_MILLIS),
        updatedAt: expect.stringMatching(RFC3339_MILLIS),
      });
      // The same instance on v1beta.
      const v1beta = await api.ok(
        'GET',
        `workspaces/acme/sources/app/destinations/webhooks/insert-functions/${fns.insert}`,
      );
      expect(v1beta).toMatchObject({ function_id: fns.insert, enabled: true });

      const listed = await publicApi(
        'GET',
        `/insert-function-instances?functionId=${fns.insert}&pagination[count]=10`,
      );
      expect(listed.status).toBe(200);
      expect(listed.body.data.instances).toContainEqual(made);
      expect(listed.body.data.instances.every((item: any) => item.classId === fns.insert)).toBe(true);
      expect(listed.body.data.pagination).toMatchObject({ current: expect.any(String) });

      expect(
        (await publicApi('GET', `/insert-function-instances/${made.id}`)).body.data.insertFunctionInstance,
      ).toEqual(made);

      const patched = await publicApi('PATCH', `/insert-function-instances/${made.id}`, {
        enabled: false,
        settings: { apiKey: PUBLIC_MASK, tags: ['t'] },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.data.insertFunctionInstance).toMatchObject({
        enabled: false,
        name: 'Rename on app',
        settings: { endpoint: 'https://rename.example', tags: ['t'] },
        encryptedSettings: { apiKey: PUBLIC_MASK },
      });
      expect(
        JSON.stringify(await readAllEvents(eventStoreOf(instance)), (_, value: unknown) =>
          typeof value === 'bigint' ? String(value) : value,
        ),
      ).not.toContain(SECRET);

      // Another workspace's token does not find it.
      expect(
        (await publicApi('GET', `/insert-function-instances/${made.id}`, undefined, other.writerToken))
          .status,
      ).toBe(404);

      const deleted = await publicApi('DELETE', `/insert-function-instances/${made.id}`);
      expect(deleted).toEqual({ status: 200, body: { data: { status: 'SUCCESS' } } });
      expect((await publicApi('GET', `/insert-function-instances/${made.id}`)).status).toBe(404);
    });

    it("refuses another kind of function, another workspace's, a missing setting and an unknown destination, 422", async () => {
      const settings = { apiKey: SECRET, endpoint: 'https://rename.example' };
      for (const body of [
        { functionId: fns.destination, integrationId, name: 'x', settings },
        { functionId: fns.otherInsert, integrationId, name: 'x', settings },
        { functionId: fns.insert, integrationId, name: 'x', settings: { apiKey: SECRET } },
        { functionId: fns.insert, integrationId, name: 'x', settings: { ...settings, region: 'eu' } },
        { functionId: fns.insert, integrationId: 'bm9wZQ', name: 'x', settings },
        { integrationId, name: 'x', settings },
      ]) {
        const response = await publicApi('POST', '/insert-function-instances', body);
        expect({ status: response.status, type: response.body.errors?.[0]?.type }).toEqual({
          status: 422,
          type: 'ValidationFailure',
        });
      }
      expect((await publicApi('GET', '/insert-function-instances/bm9wZQ')).status).toBe(404);
    });

    it('shows a destination function among the destinations, its secret masked with the bullets', async () => {
      const listed = await publicApi('GET', '/destinations');
      const relay = listed.body.data.destinations.find(
        (destination: any) => destination.metadata.id === fns.destination,
      );
      expect(relay).toMatchObject({
        name: 'Order relay',
        settings: { apiKey: PUBLIC_MASK, endpoint: 'https://orders2.example/in', tags: ['a', 'b'] },
      });
      expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    });

    it('answers 409 for a second instance on one destination', async () => {
      const body = {
        functionId: fns.insert,
        integrationId,
        name: 'first',
        settings: { apiKey: SECRET, endpoint: 'https://rename.example' },
      };
      expect((await publicApi('POST', '/insert-function-instances', body)).status).toBe(200);
      expect((await publicApi('POST', '/insert-function-instances', body)).status).toBe(409);
    });
  });
});
