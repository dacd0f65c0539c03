// Functions through the Config API v1beta over loopback HTTP (docs/functions.md §1): create with code
// compiled in the real sandbox, read, list, update as a new version, deploy, versions, delete, the
// audit trail, and every refusal: bad code, bad settings, sizes, the workspace cap, tenancy.
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  expectConfigApiError,
  expectJsonSuccess,
  type WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { RFC3339_MILLIS } from './support/config-api-e2e.kit';

const DESTINATION_CODE = `async function onTrack(event, settings) {
  return event;
}`;
const SOURCE_CODE = `async function onRequest(request, settings) {
  Segment.track({ event: 'Hook', userId: 'u1' });
}`;
const MAX_FUNCTIONS = 4;
const MAX_CODE_BYTES = 4_096;

describe('Config API: functions', () => {
  let t: TributaryTestInstance;
  let access: WorkspaceAccess;
  let other: WorkspaceAccess;
  const ws = `functions-${process.pid}`;

  const functions = (path = '') => `workspaces/${ws}/functions${path}`;
  const create = (type: string, fn: Record<string, unknown>, as: ConfigApiClient = access.writer) =>
    as.post(`workspaces/${as === other.writer ? other.slug : ws}/functions?type=${type}`, { function: fn });

  beforeAll(async () => {
    t = await startTributary({
      environment: {
        CONFIG_API_RATE_LIMIT: '100000',
        WORKSPACE_MAX_FUNCTIONS: String(MAX_FUNCTIONS),
        FUNCTION_MAX_CODE_BYTES: String(MAX_CODE_BYTES),
      },
    });
    const admin = new ConfigApiClient(t);
    access = await createWorkspaceWithTokens(admin, ws);
    other = await createWorkspaceWithTokens(admin, `${ws}-other`);
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('creates a destination function with version 1 deployed, reads, lists, updates, deploys and deletes it', async () => {
    const created = expectJsonSuccess(
      await create('DESTINATION', {
        display_name: 'Order relay',
        code: DESTINATION_CODE,
        buildpack: 'boreal',
        settings: [
          {
            name: 'apiKey',
            label: 'API key',
            type: 'string',
            description: '',
            required: true,
            sensitive: true,
          },
          {
            name: 'events',
            label: 'Events',
            type: 'ARRAY',
            description: 'which',
            required: false,
            sensitive: false,
          },
        ],
      }),
    );
    const id: string = created.id;
    expect(created).toEqual({
      name: `workspaces/${ws}/functions/${id}`,
      id: expect.stringMatching(/^dfn_[0-9A-Za-z]{27}$/),
      workspace_id: access.workspace.id,
      type: 'DESTINATION',
      display_name: 'Order relay',
      description: '',
      logo_url: '',
      buildpack: 'boreal',
      code: DESTINATION_CODE,
      settings: [
        {
          name: 'apiKey',
          label: 'API key',
          type: 'string',
          description: '',
          required: true,
          sensitive: true,
        },
        {
          name: 'events',
          label: 'Events',
          type: 'array',
          description: 'which',
          required: false,
          sensitive: false,
        },
      ],
      version: 1,
      deployed_version: 1,
      created_at: expect.stringMatching(RFC3339_MILLIS),
      created_by: expect.stringMatching(/^access-tokens\/\d+$/),
      create_time: created.created_at,
      update_time: created.created_at,
      deploy_time: created.created_at,
    });
    expect(expectJsonSuccess(await access.reader.get(functions(`/${id}`)))).toEqual(created);
    expect(expectJsonSuccess(await access.reader.get(functions(`/${id}/is-latest-version`)))).toEqual({
      is_latest: true,
    });

    const listed = expectJsonSuccess(await access.reader.get(functions('?type=DESTINATION')));
    expect(listed).toEqual({ functions: [created], next_page_token: '' });
    expect(expectJsonSuccess(await access.reader.get(functions('?type=SOURCE')))).toEqual({
      functions: [],
      next_page_token: '',
    });

    const v2Code = DESTINATION_CODE.replace('onTrack', 'onIdentify');
    const updated = expectJsonSuccess(
      await access.writer.patch(functions(`/${id}`), {
        function: { code: v2Code, display_name: 'Ignored: not in the mask' },
        update_mask: { paths: ['function.code'] },
      }),
    );
    expect(updated).toMatchObject({
      version: 2,
      deployed_version: 1,
      code: v2Code,
      display_name: 'Order relay',
    });
    expect(expectJsonSuccess(await access.reader.get(functions(`/${id}/is-latest-version`)))).toEqual({
      is_latest: false,
    });

    // PUT is the same update; a rename alone makes no version.
    const renamed = expectJsonSuccess(
      await access.writer.put(functions(`/${id}`), { function: { display_name: 'Relay' } }),
    );
    expect(renamed).toMatchObject({ version: 2, display_name: 'Relay' });

    expect(expectJsonSuccess(await access.writer.post(functions(`/${id}:deploy`), {}))).toEqual({
      deployed_version: 2,
    });
    expect(expectJsonSuccess(await access.writer.post(functions(`/${id}/deploy`), {}))).toEqual({
      deployed_version: 2,
    });
    expect(expectJsonSuccess(await access.reader.get(functions(`/${id}/is-latest-version`)))).toEqual({
      is_latest: true,
    });

    const versions = expectJsonSuccess(await access.reader.get(functions(`/${id}/versions`)));
    expect(versions).toEqual({
      versions: [
        expect.objectContaining({
          version: 2,
          deployed: true,
          create_time: expect.stringMatching(RFC3339_MILLIS),
        }),
        expect.objectContaining({ version: 1, deployed: false }),
      ],
      next_page_token: '',
    });
    expect(versions.versions[0]).not.toHaveProperty('code');
    expect(expectJsonSuccess(await access.reader.get(functions(`/${id}/versions/1`)))).toMatchObject({
      version: 1,
      code: DESTINATION_CODE,
      settings: created.settings,
    });
    expectConfigApiError(await access.reader.get(functions(`/${id}/versions/3`)), 404, 5);
    expectConfigApiError(await access.reader.get(functions(`/${id}/versions/first`)), 404, 5);

    const trail = expectJsonSuccess(await access.reader.get(`workspaces/${ws}/audit-events?page_size=1000`))
      .audit_events as { type: string; resource_name?: string }[];
    const types = trail.filter((entry) => JSON.stringify(entry).includes(id)).map((entry) => entry.type);
    expect(types).toEqual(expect.arrayContaining(['FunctionCreated', 'FunctionUpdated', 'FunctionDeployed']));

    expect(expectJsonSuccess(await access.writer.delete(functions(`/${id}`)))).toEqual({});
    expectConfigApiError(await access.reader.get(functions(`/${id}`)), 404, 5);
    expectConfigApiError(await access.writer.delete(functions(`/${id}`)), 404, 5);
  });

  it('creates source and insert functions with their own id prefixes', async () => {
    const source = expectJsonSuccess(await create('source', { display_name: 'Hook', code: SOURCE_CODE }));
    expect(source).toMatchObject({ id: expect.stringMatching(/^sfn_/), type: 'SOURCE', version: 1 });
    const insert = expectJsonSuccess(
      await create('INSERT_DESTINATION', { display_name: 'Mask', code: DESTINATION_CODE }),
    );
    expect(insert).toMatchObject({ id: expect.stringMatching(/^ifnd_/), type: 'INSERT_DESTINATION' });
    const all = expectJsonSuccess(await access.reader.get(functions())).functions.map((fn: any) => fn.id);
    expect(all).toEqual(expect.arrayContaining([source.id, insert.id]));
    await access.writer.delete(functions(`/${source.id}`));
    await access.writer.delete(functions(`/${insert.id}`));
  });

  it.each([
    [
      'a syntax error, with its line and column',
      'DESTINATION',
      'async function onTrack(event) {\n  return event +;\n}',
      /SyntaxError: .*\(line 2, column \d+\)/,
    ],
    ['an import', 'DESTINATION', `import x from 'y';\n${DESTINATION_CODE}`, /import/i],
    ['an export', 'DESTINATION', `export ${DESTINATION_CODE}`, /export/i],
    ['a source function without onRequest', 'SOURCE', DESTINATION_CODE, /onRequest/],
    ['a destination function without a handler', 'DESTINATION', 'const x = 1;', /handler|onTrack/i],
  ])('refuses %s with 400 code 3', async (_case, type, code, message) => {
    const response = await create(type, { display_name: 'Bad', code });
    expectConfigApiError(response, 400, 3);
    expect(response.body.error).toMatch(message);
  });

  it('refuses code past FUNCTION_MAX_CODE_BYTES, on create and on update', async () => {
    const oversize = `${DESTINATION_CODE}\n// ${'x'.repeat(MAX_CODE_BYTES)}`;
    const response = await create('DESTINATION', { display_name: 'Big', code: oversize });
    expectConfigApiError(response, 400, 3);
    expect(response.body.error).toContain('FUNCTION_MAX_CODE_BYTES');
    const fn = expectJsonSuccess(
      await create('DESTINATION', { display_name: 'Small', code: DESTINATION_CODE }),
    );
    expectConfigApiError(
      await access.writer.patch(functions(`/${fn.id}`), {
        function: { code: oversize },
        update_mask: { paths: ['function.code'] },
      }),
      400,
      3,
    );
    expect(expectJsonSuccess(await access.reader.get(functions(`/${fn.id}`))).version).toBe(1);
    await access.writer.delete(functions(`/${fn.id}`));
  });

  it.each([
    ['a bad name', [{ name: '1st', type: 'string' }], 'settings[0].name'],
    ['an unknown type', [{ name: 'a', type: 'number' }], 'settings[0].type'],
    [
      'a name declared twice',
      [
        { name: 'a', type: 'string' },
        { name: 'a', type: 'STRING' },
      ],
      'declared twice',
    ],
    ['51 settings', Array.from({ length: 51 }, (_, i) => ({ name: `s${i}`, type: 'string' })), 'at most 50'],
    ['a sensitive boolean', [{ name: 'a', type: 'boolean', sensitive: true }], 'only a string'],
    ['settings that are no list', { name: 'a' }, 'settings'],
  ])('refuses %s in the settings with 400 code 3', async (_case, settings, message) => {
    const response = await create('DESTINATION', { display_name: 'Bad', code: DESTINATION_CODE, settings });
    expectConfigApiError(response, 400, 3);
    expect(response.body.error).toContain(message);
  });

  it('refuses a missing or unknown type, INSERT_SOURCE, a missing name and a bad update mask', async () => {
    expectConfigApiError(
      await access.writer.post(functions(), { function: { display_name: 'x', code: DESTINATION_CODE } }),
      400,
      3,
    );
    expectConfigApiError(await create('WAREHOUSE', { display_name: 'x', code: DESTINATION_CODE }), 400, 3);
    expectConfigApiError(
      await create('INSERT_SOURCE', { display_name: 'x', code: DESTINATION_CODE }),
      400,
      3,
    );
    expectConfigApiError(await create('DESTINATION', { code: DESTINATION_CODE }), 400, 3);
    expectConfigApiError(await create('DESTINATION', { display_name: 'x', code: 42 }), 400, 3);
    expectConfigApiError(await access.reader.get(functions('?type=nope')), 400, 3);
    const fn = expectJsonSuccess(
      await create('DESTINATION', { display_name: 'Mask', code: DESTINATION_CODE }),
    );
    expectConfigApiError(
      await access.writer.patch(functions(`/${fn.id}`), {
        function: { code: DESTINATION_CODE },
        update_mask: { paths: ['function.type'] },
      }),
      400,
      3,
    );
    await access.writer.delete(functions(`/${fn.id}`));
  });

  it('answers 404 code 5 for an unknown function and for another workspace’s, and 403 to a read-only write', async () => {
    const theirs = expectJsonSuccess(
      await create('DESTINATION', { display_name: 'Theirs', code: DESTINATION_CODE }, other.writer),
    );
    for (const path of [`/dfn_unknown`, `/${theirs.id}`]) {
      expectConfigApiError(await access.reader.get(functions(path)), 404, 5);
      expectConfigApiError(await access.writer.delete(functions(path)), 404, 5);
      expectConfigApiError(await access.writer.post(functions(`${path}/deploy`), {}), 404, 5);
      expectConfigApiError(await access.reader.get(functions(`${path}/versions`)), 404, 5);
      expectConfigApiError(
        await access.writer.patch(functions(path), { function: { display_name: 'mine' } }),
        404,
        5,
      );
    }
    // The other workspace's URL with this workspace's token: never reached.
    const response = await access.reader.get(`workspaces/${other.slug}/functions/${theirs.id}`);
    expect([403, 404]).toContain(response.status);
    expect(
      expectJsonSuccess(await other.reader.get(`workspaces/${other.slug}/functions/${theirs.id}`))
        .display_name,
    ).toBe('Theirs');
    expectConfigApiError(
      await create('DESTINATION', { display_name: 'x', code: DESTINATION_CODE }, access.reader),
      403,
      7,
    );
  });

  it('refuses a create past WORKSPACE_MAX_FUNCTIONS with 429 code 8, and accepts one again after a delete', async () => {
    const ids: string[] = [];
    for (let index = 0; index < MAX_FUNCTIONS; index += 1) {
      ids.push(
        expectJsonSuccess(await create('DESTINATION', { display_name: `f${index}`, code: DESTINATION_CODE }))
          .id,
      );
    }
    const refused = await create('DESTINATION', { display_name: 'one too many', code: DESTINATION_CODE });
    expectConfigApiError(refused, 429, 8);
    expect(refused.body.error).toContain('WORKSPACE_MAX_FUNCTIONS');
    await access.writer.delete(functions(`/${ids.pop()}`));
    ids.push(
      expectJsonSuccess(await create('DESTINATION', { display_name: 'again', code: DESTINATION_CODE })).id,
    );
    for (const id of ids) expectJsonSuccess(await access.writer.delete(functions(`/${id}`)));
  });

  it('refuses to delete a function an instance runs with 400 code 9, and deletes it once the instance is gone', async () => {
    const fn = expectJsonSuccess(
      await create('DESTINATION', { display_name: 'Used', code: DESTINATION_CODE }),
    );
    const source = expectJsonSuccess(
      await access.writer.post(`workspaces/${ws}/sources`, {
        source: { name: `workspaces/${ws}/sources/used-by`, catalog_name: 'catalog/sources/javascript' },
      }),
    );
    const destinationName = `${source.name}/destinations/${fn.id}`;
    expectJsonSuccess(
      await access.writer.post(`${source.name}/destinations`, {
        destination: { name: destinationName, enabled: false, connection_mode: 'CLOUD', config: [] },
      }),
    );
    const refused = await access.writer.delete(functions(`/${fn.id}`));
    expectConfigApiError(refused, 400, 9);
    expect(refused.body.error).toMatch(/instance|in use|used/i);
    expectJsonSuccess(await access.writer.delete(destinationName));
    expectJsonSuccess(await access.writer.delete(functions(`/${fn.id}`)));
    expectConfigApiError(await access.reader.get(functions(`/${fn.id}`)), 404, 5);
    await access.writer.delete(source.name);
  });

  it('answers a preview without code, and the logs of an unknown function, with their errors', async () => {
    expectConfigApiError(await access.writer.post(functions('/preview?type=DESTINATION'), {}), 400, 3);
    expectConfigApiError(await access.reader.get(functions('/dfn_x/logs')), 404, 5);
  });
});
