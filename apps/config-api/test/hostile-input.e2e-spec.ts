// Hostile input to the Config API (issue 10, items 1 and 3): bodies nested too deep or too large are
// refused before they become events, filter field paths into prototypes are refused, and an event
// stored before those checks existed (appended straight to the store, as an old store holds it) neither
// stops the read model nor a later start.
import { streamNames } from '@tributary/config-domain';
import { SQLITE_EVENT_STORE_FILE } from '@tributary/event-store';
import { Database } from '@tributary/sqlite';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  type ConfigApiResponse,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
} from '../../../test/support/config-api.client';
import { eventStoreOf } from './support/config-api-e2e.kit';

const WS = 'hostile';
const SOURCE = `workspaces/${WS}/sources/js`;
const DESTINATION = `${SOURCE}/destinations/actions-google-analytics-4`;

function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return value;
}

/** A value nested deep enough to overflow any recursive walk over it (`JSON.stringify` included). */
const STACK_BREAKING_DEPTH = 5_000;

/** `{"a":{"a":…leaf…}}` as JSON text, built without a recursive serializer. */
function nestedJson(depth: number, leafJson = '1'): string {
  return '{"a":'.repeat(depth) + leafJson + '}'.repeat(depth);
}

const DEEP_PLACEHOLDER = '__deep_value__';

/** The body `build` makes around a placeholder, with the placeholder replaced by a nested value. */
function bodyText(build: (value: unknown) => unknown, depth: number): string {
  return JSON.stringify(build(DEEP_PLACEHOLDER)).replace(`"${DEEP_PLACEHOLDER}"`, nestedJson(depth));
}

