// Drives the real segment-typescript-api@0.6.10, unchanged, against Tributary's Config API.
// The library calls https://platform.segmentapis.com/v1beta through cross-fetch (node-fetch 2);
// the preload, imported first, sends those calls to the local instance.
// See CLIENT-CALLS.md beside this file for what the library sends and reads.
import '../support/segment-api-redirect.preload';
import * as segment from 'segment-typescript-api/cjs/config_api';
import type {
  DestinationConfig,
  FilterUpdate,
  RuleMetadata,
} from 'segment-typescript-api/cjs/config_request';
import { startTributary, TributaryTestInstance } from '../support/tributary-test-instance';
import { ConfigApiClient, createWorkspaceWithTokens, WorkspaceAccess } from '../support/config-api.client';

const RFC3339_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const RFC3339_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const WRITE_KEY = /^[A-Za-z0-9]{32}$/;

/** Awaits a call that must fail; the library rejects with the raw response text. */
async function rejectionOf(call: Promise<unknown>): Promise<{ error: string; code: number }> {
  let rejection: unknown;
  await call.then(
    (value) => {
      throw new Error(`expected the call to fail, it returned ${JSON.stringify(value)}`);
    },
    (error: unknown) => {
      rejection = error;
    },
  );
  return parseRejection(rejection);
}

/** segment-typescript-api rejects with the raw response text; this reads the error body in it. */
function parseRejection(rejection: unknown): { error: string; code: number } {
  if (typeof rejection !== 'string') {
    throw new Error(`expected the raw response text, got ${String(rejection)}`);
  }
  return JSON.parse(rejection);
}

type JsonSchema = RuleMetadata['rules'];

function eventRules(properties: NonNullable<JsonSchema['properties']>, required: string[]): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: {
      context: {},
      traits: {},
      properties: { type: 'object', properties, required },
    },
    required: ['properties'],
  };
}

