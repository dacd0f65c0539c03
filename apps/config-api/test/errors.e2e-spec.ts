// Every error row of docs/config-api.md §4 over real HTTP, and the lenient inputs of docs/config-api.md §5 that must NOT be errors.
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiResponse,
  basicAuthorization,
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
  requestWithAnyBody,
} from '../../../test/support/config-api.client';
import { eventStoreOf, RFC3339_MILLIS } from './support/config-api-e2e.kit';

describe('Config API errors (docs/config-api.md §4)', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;
  let writer: ConfigApiClient;
  let reader: ConfigApiClient;
  const ws = 'errors';

  beforeAll(async () => {
    instance = await startTributary();
    admin = new ConfigApiClient(instance);
    ({ writer, reader } = await createWorkspaceWithTokens(admin, ws));
    await createWorkspaceWithTokens(admin, 'elsewhere');
    await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/js`, catalog_name: 'catalog/sources/javascript' },
    });
    await writer.ok('POST', `workspaces/${ws}/sources/js/destinations`, {
      destination: { name: `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4` },
    });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  describe('400, code 3: invalid argument', () => {
    it('answers invalid JSON', async () => {
      const response = await writer.request('POST', `workspaces/${ws}/sources`, {
        rawBody: '{"source": {"name": ',
        headers: { 'content-type': 'application/json' },
      });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/JSON/);
    });

    it('answers a field of the wrong type', async () => {
      const response = await writer.post(`workspaces/${ws}/sources`, {
        source: { name: 42, catalog_name: 'catalog/sources/javascript' },
      });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/source\.name/);
    });

    it('answers a body without the resource object', async () => {
      expectConfigApiError(await writer.post(`workspaces/${ws}/sources`, { name: 'x' }), 400, 3);
    });

    it.each(['abc', '-1', '1.5', '100000'])('answers page_size=%s', async (pageSize) => {
      const response = await writer.get(`workspaces/${ws}/sources?page_size=${pageSize}`);
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/page_size/);
    });

    it('answers a page_token this API never returned', async () => {
      expectConfigApiError(await writer.get(`workspaces/${ws}/sources?page_token=bogus`), 400, 3);
    });

    it('answers an update_mask path that is no updatable field', async () => {
      const response = await writer.patch(
        `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4`,
        {
          destination: { enabled: false },
          update_mask: { paths: ['destination.create_time'] },
        },
      );
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/destination\.create_time/);
    });

    it('answers an invalid slug', async () => {
      const response = await writer.post(`workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/not a slug!`, catalog_name: 'catalog/sources/javascript' },
      });
      expectConfigApiError(response, 400, 3);
      expect(response.body.error).toMatch(/slug/);
    });

    it('answers a source name under another workspace', async () => {
      const response = await writer.post(`workspaces/${ws}/sources`, {
        source: { name: 'workspaces/elsewhere/sources/js', catalog_name: 'catalog/sources/javascript' },
      });
      expectConfigApiError(response, 400, 3);
    });

    it('answers a URL the router cannot read: bad percent-encoding, an over-long segment', async () => {
      expectConfigApiError(await writer.get('workspaces/%E0%A4%A'), 400, 3);
      expectConfigApiError(await writer.get(`workspaces/${ws}/sources/${'s'.repeat(300)}`), 400, 3);
    });

    it('answers an unknown catalog source', async () => {
      const response = await writer.post(`workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/fresh`, catalog_name: 'catalog/sources/no-such-library' },
      });
      expectConfigApiError(response, 400, 3);
      expect((await writer.get(`workspaces/${ws}/sources/fresh`)).status).toBe(404);
    });

    it('answers an unknown catalog destination', async () => {
      const response = await writer.post(`workspaces/${ws}/sources/js/destinations`, {
        destination: { name: `workspaces/${ws}/sources/js/destinations/no-such-destination` },
      });
      expectConfigApiError(response, 400, 3);
    });

    it('answers a config value of the wrong type and an unknown setting', async () => {
      const path = `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4`;
      expectConfigApiError(
        await writer.patch(path, {
          destination: { config: [{ name: 'siteSpeedSampleRate', value: 'fast' }] },
        }),
        400,
        3,
      );
      expectConfigApiError(
        await writer.patch(path, { destination: { config: [{ name: 'noSuchSetting', value: 'x' }] } }),
        400,
        3,
      );
    });

    it('answers a filter whose FQL condition or actions do not compile, and stores none', async () => {
      const filters = `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4/filters`;
      expectConfigApiError(
        await writer.post(filters, {
          filter: { if: "event = = 'x'", actions: [{ type: 'drop_event' }], enabled: true },
        }),
        400,
        3,
      );
      expectConfigApiError(
        await writer.post(filters, {
          filter: { if: 'all', actions: [{ type: 'sample_event', percent: 2 }], enabled: true },
        }),
        400,
        3,
      );
      expect(expectJsonSuccess(await writer.get(filters)).filters).toEqual([]);
    });
  });

  describe('401, code 16: unauthenticated', () => {
    it('answers a request without a token', async () => {
      expectConfigApiError(await admin.get('workspaces', { token: null }), 401, 16);
    });

    it('answers an unknown token', async () => {
      const forged = `${'a'.repeat(43)}.${'b'.repeat(43)}`;
      expectConfigApiError(await admin.get('workspaces', { token: forged }), 401, 16);
      expectConfigApiError(await admin.get('workspaces', { headers: { authorization: 'Bearer' } }), 401, 16);
      expectConfigApiError(
        await admin.get('workspaces', { headers: { authorization: 'Token abc' } }),
        401,
        16,
      );
    });

    it('answers an expired token, and refuses to mint one that expires in the past', async () => {
      const expiring = await admin.ok('POST', 'access-tokens', {
        access_token: {
          description: 'expiring',
          scopes: 'workspace',
          workspace_names: [`workspaces/${ws}`],
          expire_time: new Date(Date.now() + 1_500).toISOString(),
        },
      });
      expect(expiring.expire_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const listed = await admin.ok('GET', 'access-tokens?page_size=1000');
      expect(listed.access_tokens.find((token: any) => token.name === expiring.name).expire_time).toBe(
        expiring.expire_time,
      );
      const soonExpired = admin.as(expiring.token);
      expectJsonSuccess(await soonExpired.get(`workspaces/${ws}`));
      await new Promise((resolve) => setTimeout(resolve, 1_600));
      const refused = await soonExpired.get(`workspaces/${ws}`);
      expectConfigApiError(refused, 401, 16);
      expect(refused.body.error).toMatch(/expired/);
      // The Public API refuses it too.
      const publicApi = await fetch(`${instance.baseUrl}/public-api/sources`, {
        headers: { authorization: `Bearer ${expiring.token}` },
      });
      expect(publicApi.status).toBe(401);

      for (const expireTime of [new Date(Date.now() - 60_000).toISOString(), 'tomorrow', 12]) {
        const response = await admin.post('access-tokens', {
          access_token: {
            scopes: 'workspace',
            workspace_names: [`workspaces/${ws}`],
            expire_time: expireTime,
          },
        });
        expectConfigApiError(response, 400, 3);
        expect(response.body.error).toMatch(/expire_time/);
      }
    });

    it('answers a deleted token', async () => {
      const created = await admin.ok('POST', 'access-tokens', {
        access_token: {
          description: 'short-lived',
          scopes: 'workspace',
          workspace_names: [`workspaces/${ws}`],
        },
      });
      const shortLived = admin.as(created.token);
      expectJsonSuccess(await shortLived.get(`workspaces/${ws}`));
      expect(await admin.ok('DELETE', created.name)).toEqual({});
      expectConfigApiError(await shortLived.get(`workspaces/${ws}`), 401, 16);
    });

    it('answers Basic credentials on a route that takes only Bearer tokens', async () => {
      const response = await admin.get('workspaces', {
        headers: { authorization: basicAuthorization('admin@example.com', 'whatever') },
      });
      expectConfigApiError(response, 401, 16);
    });

    it('answers wrong Basic credentials on token management', async () => {
      const response = await admin.get('access-tokens', {
        headers: { authorization: basicAuthorization('nobody@example.com', 'wrong') },
      });
      expectConfigApiError(response, 401, 16);
    });
  });

  describe('403, code 7: insufficient scope', () => {
    it('answers a write with a workspace:read token, and the write does not happen', async () => {
      const response = await reader.post(`workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/by-reader`, catalog_name: 'catalog/sources/javascript' },
      });
      expectConfigApiError(response, 403, 7);
      expect(response.body.error).toBe('insufficient scope');
      expect((await reader.get(`workspaces/${ws}/sources/by-reader`)).status).toBe(404);
      // Reads are what the scope allows.
      expectJsonSuccess(await reader.get(`workspaces/${ws}/sources/js`));
    });

    it('answers PATCH and DELETE with a workspace:read token', async () => {
      const path = `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4`;
      const patch = await reader.patch(path, { destination: { connection_mode: 'DEVICE' } });
      expectConfigApiError(patch, 403, 7);
      expect(patch.body.error).toBe('insufficient scope');
      expectConfigApiError(await reader.delete(path), 403, 7);
      expect((await reader.get(path)).body.connection_mode).toBe('CLOUD');
    });

    it('answers a workspace token that tries to create a workspace', async () => {
      const response = await writer.post('workspaces', { workspace: { name: 'workspaces/not-mine' } });
      expectConfigApiError(response, 403, 7);
      expect(response.body.error).toMatch(/^insufficient scope/);
      expectConfigApiError(await admin.get('workspaces/not-mine'), 404, 5);
    });

    it('answers a workspace token that tries to mint a token', async () => {
      const response = await writer.post('access-tokens', {
        access_token: { scopes: 'workspace', workspace_names: [`workspaces/${ws}`] },
      });
      expectConfigApiError(response, 403, 7);
      expect(response.body.error).toMatch(/^insufficient scope/);
    });
  });

  describe('404, code 5: not found', () => {
    it('answers an unknown path', async () => {
      expectConfigApiError(await writer.get('no-such-collection'), 404, 5);
      expectConfigApiError(await writer.get(`workspaces/${ws}/sources/js/no-such-thing`), 404, 5);
    });

    it('answers a method the path does not have', async () => {
      expectConfigApiError(await admin.delete('workspaces'), 404, 5);
      expectConfigApiError(await admin.request('PATCH', 'catalog/sources'), 404, 5);
      expectConfigApiError(await writer.post(`workspaces/${ws}/sources/js`, {}), 404, 5);
    });

    it('answers a resource that does not exist', async () => {
      expectConfigApiError(await writer.get(`workspaces/${ws}/sources/ghost`), 404, 5);
      expectConfigApiError(
        await writer.get(`workspaces/${ws}/sources/js/destinations/actions-mixpanel`),
        404,
        5,
      );
      expectConfigApiError(await writer.get(`workspaces/${ws}/tracking-plans/rs_${'0'.repeat(27)}`), 404, 5);
      expectConfigApiError(
        await writer.get(
          `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4/filters/df_${'0'.repeat(27)}`,
        ),
        404,
        5,
      );
      expectConfigApiError(await admin.get('catalog/destinations/no-such-destination'), 404, 5);
      expectConfigApiError(await admin.get('workspaces/ghost'), 404, 5);
      expectConfigApiError(await writer.delete(`workspaces/${ws}/sources/ghost`), 404, 5);
      expectConfigApiError(await admin.delete('access-tokens/999999'), 404, 5);
    });

    it('names the first missing resource of the path; a body that fails its schema answers 400 first', async () => {
      const ghostSource = `workspaces/${ws}/sources/ghost`;
      expect((await writer.get(`${ghostSource}/destinations/webhooks/filters`)).body.error).toBe(
        `${ghostSource} not found`,
      );
      expect((await admin.get('workspaces/ghost/tracking-plans')).body.error).toBe(
        'workspaces/ghost not found',
      );
      expectConfigApiError(await writer.patch(ghostSource, { source: 5 }), 400, 3);
      // Page sizes are read by the handler, once the resources of its path are found.
      expectConfigApiError(await writer.get(`${ghostSource}/destinations?page_size=-1`), 404, 5);
      expectConfigApiError(await writer.patch(ghostSource, { source: {} }), 404, 5);
    });

    it("answers a workspace out of the token's reach as if it did not exist", async () => {
      expectConfigApiError(await writer.get('workspaces/elsewhere'), 404, 5);
      expectConfigApiError(await writer.get('workspaces/elsewhere/sources'), 404, 5);
      const write = await writer.post('workspaces/elsewhere/sources', {
        source: { name: 'workspaces/elsewhere/sources/js', catalog_name: 'catalog/sources/javascript' },
      });
      expectConfigApiError(write, 404, 5);
      expectConfigApiError(await admin.get('workspaces/elsewhere/sources/js'), 404, 5);
    });
  });

  describe('409, code 6: already exists', () => {
    it('answers a duplicate source', async () => {
      const response = await writer.post(`workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/js`, catalog_name: 'catalog/sources/node' },
      });
      expectConfigApiError(response, 409, 6);
      expect((await writer.get(`workspaces/${ws}/sources/js`)).body.catalog_name).toBe(
        'catalog/sources/javascript',
      );
    });

    it('answers a duplicate destination', async () => {
      const response = await writer.post(`workspaces/${ws}/sources/js/destinations`, {
        destination: { name: `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4` },
      });
      expectConfigApiError(response, 409, 6);
    });

    it('answers a duplicate workspace', async () => {
      expectConfigApiError(
        await admin.post('workspaces', { workspace: { name: `workspaces/${ws}` } }),
        409,
        6,
      );
    });
  });

  describe('501, code 12: surfaces Tributary does not implement (docs/config-api.md §2.8, §2.9)', () => {
    it.each<[string, string, unknown]>([
      ['GET', `workspaces/${ws}/roles`, undefined],
      // The metrics summary itself is served by the router (apps/router); its time series are not.
      [
        'GET',
        `workspaces/${ws}/sources/js/destinations/actions-google-analytics-4/metrics:batchGet`,
        undefined,
      ],
      ['GET', `workspaces/${ws}/event-delivery-metrics:batchGetSummary`, undefined],
    ])('%s %s', async (method, path, json) => {
      expectConfigApiError(await writer.request(method as 'GET', path, { json }), 501, 12);
    });

    it('still asks for a token first', async () => {
      expectConfigApiError(await admin.get(`workspaces/${ws}/roles`, { token: null }), 401, 16);
    });
  });

  describe('lenient inputs that are not errors (docs/config-api.md §5)', () => {
    it('strips trailing slashes and collapses //', async () => {
      expect(expectJsonSuccess(await writer.get(`workspaces/${ws}/sources/`)).sources.length).toBeGreaterThan(
        0,
      );
      expect(expectJsonSuccess(await writer.get('/catalog/sources/')).sources.length).toBeGreaterThan(0);
      expect(expectJsonSuccess(await writer.get(`workspaces//${ws}//sources/js/`)).name).toBe(
        `workspaces/${ws}/sources/js`,
      );
    });

    it('reads ?&page_size=1', async () => {
      const body = expectJsonSuccess(await admin.get('catalog/sources?&page_size=1'));
      expect(body.sources).toHaveLength(1);
      expect(body.next_page_token).not.toBe('');
    });

    it('takes an empty body with Content-Type: application/json on GET and DELETE', async () => {
      const json = { 'content-type': 'application/json' };
      expectJsonSuccess(await requestWithAnyBody(writer, 'GET', `workspaces/${ws}/sources/js`, '', json));
      await writer.ok('POST', `workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/to-delete`, catalog_name: 'catalog/sources/javascript' },
      });
      const deleted = await requestWithAnyBody(
        writer,
        'DELETE',
        `workspaces/${ws}/sources/to-delete`,
        '',
        json,
      );
      expect(expectJsonSuccess(deleted)).toEqual({});
    });

    it('ignores a "{}" body on GET and DELETE', async () => {
      const json = { 'content-type': 'application/json' };
      expectJsonSuccess(await requestWithAnyBody(writer, 'GET', `workspaces/${ws}/sources`, '{}', json));
      await writer.ok('POST', `workspaces/${ws}/sources`, {
        source: {
          name: `workspaces/${ws}/sources/to-delete-too`,
          catalog_name: 'catalog/sources/javascript',
        },
      });
      const deleted = await requestWithAnyBody(
        writer,
        'DELETE',
        `workspaces/${ws}/sources/to-delete-too`,
        '{}',
        json,
      );
      expect(expectJsonSuccess(deleted)).toEqual({});
    });

    it('reads a JSON body sent without a Content-Type or with a form Content-Type', async () => {
      const bare = await writer.request('POST', `workspaces/${ws}/sources`, {
        rawBody: new TextEncoder().encode(
          JSON.stringify({
            source: { name: `workspaces/${ws}/sources/curl-bare`, catalog_name: 'catalog/sources/node' },
          }),
        ),
      });
      expect(expectJsonSuccess(bare).name).toBe(`workspaces/${ws}/sources/curl-bare`);
      const form = await writer.request('POST', `workspaces/${ws}/sources`, {
        rawBody: JSON.stringify({
          source: { name: `workspaces/${ws}/sources/curl-form`, catalog_name: 'catalog/sources/node' },
        }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(expectJsonSuccess(form).name).toBe(`workspaces/${ws}/sources/curl-form`);
    });

    it('ignores echoed read-only fields such as create_time "0001-01-01T00:00:00Z"', async () => {
      const before = Date.now();
      const body = expectJsonSuccess(
        await writer.post(`workspaces/${ws}/sources`, {
          source: {
            name: `workspaces/${ws}/sources/echoed`,
            catalog_name: 'catalog/sources/javascript',
            create_time: '0001-01-01T00:00:00Z',
            update_time: '0001-01-01T00:00:00Z',
            library_config: {},
            write_keys: ['chosen-by-client'],
            id: 'client-id',
          },
        }),
      );
      expect(body.create_time).toMatch(RFC3339_MILLIS);
      expect(Date.parse(body.create_time)).toBeGreaterThanOrEqual(before - 1000);
      expect(body.write_keys).not.toContain('chosen-by-client');
    });

    it('takes lower-case connection_mode, a bare config key and a config entry without type', async () => {
      const destination = expectJsonSuccess(
        await writer.post(`workspaces/${ws}/sources/curl-bare/destinations`, {
          destination: {
            name: `workspaces/${ws}/sources/curl-bare/destinations/actions-google-analytics-4`,
            connection_mode: 'cloud',
            create_time: '0001-01-01T00:00:00Z',
            config: [
              { name: 'measurementId', value: 'UA-970334309-1' },
              {
                name: `workspaces/${ws}/sources/curl-bare/destinations/actions-google-analytics-4/config/firebaseAppId`,
                value: 'app-1',
                type: 'string',
              },
            ],
          },
        }),
      );
      expect(destination.connection_mode).toBe('CLOUD');
      const config = Object.fromEntries(
        destination.config.map((entry: any) => [entry.name.split('/').pop(), entry]),
      );
      expect(config.measurementId).toMatchObject({ value: 'UA-970334309-1', type: 'string' });
      expect(config.firebaseAppId).toMatchObject({ value: 'app-1', type: 'string' });
    });

    it('takes a full resource name where a slug is expected in DELETE', async () => {
      await writer.ok('POST', `workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/full-name`, catalog_name: 'catalog/sources/javascript' },
      });
      const deleted = await writer.delete(`workspaces/${ws}/sources/workspaces/${ws}/sources/full-name`);
      expect(expectJsonSuccess(deleted)).toEqual({});
      expect((await writer.get(`workspaces/${ws}/sources/full-name`)).status).toBe(404);

      const plan = await writer.ok('POST', `workspaces/${ws}/tracking-plans`, {
        tracking_plan: { display_name: 'Lenient', rules: { events: [] } },
      });
      await writer.ok('POST', `${plan.name}/source-connections`, {
        source_name: `workspaces/${ws}/sources/js`,
      });
      const disconnected = await writer.delete(`${plan.name}/source-connections/workspaces/${ws}/sources/js`);
      expect(disconnected.text).toBe('{}');
      expect(expectJsonSuccess(await writer.get(`${plan.name}/source-connections`)).connections).toEqual([]);
    });

    it('answers every delete with exactly {} and status 200', async () => {
      const responses: ConfigApiResponse[] = [];
      const destination = `workspaces/${ws}/sources/curl-form/destinations/actions-google-analytics-4`;
      await writer.ok('POST', `workspaces/${ws}/sources/curl-form/destinations`, {
        destination: { name: destination },
      });
      const filter = await writer.ok('POST', `${destination}/filters`, {
        filter: { title: 'f', if: 'all', actions: [{ type: 'drop_event' }] },
      });
      const plan = await writer.ok('POST', `workspaces/${ws}/tracking-plans`, {
        tracking_plan: { display_name: 'Gone' },
      });
      const token = await admin.ok('POST', 'access-tokens', {
        access_token: { scopes: 'workspace:read', workspace_names: [`workspaces/${ws}`] },
      });
      responses.push(await writer.delete(filter.name));
      responses.push(await writer.delete(destination));
      responses.push(await writer.delete(plan.name));
      responses.push(await writer.delete(`workspaces/${ws}/sources/curl-form`));
      responses.push(await admin.delete(token.name));
      for (const response of responses) {
        expect(response.status).toBe(200);
        expect(response.text).toBe('{}');
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      }
    });
  });
});