describe('Config API against hostile input', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let writer: ConfigApiClient;

  beforeAll(async () => {
    instance = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '100000' } });
    admin = new ConfigApiClient(instance);
    ({ writer } = await createWorkspaceWithTokens(admin, WS));
    await writer.ok('POST', `workspaces/${WS}/sources`, {
      source: { name: SOURCE, catalog_name: 'catalog/sources/javascript' },
    });
    await writer.ok('POST', `${SOURCE}/destinations`, { destination: { name: DESTINATION } });
  }, 60_000);

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  describe('request bodies are capped before they are stored', () => {
    const writes: [string, 'POST' | 'PATCH', string, (value: unknown) => unknown][] = [
      [
        'a source',
        'POST',
        `workspaces/${WS}/sources`,
        (value) => ({
          source: { name: `${SOURCE}-2`, catalog_name: 'catalog/sources/javascript', labels: value },
        }),
      ],
      [
        'a destination setting',
        'PATCH',
        DESTINATION,
        (value) => ({
          destination: { config: [{ name: `${DESTINATION}/config/measurementId`, value }] },
          update_mask: { paths: ['destination.config'] },
        }),
      ],
      [
        'a filter',
        'POST',
        `${DESTINATION}/filters`,
        (value) => ({ filter: { title: 't', if: 'all', actions: [{ type: 'drop_event', extra: value }] } }),
      ],
      [
        'a tracking plan',
        'POST',
        `workspaces/${WS}/tracking-plans`,
        (value) => ({
          tracking_plan: {
            display_name: 'Plan',
            type: 'TRACKING_PLAN_TYPE_LIVE',
            rules: { events: [{ name: 'Deep', version: 1, rules: value }] },
          },
        }),
      ],
    ];

    it.each(writes)('refuses %s nested past 32 levels with 400, code 3', async (_, method, path, body) => {
      for (const depth of [40, STACK_BREAKING_DEPTH, 100_000]) {
        const response = await writer.request(method, path, {
          rawBody: bodyText(body, depth),
          headers: { 'content-type': 'application/json' },
        });
        expectConfigApiError(response, 400, 3);
        // 100,000 levels are 700 KB of text: past twice the body limit, refused before it is parsed.
        expect(response.body.error).toBe(
          depth === 100_000
            ? `the request body is ${Buffer.byteLength(bodyText(body, depth))} bytes; at most 524288 are read`
            : 'the request body is nested deeper than 32 levels of objects and arrays',
        );
      }
    });

    it.each(writes)('refuses %s over 256 KiB with 400, code 3', async (_, method, path, body) => {
      const response = await writer.request(method, path, { json: body({ big: 'x'.repeat(300_000) }) });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(
        /^the request body is \d+ bytes of JSON; a resource may have at most 262144$/,
      );
    });

    it('accepts a body nested exactly 32 levels deep', async () => {
      // The body object, `tracking_plan`, `rules`, `events` and the event: 5 levels around the schema.
      const response = await writer.request('POST', `workspaces/${WS}/tracking-plans`, {
        json: {
          tracking_plan: {
            display_name: 'Nested plan',
            type: 'TRACKING_PLAN_TYPE_LIVE',
            rules: { events: [{ name: 'Nested', version: 1, rules: nested(26, {}) }] },
          },
        },
      });
      if (response.status !== 200) throw new Error(JSON.stringify(response.body));
      const refused = await writer.request('POST', `workspaces/${WS}/tracking-plans`, {
        json: {
          tracking_plan: {
            display_name: 'Nested plan',
            type: 'TRACKING_PLAN_TYPE_LIVE',
            rules: { events: [{ name: 'Nested', version: 1, rules: nested(27, {}) }] },
          },
        },
      });
      expectConfigApiError(refused, 400, 3);
    });
  });

  it('does not parse a body longer than twice CONFIG_API_MAX_BODY_BYTES for anyone: 401 without a token, 400 with one', async () => {
    // Not even JSON: the answer shows whether it was parsed (it would be "invalid JSON body").
    const huge = `{"source":${'['.repeat(16)}${' '.repeat(600 * 1024)}`;
    const anonymous = await admin.request('POST', `workspaces/${WS}/sources`, { token: null, rawBody: huge });
    expectConfigApiError(anonymous, 401, 16);
    const refused = await writer.request('POST', `workspaces/${WS}/sources`, { rawBody: huge });
    expectConfigApiError(refused, 400, 3);
    expect(refused.body.error).toMatch(/at most 524288 are read/);
  });

  describe('filter field paths into prototypes', () => {
    const hostileActions = (segment: string) => [
      [{ type: 'blacklist_fields', fields: { properties: { fields: [`${segment}.hasOwnProperty`] } } }],
      [{ type: 'whitelist_fields', fields: { traits: { fields: [`address.${segment}`] } } }],
      [{ type: 'sample_event', percent: 0.5, path: `properties.${segment}` }],
    ];

    it.each(['__proto__', 'constructor', 'prototype'])(
      'refuses %s in every place a field path goes, on create and on update',
      async (segment) => {
        const created = await writer.ok('POST', `${DESTINATION}/filters`, {
          filter: { title: 'fine', if: 'all', enabled: false, actions: [{ type: 'drop_event' }] },
        });
        for (const actions of hostileActions(segment)) {
          const create = await writer.request('POST', `${DESTINATION}/filters`, {
            json: { filter: { title: 'hostile', if: 'all', enabled: true, actions } },
          });
          expectConfigApiError(create, 400, 3);
          expect(create.body.error).toMatch(
            new RegExp(`^filter\\.actions: .*"${segment}".*cannot be used as field names`),
          );
          const update = await writer.request('PATCH', created.name, {
            json: { filter: { actions }, update_mask: { paths: ['actions'] } },
          });
          expectConfigApiError(update, 400, 3);
        }
        const condition = await writer.request('POST', `${DESTINATION}/filters`, {
          json: {
            filter: {
              title: 'hostile',
              if: `properties.${segment}.x = 1`,
              actions: [{ type: 'drop_event' }],
            },
          },
        });
        expectConfigApiError(condition, 400, 3);
        expect(condition.body.error).toMatch(new RegExp(`^filter\\.if: .*"${segment}"`));
      },
    );

    it('refuses a condition nested past 64 levels with 400 rather than overflowing', async () => {
      const response = await writer.request('POST', `${DESTINATION}/filters`, {
        json: {
          filter: {
            title: 'deep',
            if: `${'('.repeat(4_000)}event = 'a'${')'.repeat(4_000)}`,
            actions: [{ type: 'drop_event' }],
          },
        },
      });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/nest deeper than 64 levels/);
    });
  });

  describe('an event stored before the caps existed', () => {
    it('is folded or skipped, never stops the read model, and a restart serves on such a store', async () => {
      const model = instance.app.get(ConfigReadModel);
      const runner = instance.app.get(ConfigProjectionRunner);
      const failuresBefore = runner.foldFailures.fold;
      const store = eventStoreOf(instance);
      const view = model
        .listAllDestinations()
        .find((candidate) => candidate.destination.destinationSlug === 'actions-google-analytics-4')!;
      const stream = streamNames.destination(view.destination.sourceId, 'actions-google-analytics-4');
      const identity = {
        workspaceSlug: WS,
        sourceSlug: 'js',
        sourceId: view.destination.sourceId,
        destinationSlug: 'actions-google-analytics-4',
      };
      const metadata = {
        actor: 'system',
        requestId: 'stored-before-the-caps',
        time: new Date().toISOString(),
      };
      const revision = (await store.readStream(stream)).length - 1;
      // Data nested far past any recursive walk's stack, written as an older version stored it (no
      // serializer here could produce it, so the row goes into the store's file as text).
      const deepData =
        `{${JSON.stringify(identity).slice(1, -1)},"updateTime":${JSON.stringify(metadata.time)},` +
        `"changes":{"config":{"measurementId":${nestedJson(STACK_BREAKING_DEPTH)},` +
        `"apiSecret":"enc:v1:not-really","nested":${nestedJson(STACK_BREAKING_DEPTH, '"enc:v1:deep"')}}}}`;
      const file = new Database(join(instance.dataDir, SQLITE_EVENT_STORE_FILE));
      try {
        file
          .prepare('INSERT INTO events (stream_name, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)')
          .run(stream, revision + 1, 'DestinationUpdated', deepData, JSON.stringify(metadata));
      } finally {
        file.close();
      }
      // Data no fold expects: `delivered` is not a list.
      await store.append(
        stream,
        [
          {
            type: 'DestinationDeadLettersRedriven',
            data: { ...identity, redriveId: 'rd_broken', delivered: 'everything' },
            metadata,
          },
        ],
        revision + 1,
      );

      // Later changes are still folded: read-your-writes after them works.
      const later = await writer.request('POST', `workspaces/${WS}/sources`, {
        json: {
          source: { name: `workspaces/${WS}/sources/after`, catalog_name: 'catalog/sources/javascript' },
        },
      });
      expectJsonSuccess(later);
      expectJsonSuccess(await writer.request('GET', `workspaces/${WS}/sources/after`));
      expect(runner.foldFailures.fold).toBe(failuresBefore + 1);

      // The audit trail shows the deep event, masked, and cut where it nests past 64 levels.
      const trail = expectJsonSuccess(
        await writer.request(
          'GET',
          `workspaces/${WS}/audit-events?resource_name_prefix=${DESTINATION}&page_size=5`,
        ),
      );
      const deep = trail.audit_events.find((entry: { type: string }) => entry.type === 'DestinationUpdated');
      expect(deep.data.changes.config.apiSecret).toBe('********');
      let level = 3; // data, changes, config
      let cut: unknown = deep.data.changes.config.nested;
      while (typeof cut === 'object' && cut !== null) {
        cut = (cut as { a: unknown }).a;
        level += 1;
      }
      expect({ cut, level }).toEqual({ cut: '[nested deeper than 64 levels]', level: 64 });
      const destination = expectJsonSuccess(await writer.request('GET', DESTINATION));
      expect(JSON.stringify(destination)).toContain('[nested deeper than 64 levels]');

      // A restart folds the same store from the start and serves.
      const { dataDir, adminToken } = instance;
      await instance.stop();
      instance = await startTributary({
        dataDir,
        adminToken,
        environment: { CONFIG_API_RATE_LIMIT: '100000' },
      });
      admin = new ConfigApiClient(instance);
      writer = new ConfigApiClient(instance, writer.token);
      const ready = await fetch(`${instance.baseUrl}/health/ready`);
      expect(ready.status).toBe(200);
      expectJsonSuccess(await writer.request('GET', `workspaces/${WS}/sources/after`));
      expectJsonSuccess(await writer.request('GET', DESTINATION));
      expect(instance.app.get(ConfigProjectionRunner).foldFailures.fold).toBe(1);
      const again = await writer.request('POST', `workspaces/${WS}/sources`, {
        json: {
          source: {
            name: `workspaces/${WS}/sources/after-restart`,
            catalog_name: 'catalog/sources/javascript',
          },
        },
      });
      expectJsonSuccess(again);
    }, 120_000);
  });
});

