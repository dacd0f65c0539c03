// One config under two APIs: what `/v1beta` creates, changes or deletes is what `/public-api` reads,
// and the reverse, with one audit trail (docs/public-api.md, "One config").
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import {
  ConfigApiClient,
  createWorkspaceWithTokens,
  WorkspaceAccess,
} from '../../../test/support/config-api.client';
import { SecretBox } from '@tributary/auth';
import { destinationSecretsOwner } from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import { eventStoreOf, readAllEvents } from './support/config-api-e2e.kit';

describe('the Public API and /v1beta over one config', () => {
  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;
  let other: WorkspaceAccess;
  let v1beta: ConfigApiClient;

  /** A Public API call with the workspace's writer token (or `token`), answering `data` or failing. */
  async function publicApi(method: string, path: string, body?: unknown, token = access.writerToken) {
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

  async function data(method: string, path: string, body?: unknown) {
    const response = await publicApi(method, path, body);
    if (response.status !== 200)
      throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.data;
  }

  beforeAll(async () => {
    instance = await startTributary();
    const admin = new ConfigApiClient(instance);
    access = await createWorkspaceWithTokens(admin, 'one-config', 'One Config');
    other = await createWorkspaceWithTokens(admin, 'elsewhere', 'Elsewhere');
    v1beta = access.writer;
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('shows write keys to tokens that may write and masks them for workspace:read tokens, on both APIs', async () => {
    const created = await v1beta.ok('POST', 'workspaces/one-config/sources', {
      source: { name: 'workspaces/one-config/sources/keyed', catalog_name: 'catalog/sources/javascript' },
    });
    const writeKey = created.write_keys[0] as string;
    expect(writeKey).toMatch(/^[A-Za-z0-9]{20,}$/);
    const path = 'workspaces/one-config/sources/keyed';
    // A writer (the console signs in with one) sees the key it needs for its snippets.
    expect((await v1beta.ok('GET', path)).write_keys).toEqual([writeKey]);
    expect((await data('GET', `/sources/${created.id}`)).source.writeKeys).toEqual([writeKey]);
    // A read-only token sees the mask, one per key, wherever a source is shown.
    const readOnly = await access.reader.ok('GET', path);
    expect(readOnly.write_keys).toEqual(['********']);
    const listed = await access.reader.ok('GET', 'workspaces/one-config/sources');
    expect(JSON.stringify(listed)).not.toContain(writeKey);
    expect(listed.sources.find((source: any) => source.id === created.id).write_keys).toEqual(['********']);
    const readPublic = await publicApi('GET', `/sources/${created.id}`, undefined, access.readerToken);
    expect(readPublic.status).toBe(200);
    expect(readPublic.body.data.source.writeKeys).toEqual(['********']);
    const listedPublic = await publicApi('GET', '/sources', undefined, access.readerToken);
    expect(listedPublic.status).toBe(200);
    expect(JSON.stringify(listedPublic.body)).not.toContain(writeKey);
    // The audit trail, which read tokens may read too, never shows it.
    const audit = await access.reader.ok(
      'GET',
      `workspaces/one-config/audit-events?resource_name_prefix=${path}`,
    );
    expect(audit.audit_events.length).toBeGreaterThan(0);
    expect(JSON.stringify(audit)).not.toContain(writeKey);
  });

  it('encrypts secret headers of Actions subscriptions, masks them on both APIs, and keeps them only for the same target', async () => {
    const token = 'Bearer s3cr3t-subscription-token';
    await v1beta.ok('POST', 'workspaces/one-config/sources', {
      source: {
        name: 'workspaces/one-config/sources/secret-hooks',
        catalog_name: 'catalog/sources/javascript',
      },
    });
    const path = 'workspaces/one-config/sources/secret-hooks/destinations/actions-webhook';
    const subscription = (url: string, authorization: string) => ({
      name: 'Hook',
      subscribe: 'type = "track"',
      partnerAction: 'send',
      mapping: { url, method: 'POST', headers: { Authorization: authorization, 'X-Trace': 'visible' } },
    });
    const patch = (value: unknown) =>
      v1beta.patch(path, {
        destination: { config: [{ name: 'subscriptions', value }] },
        update_mask: { paths: ['destination.config'] },
      });
    const shown = async () =>
      (await v1beta.ok('GET', path)).config.find((entry: { name: string }) =>
        entry.name.endsWith('/config/subscriptions'),
      ).value;
    /** The headers delivery gets: the stored subscriptions decrypted for this destination. */
    const delivered = () => {
      const record = instance.app
        .get(ConfigReadModel)
        .listDestinations(
          instance.app.get(ConfigReadModel).source('one-config', 'secret-hooks')!.source.sourceId,
        )
        .find((view) => view.destination.destinationSlug === 'actions-webhook')!.destination;
      const revealed = instance.app.get(SecretBox).revealAll(record.config, destinationSecretsOwner(record));
      return (revealed.subscriptions as any[])[0].mapping;
    };

    const created = await v1beta.ok('POST', 'workspaces/one-config/sources/secret-hooks/destinations', {
      destination: {
        name: path,
        config: [{ name: 'subscriptions', value: [subscription('https://a.example/', token)] }],
      },
    });
    expect(JSON.stringify(created)).not.toContain('s3cr3t');
    expect((await shown())[0].mapping.headers).toEqual({ Authorization: '********', 'X-Trace': 'visible' });
    expect(delivered()).toMatchObject({ headers: { Authorization: token, 'X-Trace': 'visible' } });
    const stored = JSON.stringify(await readAllEvents(eventStoreOf(instance)), (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value,
    );
    expect(stored).not.toContain('s3cr3t');
    expect(stored).toContain('"X-Trace":"visible"');

    // The mask sent back for the same target keeps the secret.
    expect((await patch([subscription('https://a.example/', '********')])).status).toBe(200);
    expect(delivered().headers.Authorization).toBe(token);
    // A new target with the mask is refused, and nothing changes; entered again, it is taken.
    const moved = await patch([subscription('https://elsewhere.example/', '********')]);
    expect(moved.status).toBe(400);
    expect(moved.body).toMatchObject({ code: 3 });
    expect(moved.body.error).toMatch(
      /mapping\.url changes where the subscription sends; re-enter headers\.Authorization/,
    );
    expect(delivered().url).toBe('https://a.example/');
    // The mask on a subscription with no stored value is refused rather than stored as the secret.
    const unknown = await patch([
      { ...subscription('https://a.example/', '********'), subscribe: 'type = "page"' },
    ]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/has none for "Authorization"; enter it/);
    expect((await patch([subscription('https://elsewhere.example/', 'Bearer new')])).status).toBe(200);
    expect(delivered()).toMatchObject({
      url: 'https://elsewhere.example/',
      headers: { Authorization: 'Bearer new' },
    });

    // The Public API shows its own mask, keeps the secret through changes of other subscriptions'
    // fields, and takes its mask back for the same target.
    const sourceId = (await v1beta.ok('GET', 'workspaces/one-config/sources/secret-hooks')).id;
    const destinationId = (await data('GET', `/sources/${sourceId}/connected-destinations`)).destinations[0]
      .id;
    const [listed] = (await data('GET', `/destinations/${destinationId}/subscriptions`)).subscriptions;
    expect(listed.settings.headers).toEqual({ Authorization: '\u2022'.repeat(10), 'X-Trace': 'visible' });
    await data('PATCH', `/destinations/${destinationId}/subscriptions/${listed.id}`, {
      input: { name: 'Renamed' },
    });
    expect(delivered().headers.Authorization).toBe('Bearer new');
    await data('PATCH', `/destinations/${destinationId}/subscriptions/${listed.id}`, {
      input: { settings: listed.settings },
    });
    expect(delivered().headers.Authorization).toBe('Bearer new');
    const publicMoved = await publicApi(
      'PATCH',
      `/destinations/${destinationId}/subscriptions/${listed.id}`,
      {
        input: { settings: { ...listed.settings, url: 'https://third.example/' } },
      },
    );
    // The Public API answers its own validation status, 422.
    expect(publicMoved.status).toBe(422);
    expect(JSON.stringify(publicMoved.body)).toMatch(/re-enter headers\.Authorization/);
    expect(delivered().url).toBe('https://elsewhere.example/');
  });

  it('shows a source created on /v1beta through the Public API, and the reverse, with one audit trail', async () => {
    const fromV1beta = await v1beta.ok('POST', 'workspaces/one-config/sources', {
      source: {
        name: 'workspaces/one-config/sources/made-old',
        catalog_name: 'catalog/sources/javascript',
        display_name: 'Made Old',
      },
    });
    const seen = await data('GET', `/sources/${fromV1beta.id}`);
    expect(seen.source).toMatchObject({
      id: fromV1beta.id,
      slug: 'made-old',
      name: 'Made Old',
      writeKeys: fromV1beta.write_keys,
      enabled: true,
    });

    const fromPublic = (
      await data('POST', '/sources', { slug: 'made-new', enabled: true, metadataId: 'javascript' })
    ).source;
    const read = await v1beta.ok('GET', 'workspaces/one-config/sources/made-new');
    expect(read).toMatchObject({
      id: fromPublic.id,
      display_name: 'made-new',
      write_keys: fromPublic.writeKeys,
    });

    await data('PATCH', `/sources/${fromV1beta.id}`, { name: 'Renamed Through Public' });
    expect((await v1beta.ok('GET', 'workspaces/one-config/sources/made-old')).display_name).toBe(
      'Renamed Through Public',
    );

    const trail = await v1beta.ok(
      'GET',
      'workspaces/one-config/audit-events?resource_name_prefix=workspaces/one-config/sources/made-',
    );
    const types = trail.audit_events.map((entry: { type: string }) => entry.type);
    expect(types).toEqual(expect.arrayContaining(['SourceCreated', 'SourceUpdated']));
    expect(
      trail.audit_events.filter((entry: { type: string }) => entry.type === 'SourceCreated'),
    ).toHaveLength(2);

    await data('DELETE', `/sources/${fromPublic.id}`);
    expect((await v1beta.get('workspaces/one-config/sources/made-new')).status).toBe(404);
    expect((await publicApi('GET', `/sources/${fromPublic.id}`)).status).toBe(404);
  });

  it('keeps another workspace out of reach: its ids are 404 and its resources never listed', async () => {
    const theirs = await other.writer.ok('POST', 'workspaces/elsewhere/sources', {
      source: { name: 'workspaces/elsewhere/sources/theirs', catalog_name: 'catalog/sources/javascript' },
    });
    const response = await publicApi('GET', `/sources/${theirs.id}`);
    expect(response).toEqual({
      status: 404,
      body: { errors: [{ type: 'NotFound', message: 'Resource not found' }] },
    });
    expect((await publicApi('PATCH', `/sources/${theirs.id}`, { name: 'Mine' })).status).toBe(404);
    const listed = await data('GET', '/sources');
    expect(listed.sources.map((source: { id: string }) => source.id)).not.toContain(theirs.id);
    const theirsSeenByThem = await publicApi('GET', `/sources/${theirs.id}`, undefined, other.readerToken);
    expect(theirsSeenByThem.status).toBe(200);
  });

  it('shares destinations, their instances and subscription ids with /v1beta', async () => {
    await v1beta.ok('POST', 'workspaces/one-config/sources', {
      source: { name: 'workspaces/one-config/sources/hooks', catalog_name: 'catalog/sources/javascript' },
    });
    const subscribe = 'type = "track"';
    await v1beta.ok('POST', 'workspaces/one-config/sources/hooks/destinations', {
      destination: {
        name: 'workspaces/one-config/sources/hooks/destinations/actions-webhook',
        enabled: false,
        config: [
          {
            name: 'subscriptions',
            value: [
              {
                name: 'Old',
                subscribe,
                partnerAction: 'send',
                mapping: { url: 'https://a.example/', method: 'POST' },
              },
            ],
          },
        ],
      },
    });
    const source = (await data('GET', '/sources')).sources.find(
      (candidate: { slug: string }) => candidate.slug === 'hooks',
    );
    const [destination] = (await data('GET', `/sources/${source.id}/connected-destinations`)).destinations;
    expect(destination).toMatchObject({ name: 'Webhook', enabled: false, sourceId: source.id });

    const [subscription] = (await data('GET', `/destinations/${destination.id}/subscriptions`)).subscriptions;
    expect(subscription).toMatchObject({ name: 'Old', actionId: 'send', trigger: subscribe, enabled: true });
    const renamed = (
      await data('PATCH', `/destinations/${destination.id}/subscriptions/${subscription.id}`, {
        input: { name: 'New' },
      })
    ).subscription;
    expect(renamed.id).toBe(subscription.id);
    const config = async () =>
      (
        await v1beta.ok('GET', 'workspaces/one-config/sources/hooks/destinations/actions-webhook')
      ).config.find((entry: { name: string }) => entry.name.endsWith('/config/subscriptions')).value;
    expect(await config()).toEqual([
      {
        id: subscription.id,
        name: 'New',
        subscribe,
        partnerAction: 'send',
        mapping: { url: 'https://a.example/', method: 'POST' },
      },
    ]);
    // A subscription made here has an id of its own; a v1beta client writes the list back without
    // ids, and both subscriptions keep theirs.
    const identify = 'type = "identify"';
    const made = (
      await data('POST', `/destinations/${destination.id}/subscriptions`, {
        name: 'Made Here',
        actionId: 'send',
        trigger: identify,
        enabled: true,
        settings: { url: 'https://c.example/', method: 'POST' },
      })
    ).destinationSubscription;
    await v1beta.ok('PATCH', 'workspaces/one-config/sources/hooks/destinations/actions-webhook', {
      destination: {
        config: [
          {
            name: 'subscriptions',
            value: [
              {
                name: 'Again',
                subscribe,
                partnerAction: 'send',
                mapping: { url: 'https://b.example/', method: 'POST' },
              },
              {
                name: 'Made Here',
                subscribe: identify,
                partnerAction: 'send',
                mapping: { url: 'https://d.example/', method: 'POST' },
              },
            ],
          },
        ],
      },
      update_mask: { paths: ['destination.config'] },
    });
    const kept = (await data('GET', `/destinations/${destination.id}/subscriptions`)).subscriptions;
    expect(kept).toEqual([
      expect.objectContaining({
        id: subscription.id,
        name: 'Again',
        settings: { url: 'https://b.example/', method: 'POST' },
      }),
      expect.objectContaining({
        id: made.id,
        name: 'Made Here',
        settings: { url: 'https://d.example/', method: 'POST' },
      }),
    ]);

    // A second instance of the same type, made here, is `actions-webhook-2` on /v1beta.
    const second = (
      await data('POST', '/destinations', {
        sourceId: source.id,
        metadataId: 'actions-webhook',
        name: 'Second Hook',
      })
    ).destination;
    const listed = await v1beta.ok('GET', 'workspaces/one-config/sources/hooks/destinations');
    expect(listed.destinations.map((entry: { name: string }) => entry.name.split('/').pop())).toEqual([
      'actions-webhook',
      'actions-webhook-2',
    ]);
    expect((await data('GET', `/destinations/${second.id}/subscriptions`)).subscriptions).toEqual([]);
    await v1beta.ok('DELETE', 'workspaces/one-config/sources/hooks/destinations/actions-webhook-2');
    expect((await publicApi('GET', `/destinations/${second.id}`)).status).toBe(404);
  });

  it('shares tracking plans, their rules and connections with /v1beta', async () => {
    const schema = { type: 'object', properties: { properties: { type: 'object', required: ['total'] } } };
    const plan = await v1beta.ok('POST', 'workspaces/one-config/tracking-plans', {
      tracking_plan: {
        display_name: 'Shared',
        rules: { events: [{ name: 'Order Completed', version: 1, rules: schema }], identify: schema },
      },
    });
    const planId = plan.name.split('/').pop() as string;
    const publicId = `tp_${planId.slice('rs_'.length)}`;
    const seen = (await data('GET', `/tracking-plans/${publicId}`)).trackingPlan;
    expect(seen).toMatchObject({
      id: publicId,
      name: 'Shared',
      type: 'LIVE',
      resourceSchemaId: planId,
      slug: planId,
    });
    expect((await data('GET', `/tracking-plans/${planId}`)).trackingPlan.id).toBe(publicId);
    expect((await data('GET', `/tracking-plans/${publicId}/rules`)).rules).toEqual([
      { type: 'TRACK', key: 'Order Completed', jsonSchema: schema, version: 1 },
      { type: 'IDENTIFY', jsonSchema: schema, version: 1 },
    ]);

    await data('PUT', `/tracking-plans/${publicId}/rules`, {
      rules: [
        { type: 'TRACK', key: 'Signed Up', jsonSchema: schema, version: 2 },
        { type: 'COMMON', jsonSchema: schema, version: 1 },
      ],
    });
    const rules = (await v1beta.ok('GET', `workspaces/one-config/tracking-plans/${planId}`)).rules;
    expect(rules.events).toEqual([{ name: 'Signed Up', version: 2, rules: schema }]);
    expect(rules.global).toEqual(schema);
    expect(rules.identify).toBeUndefined();

    const source = (
      await data('POST', '/sources', { slug: 'planned', enabled: true, metadataId: 'javascript' })
    ).source;
    await data('POST', `/tracking-plans/${publicId}/sources`, { sourceId: source.id });
    const connections = await v1beta.ok(
      'GET',
      `workspaces/one-config/tracking-plans/${planId}/source-connections`,
    );
    expect(JSON.stringify(connections)).toContain('planned');
    expect((await data('GET', `/sources/${source.id}`)).trackingPlanId).toBe(publicId);
  });

  it('describes the Public API in an OpenAPI document of its own, apart from /v1beta', async () => {
    const publicDocument = (await (await fetch(`${instance.baseUrl}/public-api/openapi.json`)).json()) as any;
    const paths = Object.keys(publicDocument.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/public-api',
        '/public-api/sources/{id}',
        '/public-api/destinations/{destinationId}/subscriptions',
        '/public-api/regulations/sources/{sourceId}',
        '/public-api/regulations/{regulateId}',
        '/public-api/suppressions',
      ]),
    );
    expect(paths.every((path) => path.startsWith('/public-api'))).toBe(true);
    expect(Object.keys(publicDocument.paths['/public-api/sources/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    const v1betaDocument = (await (await fetch(`${instance.baseUrl}/v1beta/openapi.json`)).json()) as any;
    expect(Object.keys(v1betaDocument.paths).some((path) => path.startsWith('/public-api'))).toBe(false);
  });

  it('answers 429 over the rate limit and 413 over the body limits, in {errors} with the rate-limit headers', async () => {
    const limited = await startTributary({
      environment: { PUBLIC_API_RATE_LIMIT: '2', CONFIG_API_MAX_BODY_BYTES: '2000' },
    });
    try {
      const limitedAccess = await createWorkspaceWithTokens(new ConfigApiClient(limited), 'limited');
      const call = (body?: string) =>
        fetch(`${limited.baseUrl}/public-api/sources`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: {
            authorization: `Bearer ${limitedAccess.writerToken}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body,
        });
      const tooLarge = await call(
        JSON.stringify({ slug: 'big', metadataId: 'javascript', settings: { blob: 'x'.repeat(3000) } }),
      );
      expect(tooLarge.status).toBe(413);
      expect(await tooLarge.json()).toEqual({
        errors: [{ type: 'PayloadTooLarge', message: expect.stringMatching(/2000/) }],
      });
      expect(tooLarge.headers.get('x-ratelimit-remaining')).toBe('1');
      expect((await call()).status).toBe(200);
      const over = await call();
      expect(over.status).toBe(429);
      expect(await over.json()).toEqual({
        errors: [{ type: 'too-many-requests', message: 'Too many requests' }],
      });
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(over.headers.get('x-ratelimit-consumed')).toBe('3');
      // The budgets are apart: /v1beta still answers the same token.
      expect((await limitedAccess.writer.get('workspaces/limited/sources')).status).toBe(200);
    } finally {
      await limited.stop({ removeData: true });
    }
  });
});