describe('segment-typescript-api 0.6.10 against the Config API', () => {
  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;
  let ws: string;
  let token: string;
  let consoleError: jest.SpyInstance;

  beforeAll(async () => {
    instance = await startTributary();
    process.env.TRIBUTARY_CONFIG_API_PORT = String(instance.port);
    access = await createWorkspaceWithTokens(
      new ConfigApiClient(instance),
      'sdk-compat',
      'Compat sdk-compat',
    );
    ws = access.slug;
    token = access.writerToken;
  });

  afterAll(async () => {
    delete process.env.TRIBUTARY_CONFIG_API_PORT;
    await instance?.stop();
  });

  beforeEach(() => {
    // The library prints three console.error lines for every failed call before rejecting.
    consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    consoleError.mockRestore();
  });

  describe('workspace', () => {
    it('getWorkspace returns the workspace unwrapped', async () => {
      const workspace = await segment.getWorkspace(token, ws);
      expect(workspace.name).toBe('workspaces/sdk-compat');
      expect(workspace.display_name).toBe('Compat sdk-compat');
      expect(workspace.id).toMatch(/^[a-z0-9]{10}$/);
      expect(String(workspace.create_time)).toMatch(RFC3339_MILLIS);
    });

    it('rejects an unknown token with the 401 error body', async () => {
      const error = await rejectionOf(segment.getWorkspace('no.such-token', ws));
      expect(error.code).toBe(16);
      expect(typeof error.error).toBe('string');
    });
  });

  describe('sources', () => {
    it('creates from bare slugs, lists, gets and deletes', async () => {
      const created = await segment.createSource(token, ws, { name: 'web', catalog_name: 'javascript' });
      expect(created.name).toBe('workspaces/sdk-compat/sources/web');
      expect(created.parent).toBe('workspaces/sdk-compat');
      expect(created.catalog_name).toBe('catalog/sources/javascript');
      expect(created.write_keys).toHaveLength(1);
      expect(created.write_keys[0]).toMatch(WRITE_KEY);
      expect(created.library_config).toEqual(expect.any(Object));
      expect(String(created.create_time)).toMatch(RFC3339_MILLIS);

      // Full names pass through the library unchanged.
      const second = await segment.createSource(token, ws, {
        name: 'workspaces/sdk-compat/sources/backend',
        catalog_name: 'catalog/sources/javascript',
      });
      expect(second.name).toBe('workspaces/sdk-compat/sources/backend');
      expect(second.write_keys[0]).not.toBe(created.write_keys[0]);

      const listed = await segment.listSources(token, ws);
      expect(listed.sources.map((source) => source.name)).toEqual(
        expect.arrayContaining([
          'workspaces/sdk-compat/sources/web',
          'workspaces/sdk-compat/sources/backend',
        ]),
      );
      // The library loops while next_page_token is truthy: the last page must carry "".
      expect(listed.next_page_token).toBe('');

      // page_size arrives as `?&page_size=1`; listAllSources follows next_page_token to the end.
      const firstPage = await segment.listSources(token, ws, { page_size: 1 });
      expect(firstPage.sources).toHaveLength(1);
      expect(firstPage.next_page_token).toEqual(expect.any(String));
      expect(firstPage.next_page_token).not.toBe('');
      const all = await segment.listAllSources(token, ws);
      expect(all.sources.map((source) => source.name).sort()).toEqual(
        listed.sources.map((source) => source.name).sort(),
      );

      const fetched = await segment.getSource(token, ws, 'web');
      expect(fetched.name).toBe(created.name);
      expect(fetched.write_keys).toEqual(created.write_keys);

      expect(await segment.deleteSource(token, ws, 'workspaces/sdk-compat/sources/backend')).toEqual({});
      const missing = await rejectionOf(segment.getSource(token, ws, 'backend'));
      expect(missing.code).toBe(5);
      expect((await segment.listSources(token, ws)).sources.map((source) => source.name)).not.toContain(
        'workspaces/sdk-compat/sources/backend',
      );
    });

    it('refuses a duplicate source with code 6', async () => {
      await segment.createSource(token, ws, { name: 'duplicate', catalog_name: 'javascript' });
      const error = await rejectionOf(
        segment.createSource(token, ws, { name: 'duplicate', catalog_name: 'javascript' }),
      );
      expect(error.code).toBe(6);
    });

    it('refuses a write with a read-only token: insufficient scope, code 7', async () => {
      const error = await rejectionOf(
        segment.createSource(access.readerToken, ws, { name: 'read-only', catalog_name: 'javascript' }),
      );
      expect(error).toEqual(expect.objectContaining({ error: 'insufficient scope', code: 7 }));
      // Reads still work with the same token.
      expect((await segment.getWorkspace(access.readerToken, ws)).name).toBe('workspaces/sdk-compat');
    });
  });

  describe('destinations', () => {
    const source = 'dest-source';

    beforeAll(async () => {
      await segment.createSource(token, ws, { name: source, catalog_name: 'javascript' });
    });

    it('creates with config (bare names expanded by the library), lists, gets, updates and deletes', async () => {
      const request: DestinationConfig = {
        destination: {
          name: 'actions-google-analytics-4',
          connection_mode: 'CLOUD',
          enabled: false,
          config: [
            { name: 'measurementId', type: 'string', value: 'G-970334309' },
            { name: 'apiSecret', type: 'password', value: 'ga4-api-secret' },
          ],
        },
      };
      // The typings promise {destination: …}; the server answers with the Destination itself.
      const created = (await segment.createDestination(token, ws, source, request)) as unknown as Record<
        string,
        any
      >;
      const name = 'workspaces/sdk-compat/sources/dest-source/destinations/actions-google-analytics-4';
      expect(created.name).toBe(name);
      expect(created.parent).toBe('workspaces/sdk-compat/sources/dest-source');
      expect(created.enabled).toBe(false);
      expect(created.connection_mode).toBe('CLOUD');
      expect(String(created.create_time)).toMatch(RFC3339_MILLIS);
      const measurementId = created.config.find(
        (entry: { name: string }) => entry.name === `${name}/config/measurementId`,
      );
      expect(measurementId).toEqual(expect.objectContaining({ value: 'G-970334309', type: 'string' }));
      const configNames = created.config.map((entry: { name: string }) => entry.name).sort();

      const listed = (await segment.listDestinations(token, ws, source)) as unknown as Record<string, any>;
      expect(listed.destinations.map((d: { name: string }) => d.name)).toEqual([name]);
      expect(listed.next_page_token).toBe('');
      const all = (await segment.listAllDestinations(token, ws, source)) as unknown as Record<string, any>;
      expect(all.destinations).toHaveLength(1);

      const fetched = (await segment.getDestination(token, ws, source, name)) as unknown as Record<
        string,
        any
      >;
      expect(fetched.name).toBe(name);
      expect(fetched.enabled).toBe(false);

      // updateDestination sends the typed DestinationConfig as is: no update_mask, the
      // destination's bare slug as `name`, bare config keys. Config merges by entry name.
      const updated = (await segment.updateDestination(token, ws, source, 'actions-google-analytics-4', {
        destination: {
          name: 'actions-google-analytics-4',
          connection_mode: 'CLOUD',
          enabled: true,
          config: [{ name: 'measurementId', type: 'string', value: 'UA-2' }],
        },
      })) as unknown as Record<string, any>;
      expect(updated.name).toBe(name);
      expect(updated.enabled).toBe(true);
      expect(
        updated.config.find((entry: { name: string }) => entry.name === `${name}/config/measurementId`).value,
      ).toBe('UA-2');
      expect(updated.config.map((entry: { name: string }) => entry.name).sort()).toEqual(configNames);

      // With an explicit mask, a masked field that is absent from the body takes its zero value.
      const disabled = (await segment.updateDestination(token, ws, source, 'actions-google-analytics-4', {
        destination: {},
        update_mask: { paths: ['destination.enabled'] },
      } as unknown as DestinationConfig)) as unknown as Record<string, any>;
      expect(disabled.enabled).toBe(false);
      expect(
        disabled.config.find((entry: { name: string }) => entry.name === `${name}/config/measurementId`)
          .value,
      ).toBe('UA-2');

      const reread = (await segment.getDestination(
        token,
        ws,
        source,
        'actions-google-analytics-4',
      )) as unknown as Record<string, any>;
      expect(reread.enabled).toBe(false);
      expect(
        reread.config.find((entry: { name: string }) => entry.name === `${name}/config/measurementId`).value,
      ).toBe('UA-2');

      expect(await segment.deleteDestination(token, ws, source, 'actions-google-analytics-4')).toEqual({});
      const gone = await rejectionOf(segment.getDestination(token, ws, source, 'actions-google-analytics-4'));
      expect(gone.code).toBe(5);
      expect(((await segment.listDestinations(token, ws, source)) as any).destinations).toEqual([]);
    });

    it('a destination created without `enabled` is disabled', async () => {
      await segment.createSource(token, ws, { name: 'default-enabled', catalog_name: 'javascript' });
      const created = (await segment.createDestination(token, ws, 'default-enabled', {
        destination: {
          name: 'actions-google-analytics-4',
          connection_mode: 'CLOUD',
          config: [{ name: 'measurementId', type: 'string', value: 'UA-3' }],
        },
      } as unknown as DestinationConfig)) as unknown as Record<string, any>;
      expect(created.enabled).toBe(false);
    });

    it('reports a missing destination with code 5', async () => {
      const error = await rejectionOf(segment.getDestination(token, ws, source, 'no-such-destination'));
      expect(error.code).toBe(5);
    });
  });

  describe('tracking plans', () => {
    const orderCompleted = {
      name: 'Order Completed',
      description: 'A customer paid for an order.',
      rules: eventRules({ order_id: { type: 'string' }, total: { type: 'number' } }, ['order_id']),
    };
    const signedUp = {
      name: 'Signed Up',
      description: 'A visitor created an account.',
      version: 2,
      rules: eventRules({ plan: { enum: ['free', 'pro', null] } }, []),
    };
    const globalRules: JsonSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        context: { type: 'object', properties: { app: { type: 'object' } }, required: [] },
        traits: {},
        properties: {},
      },
    };

    it('creates, gets, lists, updates (PUT with a mask) and deletes', async () => {
      const created = await segment.createTrackingPlan(token, ws, {
        display_name: 'SDK Compat Plan',
        rules: { events: [orderCompleted, signedUp], global: globalRules },
      });
      expect(created.name).toMatch(/^workspaces\/sdk-compat\/tracking-plans\/rs_[A-Za-z0-9]{27}$/);
      expect(created.display_name).toBe('SDK Compat Plan');
      const rules = created.rules as Record<string, any>;
      expect(rules.events).toHaveLength(2);
      const byName = Object.fromEntries(rules.events.map((e: { name: string }) => [e.name, e]));
      expect(byName['Order Completed'].rules).toEqual(orderCompleted.rules);
      expect(byName['Order Completed'].description).toBe(orderCompleted.description);
      // The library lets `version` be omitted; the server still stores an integer.
      expect(Number.isInteger(byName['Order Completed'].version)).toBe(true);
      expect(byName['Signed Up'].version).toBe(2);
      expect(byName['Signed Up'].rules).toEqual(signedUp.rules);
      expect(rules.global).toEqual(globalRules);
      expect(rules.identify_traits).toEqual([]);
      expect(rules.group_traits).toEqual([]);
      expect(String(created.create_time)).toMatch(RFC3339_SECONDS);
      expect(String(created.update_time)).toMatch(RFC3339_SECONDS);
      const id = created.name.split('/')[3];

      // Both the id and the full name work: the library keeps only the last path segment.
      expect((await segment.getTrackingPlan(token, ws, id)).name).toBe(created.name);
      const fetched = await segment.getTrackingPlan(token, ws, created.name);
      expect(fetched.rules).toEqual(created.rules);

      const listed = await segment.listTrackingPlans(token, ws);
      expect(listed.tracking_plans.map((plan) => plan.name)).toContain(created.name);
      expect(listed.next_page_token).toBe('');
      const listedPlan = listed.tracking_plans.find((plan) => plan.name === created.name);
      expect(listedPlan?.rules).toEqual(created.rules);
      expect(
        (await segment.listAllTrackingPlans(token, ws)).tracking_plans.map((plan) => plan.name),
      ).toContain(created.name);

      const renamedAndReplaced = await segment.updateTrackingPlan(token, ws, id, {
        tracking_plan: { display_name: 'SDK Compat Plan v2', rules: { events: [signedUp] } },
        update_mask: { paths: ['tracking_plan.display_name', 'tracking_plan.rules'] },
      });
      expect(renamedAndReplaced.name).toBe(created.name);
      expect(renamedAndReplaced.display_name).toBe('SDK Compat Plan v2');
      // `tracking_plan.rules` replaces the rules wholesale: the global rules are gone.
      expect((renamedAndReplaced.rules.events ?? []).map((e) => e.name)).toEqual(['Signed Up']);
      expect(renamedAndReplaced.rules.global).toBeUndefined();
      expect(new Date(renamedAndReplaced.update_time).getTime()).toBeGreaterThanOrEqual(
        new Date(created.create_time).getTime(),
      );

      // A field outside the mask is ignored even when the body carries it.
      const renamedOnly = await segment.updateTrackingPlan(token, ws, created.name, {
        tracking_plan: { display_name: 'SDK Compat Plan v3', rules: { events: [orderCompleted] } },
        update_mask: { paths: ['tracking_plan.display_name'] },
      });
      expect(renamedOnly.display_name).toBe('SDK Compat Plan v3');
      expect((renamedOnly.rules.events ?? []).map((e) => e.name)).toEqual(['Signed Up']);

      expect(await segment.deleteTrackingPlan(token, ws, id)).toEqual({});
      const gone = await rejectionOf(segment.getTrackingPlan(token, ws, id));
      expect(gone.code).toBe(5);
      expect(
        (await segment.listTrackingPlans(token, ws)).tracking_plans.map((plan) => plan.name),
      ).not.toContain(created.name);
    });
  });

  describe('tracking plan source connections', () => {
    it('connects one source, batch-connects more, lists and disconnects', async () => {
      for (const name of ['conn-web', 'conn-ios', 'conn-server']) {
        await segment.createSource(token, ws, { name, catalog_name: 'javascript' });
      }
      const plan = await segment.createTrackingPlan(token, ws, {
        display_name: 'Connections Plan',
        rules: { events: [] },
      });
      const id = plan.name.split('/')[3];

      // The typings promise {connection: …}; the docs and the server answer flat.
      const single = (await segment.createTrackingPlanSourceConnection(token, ws, id, 'conn-web')) as unknown;
      expect(single).toEqual({ source_name: 'workspaces/sdk-compat/sources/conn-web', tracking_plan_id: id });

      const batch = await segment.batchTrackingPlanSourceConnection(token, ws, id, [
        'conn-ios',
        'workspaces/sdk-compat/sources/conn-server',
      ]);
      expect(batch.connections).toEqual(
        expect.arrayContaining([
          { source_name: 'workspaces/sdk-compat/sources/conn-ios', tracking_plan_id: id },
          { source_name: 'workspaces/sdk-compat/sources/conn-server', tracking_plan_id: id },
        ]),
      );
      expect(batch.connections).toHaveLength(2);

      const listed = await segment.listTrackingPlanSourceConnections(token, ws, id);
      expect(listed.connections.map((c) => c.source_name).sort()).toEqual([
        'workspaces/sdk-compat/sources/conn-ios',
        'workspaces/sdk-compat/sources/conn-server',
        'workspaces/sdk-compat/sources/conn-web',
      ]);
      expect(listed.connections.every((c) => c.tracking_plan_id === id)).toBe(true);
      const all = await segment.listAllTrackingPlanSourceConnectionss(token, ws, id);
      expect(all.connections).toHaveLength(3);

      // Deletes must answer exactly {} (a Go client fails on anything else).
      expect(await segment.deleteTrackingPlanSourceConnection(token, ws, id, 'conn-web')).toEqual({});
      expect(
        await segment.deleteTrackingPlanSourceConnection(
          token,
          ws,
          plan.name,
          'workspaces/sdk-compat/sources/conn-ios',
        ),
      ).toEqual({});
      const after = await segment.listTrackingPlanSourceConnections(token, ws, id);
      expect(after.connections.map((c) => c.source_name)).toEqual([
        'workspaces/sdk-compat/sources/conn-server',
      ]);
    });

    it('reports a connection to an unknown tracking plan with code 5', async () => {
      const error = await rejectionOf(
        segment.createTrackingPlanSourceConnection(
          token,
          ws,
          'rs_000000000000000000000000000',
          'conn-server',
        ),
      );
      expect(error.code).toBe(5);
    });
  });

  describe('destination filters', () => {
    const source = 'filter-source';
    const destination = 'actions-google-analytics-4';
    const destinationName = `workspaces/sdk-compat/sources/${source}/destinations/${destination}`;

    beforeAll(async () => {
      await segment.createSource(token, ws, { name: source, catalog_name: 'javascript' });
      await segment.createDestination(token, ws, source, {
        destination: {
          name: destination,
          connection_mode: 'CLOUD',
          enabled: true,
          config: [
            { name: 'measurementId', type: 'string', value: 'UA-4' },
            { name: 'apiSecret', type: 'password', value: 'ga4-api-secret' },
          ],
        },
      });
    });

    it('creates, lists, gets, updates with bare mask paths and deletes', async () => {
      const created = await segment.createFilter(token, ws, source, destination, {
        title: 'Drop identifies',
        if: "type = 'identify'",
        actions: [{ type: 'drop_event' }],
        enabled: true,
      });
      // Filter create answers with the filter itself, named by the server.
      expect(created.name).toMatch(
        /^workspaces\/sdk-compat\/sources\/filter-source\/destinations\/actions-google-analytics-4\/filters\/df_[A-Za-z0-9]{27}$/,
      );
      expect(created).toEqual(
        expect.objectContaining({
          title: 'Drop identifies',
          if: "type = 'identify'",
          actions: [{ type: 'drop_event' }],
          enabled: true,
        }),
      );

      const sampled = await segment.createFilter(token, ws, source, destination, {
        title: 'Sample tracks',
        if: "type = 'track'",
        actions: [{ type: 'sample_event', percent: 0.25, path: 'userId' }],
        enabled: false,
      });
      expect(sampled.actions).toEqual([{ type: 'sample_event', percent: 0.25, path: 'userId' }]);
      expect(sampled.enabled).toBe(false);

      const listed = await segment.listFilters(token, ws, source, destination);
      expect(listed.filters.map((filter) => filter.name).sort()).toEqual([created.name, sampled.name].sort());
      expect(listed.next_page_token).toBe('');
      expect((await segment.listAllFilters(token, ws, source, destination)).filters).toHaveLength(2);

      const fetched = await segment.getFilter(token, ws, source, destinationName, created.name);
      expect(fetched).toEqual(expect.objectContaining({ name: created.name, title: 'Drop identifies' }));

      const update: FilterUpdate = {
        filter: {
          title: 'Drop identifies and groups',
          if: "type = 'identify' or type = 'group'",
          actions: [{ type: 'sample_event', percent: 0.5 }],
          enabled: true,
        },
        // Filters use bare mask paths; `actions` is not in the mask, so it must not change.
        update_mask: { paths: ['title', 'if'] },
      };
      // The typings promise {filter: …}; the server answers flat.
      const updated = (await segment.updateFilter(
        token,
        ws,
        source,
        destination,
        created.name,
        update,
      )) as unknown as Record<string, any>;
      expect(updated.name).toBe(created.name);
      expect(updated.title).toBe('Drop identifies and groups');
      expect(updated.if).toBe("type = 'identify' or type = 'group'");
      expect(updated.actions).toEqual([{ type: 'drop_event' }]);

      // getFilter's conditional return type resolves to the list shape; the body is the filter.
      const reread = (await segment.getFilter(
        token,
        ws,
        source,
        destination,
        created.name,
      )) as unknown as Record<string, any>;
      expect(reread.title).toBe('Drop identifies and groups');

      // segment-typescript-api 0.6.10's deleteFilter sends GET, not DELETE (a bug in the
      // library): it only reads the filter back. The filter must survive it.
      const notDeleted = await segment.deleteFilter(token, ws, source, destination, created.name);
      expect(notDeleted).toEqual(expect.objectContaining({ name: created.name }));
      expect((await segment.listFilters(token, ws, source, destination)).filters).toHaveLength(2);

      // So the real delete goes over plain HTTP.
      const filterPath = created.name;
      const deleted = await new ConfigApiClient(instance, token).request('DELETE', filterPath);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({});
      const gone = await rejectionOf(segment.getFilter(token, ws, source, destination, created.name));
      expect(gone.code).toBe(5);
      expect((await segment.listFilters(token, ws, source, destination)).filters.map((f) => f.name)).toEqual([
        sampled.name,
      ]);
    });
  });
});