describe('workspace quotas (issue 10, item 6)', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let writer: ConfigApiClient;
  let other: ConfigApiClient;
  const publicPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .publicKey.export({ type: 'spki', format: 'pem' })
    .toString();

  beforeAll(async () => {
    instance = await startTributary({
      environment: {
        CONFIG_API_RATE_LIMIT: '100000',
        WORKSPACE_MAX_SOURCES: '2',
        WORKSPACE_MAX_DESTINATIONS: '2',
        DESTINATION_MAX_FILTERS: '2',
        WORKSPACE_MAX_TRACKING_PLANS: '1',
        WORKSPACE_MAX_OAUTH_APPLICATIONS: '1',
      },
    });
    admin = new ConfigApiClient(instance);
    ({ writer } = await createWorkspaceWithTokens(admin, 'quota'));
    ({ writer: other } = await createWorkspaceWithTokens(admin, 'quota-other'));
  }, 60_000);

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  function expectQuotaExceeded(response: ConfigApiResponse, message: RegExp) {
    expectConfigApiError(response, 429, 8);
    expect(response.body.error).toMatch(message);
    // Waiting does not help, unlike the rate limit's 429.
    expect(response.headers.get('retry-after')).toBeNull();
  }

  const createSource = (client: ConfigApiClient, workspace: string, slug: string) =>
    client.request('POST', `workspaces/${workspace}/sources`, {
      json: {
        source: {
          name: `workspaces/${workspace}/sources/${slug}`,
          catalog_name: 'catalog/sources/javascript',
        },
      },
    });

  it('counts sources per workspace, and a delete makes room again', async () => {
    expectJsonSuccess(await createSource(writer, 'quota', 'one'));
    expectJsonSuccess(await createSource(writer, 'quota', 'two'));
    expectQuotaExceeded(
      await createSource(writer, 'quota', 'three'),
      /^quota exceeded: workspace quota already has 2 sources, the most a workspace may have \(WORKSPACE_MAX_SOURCES\); delete one first$/,
    );
    // Nothing was stored for the refused create.
    expectConfigApiError(await writer.request('GET', 'workspaces/quota/sources/three'), 404, 5);
    // Another workspace has its own count.
    expectJsonSuccess(await createSource(other, 'quota-other', 'one'));

    expectJsonSuccess(await writer.request('DELETE', 'workspaces/quota/sources/two'));
    expectJsonSuccess(await createSource(writer, 'quota', 'three'));
  });

  it('counts destinations over all the sources of a workspace', async () => {
    const destination = (source: string, slug: string) =>
      writer.request('POST', `workspaces/quota/sources/${source}/destinations`, {
        json: { destination: { name: `workspaces/quota/sources/${source}/destinations/${slug}` } },
      });
    expectJsonSuccess(await destination('one', 'actions-google-analytics-4'));
    expectJsonSuccess(await destination('three', 'actions-google-analytics-4'));
    expectQuotaExceeded(
      await destination('three', 'actions-mixpanel'),
      /2 destinations.*WORKSPACE_MAX_DESTINATIONS/,
    );
  });

  it('counts filters per destination', async () => {
    const filters = 'workspaces/quota/sources/one/destinations/actions-google-analytics-4/filters';
    const filter = () =>
      writer.request('POST', filters, {
        json: { filter: { title: 'f', if: 'all', actions: [{ type: 'drop_event' }] } },
      });
    expectJsonSuccess(await filter());
    expectJsonSuccess(await filter());
    expectQuotaExceeded(
      await filter(),
      /^quota exceeded: destination actions-google-analytics-4 of source one already has 2 filters, the most a destination may have \(DESTINATION_MAX_FILTERS\)/,
    );
    // Another destination of the same workspace has its own count.
    expectJsonSuccess(
      await writer.request(
        'POST',
        'workspaces/quota/sources/three/destinations/actions-google-analytics-4/filters',
        {
          json: { filter: { title: 'f', if: 'all', actions: [{ type: 'drop_event' }] } },
        },
      ),
    );
  });

  it('counts tracking plans and OAuth applications per workspace', async () => {
    const plan = () =>
      writer.request('POST', 'workspaces/quota/tracking-plans', {
        json: { tracking_plan: { display_name: 'Plan', type: 'TRACKING_PLAN_TYPE_LIVE' } },
      });
    expectJsonSuccess(await plan());
    expectQuotaExceeded(await plan(), /1 tracking plans.*WORKSPACE_MAX_TRACKING_PLANS/);

    const application = () =>
      writer.request('POST', 'workspaces/quota/oauth-applications', {
        json: { oauth_application: { display_name: 'Jobs', public_keys: [{ key_id: 'k', pem: publicPem }] } },
      });
    expectJsonSuccess(await application());
    expectQuotaExceeded(await application(), /1 OAuth applications.*WORKSPACE_MAX_OAUTH_APPLICATIONS/);
  });
});