describe('an access token revoking itself (the console signing out)', () => {
  let instance: TributaryTestInstance;
  let admin: ConfigApiClient;

  beforeAll(async () => {
    instance = await startTributary();
    admin = new ConfigApiClient(instance);
    await admin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/revoke' } });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  const mint = () =>
    admin.ok<{ name: string; token: string }>('POST', 'access-tokens', {
      access_token: {
        description: 'console sign-in',
        scopes: 'workspace',
        workspace_names: ['workspaces/revoke'],
      },
    });

  it('may delete itself, and is refused from then on; it may not delete another token (403, code 7)', async () => {
    const own = await mint();
    const other = await mint();
    const client = admin.as(own.token);
    expectConfigApiError(await client.delete(other.name), 403, 7);
    expect((await client.get('workspaces/revoke/sources')).status).toBe(200);

    expect((await client.delete(own.name)).status).toBe(200);
    expectConfigApiError(await client.get('workspaces/revoke/sources'), 401, 16);
    expect((await admin.as(other.token).get('workspaces/revoke/sources')).status).toBe(200);
  });
});

describe('Config API rate limit: 429, code 8', () => {
  let instance: TributaryTestInstance;

  beforeAll(async () => {
    instance = await startTributary({ environment: { CONFIG_API_RATE_LIMIT: '5' } });
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('answers the sixth request of a minute with 429, code 8 and Retry-After, per token', async () => {
    const admin = new ConfigApiClient(instance);
    for (let request = 1; request <= 5; request++) expectJsonSuccess(await admin.get('catalog/sources'));
    const limited = await admin.get('catalog/sources');
    expectConfigApiError(limited, 429, 8);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Writes are limited the same way, before they do anything.
    expectConfigApiError(
      await admin.post('workspaces', { workspace: { name: 'workspaces/limited' } }),
      429,
      8,
    );
  });
});

describe('Config API with its event store down: 503, code 14', () => {
  let instance: TributaryTestInstance;

  beforeAll(async () => {
    instance = await startTributary();
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('answers a write with 503 and code 14 while reads still come from the read model', async () => {
    const admin = new ConfigApiClient(instance);
    await admin.ok('POST', 'workspaces', { workspace: { name: 'workspaces/down' } });
    await eventStoreOf(instance).close();
    const write = await admin.post('workspaces/down/sources', {
      source: { name: 'workspaces/down/sources/js', catalog_name: 'catalog/sources/javascript' },
    });
    expectConfigApiError(write, 503, 14);
    expect(expectJsonSuccess(await admin.get('workspaces/down')).name).toBe('workspaces/down');
  });
});