describe('Config API byte budgets', () => {
  let instance: TributaryTestInstance;
  let writer: ConfigApiClient;
  let other: ConfigApiClient;
  const destination = (ws: string) => `workspaces/${ws}/sources/web/destinations/actions-google-analytics-4`;
  const filter = (description: string) => ({
    filter: { title: 'f', description, if: 'all', actions: [{ type: 'drop_event' }] },
  });

  beforeAll(async () => {
    instance = await startTributary({
      environment: {
        CONFIG_API_RATE_LIMIT: '100000',
        WORKSPACE_MAX_CONFIG_BYTES: '65536',
        FILTER_MAX_BYTES: '16384',
      },
    });
    const admin = new ConfigApiClient(instance);
    ({ writer } = await createWorkspaceWithTokens(admin, 'bytes'));
    ({ writer: other } = await createWorkspaceWithTokens(admin, 'bytes-other'));
    for (const [client, ws] of [
      [writer, 'bytes'],
      [other, 'bytes-other'],
    ] as const) {
      await client.ok('POST', `workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/web`, catalog_name: 'catalog/sources/javascript' },
      });
      await client.ok('POST', `workspaces/${ws}/sources/web/destinations`, {
        destination: { name: destination(ws) },
      });
    }
  }, 60_000);

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('refuses a filter larger than FILTER_MAX_BYTES with 400, code 3', async () => {
    const response = await writer.request('POST', `${destination('bytes')}/filters`, {
      json: filter('x'.repeat(20_000)),
    });
    expectConfigApiError(response, 400, 3);
    expect(response.body.error).toMatch(/FILTER_MAX_BYTES/);
  });

  it("refuses filters past the workspace's byte budget with 429, code 8, and other workspaces go on", async () => {
    const statuses: number[] = [];
    let refused: ConfigApiResponse | undefined;
    for (let count = 0; count < 8 && !refused; count++) {
      const response = await writer.request('POST', `${destination('bytes')}/filters`, {
        json: filter('y'.repeat(12_000)),
      });
      statuses.push(response.status);
      if (response.status !== 200) refused = response;
    }
    // 64 KiB hold five such filters beside the source and the destination, not a sixth.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expectConfigApiError(refused!, 429, 8);
    expect(refused!.body.error).toMatch(/WORKSPACE_MAX_CONFIG_BYTES/);

    // An update that does not grow a filter is taken at the budget (a tenant can still disable one).
    const [first] = (await writer.get(`${destination('bytes')}/filters`)).body.filters;
    const disabled = await writer.request('PATCH', first.name, {
      json: { filter: { enabled: false }, update_mask: { paths: ['enabled'] } },
    });
    expect(disabled.status).toBe(200);

    expectJsonSuccess(
      await other.request('POST', `${destination('bytes-other')}/filters`, {
        json: filter('z'.repeat(12_000)),
      }),
    );
  });
});
