// The requests Segment's Go SDK for the Public API (public-api-sdk-go 57.3.0, which the Terraform
// provider is built on) sends, byte for byte where it matters, against the all-in-one server:
// literal brackets in `pagination[count]`, alphabetical keys with `disconnectAllWarehouses`, `null`
// to remove a setting, subscription writes as `application/vnd.segment.v1alpha+json`, and the
// sequences Terraform runs (create then PATCH, GET after each write, 404 meaning "gone").
import { rawRequest, RawResponse } from '../support/raw-http';
import { ConfigApiClient, createWorkspaceWithTokens, WorkspaceAccess } from '../support/config-api.client';
import { startTributary, TributaryTestInstance } from '../support/tributary-test-instance';

const ALPHA = 'application/vnd.segment.v1alpha+json';
const MASK = '\u2022'.repeat(10);

describe('the Public API as the Go SDK calls it', () => {
  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;

  /** One request as the Go SDK makes it: Bearer token, `Accept: application/json`, its User-Agent. */
  function go(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    token?: string,
  ) {
    return rawRequest(instance.port, {
      method,
      path: `/public-api${path}`,
      headers: {
        authorization: `Bearer ${token ?? access.writerToken}`,
        accept: 'application/json',
        'user-agent': 'Public API SDK 57.3.0 (Go)',
        ...(body === undefined ? {} : { 'content-type': contentType }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  function ok(response: RawResponse): any {
    if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${response.text}`);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).not.toHaveProperty('errors');
    return (response.body as { data: unknown }).data;
  }

  function errorOf(response: RawResponse, status: number, type: string) {
    expect({ status: response.status, type: (response.body as any)?.errors?.[0]?.type }).toEqual({
      status,
      type,
    });
    expect(response.body).not.toHaveProperty('data');
    return (response.body as any).errors[0] as { type: string; message: string; field?: string };
  }

  beforeAll(async () => {
    instance = await startTributary();
    access = await createWorkspaceWithTokens(new ConfigApiClient(instance), 'go-sdk', 'Go SDK');
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('gets the workspace at the base path with its slash, and answers rate-limit headers', async () => {
    const response = await go('GET', '/');
    expect(ok(response).workspace).toEqual({
      id: access.workspace.id ?? expect.any(String),
      slug: 'go-sdk',
      name: 'Go SDK',
    });
    expect(Number(response.headers['x-ratelimit-remaining'])).toBeGreaterThan(0);
    expect(Number(response.headers['x-ratelimit-consumed'])).toBeGreaterThan(0);
    expect(new Date(String(response.headers['x-ratelimit-reset'])).getTime()).toBeGreaterThan(
      Date.now() - 61_000,
    );
  });

  it('creates a source with alphabetical keys and disconnectAllWarehouses, then PATCHes nulls as Terraform does', async () => {
    const created = ok(
      await go('POST', '/sources', {
        disconnectAllWarehouses: false,
        enabled: true,
        metadataId: 'javascript',
        settings: { keep: 'yes', remove: 'me' },
        slug: 'go-web',
      }),
    ).source;
    expect(created).toMatchObject({
      slug: 'go-web',
      name: 'go-web',
      enabled: true,
      workspaceId: expect.any(String),
      metadata: { id: 'javascript', slug: 'javascript' },
      settings: { keep: 'yes', remove: 'me' },
      labels: [],
    });
    expect(created.writeKeys).toHaveLength(1);

    const patched = ok(
      await go('PATCH', `/sources/${created.id}`, {
        enabled: false,
        name: 'Go Web',
        settings: { remove: null },
      }),
    ).source;
    expect(patched).toMatchObject({ name: 'Go Web', enabled: false, settings: { keep: 'yes' } });
    expect(patched.settings).not.toHaveProperty('remove');
    const read = ok(await go('GET', `/sources/${created.id}`));
    expect(read).toEqual({ source: patched, trackingPlanId: null });

    errorOf(await go('PATCH', `/sources/${created.id}`, { slug: 'renamed' }), 422, 'ValidationFailure');
    errorOf(
      await go('POST', '/sources', { enabled: true, metadataId: 'javascript', slug: 'go-web' }),
      409,
      'Conflict',
    );
    const unknown = errorOf(
      await go('POST', '/sources', { enabled: true, metadataId: 'nope', slug: 'x' }),
      422,
      'ValidationFailure',
    );
    expect(unknown.field).toBe('metadataId');
    const badSlug = errorOf(
      await go('POST', '/sources', { enabled: true, metadataId: 'javascript', slug: 'Bad Slug!' }),
      422,
      'ValidationFailure',
    );
    expect(badSlug.field).toBe('slug');
  });

  it('pages with literal brackets, percent-encoded brackets and the dotted form alike', async () => {
    for (const slug of ['page-a', 'page-b']) {
      ok(await go('POST', '/sources', { enabled: true, metadataId: 'javascript', slug }));
    }
    const first = ok(await go('GET', '/sources?pagination[count]=2&pagination[cursor]=MA%3D%3D'));
    expect(first.sources).toHaveLength(2);
    expect(first.pagination).toEqual({ current: 'MA==', next: 'Mg==', totalEntries: 3 });
    const encoded = ok(
      await go(
        'GET',
        `/sources?pagination%5Bcount%5D=2&pagination%5Bcursor%5D=${encodeURIComponent(first.pagination.next)}`,
      ),
    );
    const dotted = ok(
      await go('GET', `/sources?pagination.count=2&pagination.cursor=${first.pagination.next}`),
    );
    expect(encoded).toEqual(dotted);
    expect(encoded.sources.map((source: { slug: string }) => source.slug)).toEqual(['page-b']);
    expect(encoded.pagination).toEqual({ current: 'Mg==', previous: 'MA==', totalEntries: 3 });
    expect(encoded.pagination).not.toHaveProperty('next');
    expect(first.sources.map((source: { slug: string }) => source.slug)).toEqual(['go-web', 'page-a']);

    const count = errorOf(await go('GET', '/sources?pagination[count]=0'), 422, 'ValidationFailure');
    expect(count.field).toBe('pagination.count');
    const cursor = errorOf(await go('GET', '/sources?pagination[cursor]=bm9wZQ=='), 422, 'ValidationFailure');
    expect(cursor.field).toBe('pagination.cursor');
  });

  it('creates Actions destinations (two of one type), writes subscriptions as v1alpha and removes a setting with null', async () => {
    const source = ok(
      await go('POST', '/sources', { enabled: true, metadataId: 'javascript', slug: 'go-dest' }),
    ).source;
    const missing = errorOf(
      await go('POST', '/destinations', {
        enabled: false,
        metadataId: 'actions-amplitude',
        settings: {},
        sourceId: source.id,
      }),
      422,
      'ValidationFailure',
    );
    expect(missing.field).toBe('settings.apiKey');
    const first = ok(
      await go('POST', '/destinations', {
        enabled: false,
        metadataId: 'actions-amplitude',
        name: 'Amplitude EU',
        settings: { apiKey: 'key-1', endpoint: 'europe', secretKey: 'secret-1' },
        sourceId: source.id,
      }),
    ).destination;
    expect(first).toMatchObject({
      name: 'Amplitude EU',
      enabled: false,
      sourceId: source.id,
      metadata: { id: 'actions-amplitude' },
      settings: { apiKey: MASK, secretKey: MASK, endpoint: 'europe' },
    });
    expect(first.settings).not.toHaveProperty('subscriptions');
    const second = ok(
      await go('POST', '/destinations', {
        enabled: false,
        metadataId: 'actions-amplitude',
        settings: { apiKey: 'key-2', secretKey: 'secret-2' },
        sourceId: source.id,
      }),
    ).destination;
    expect(second.id).not.toBe(first.id);
    expect(second.name).toBe('Actions Amplitude');

    // Terraform sends the masked secrets back and `null` for a key it no longer declares.
    const patched = ok(
      await go('PATCH', `/destinations/${first.id}`, {
        enabled: true,
        name: null,
        settings: { apiKey: MASK, endpoint: null, secretKey: MASK },
      }),
    ).destination;
    expect(patched).toMatchObject({
      enabled: true,
      name: 'Amplitude EU',
      settings: { apiKey: MASK, secretKey: MASK },
    });
    expect(patched.settings.endpoint).not.toBe('europe');

    expect(ok(await go('GET', `/destinations/${first.id}/subscriptions`))).toEqual({
      subscriptions: [],
      pagination: { current: 'MA==', totalEntries: 0 },
    });
    const subscription = ok(
      await go(
        'POST',
        `/destinations/${first.id}/subscriptions`,
        {
          actionId: 'logEventV2',
          enabled: true,
          name: 'Track',
          settings: { event_type: { '@path': '$.event' } },
          trigger: 'type = "track"',
        },
        ALPHA,
      ),
    ).destinationSubscription;
    expect(subscription).toEqual({
      id: expect.any(String),
      name: 'Track',
      actionId: 'logEventV2',
      actionSlug: 'logEventV2',
      destinationId: first.id,
      enabled: true,
      trigger: 'type = "track"',
      settings: { event_type: { '@path': '$.event' } },
    });
    const updated = ok(
      await go(
        'PATCH',
        `/destinations/${first.id}/subscriptions/${subscription.id}`,
        { input: { enabled: false, trigger: 'type = "identify"' } },
        ALPHA,
      ),
    ).subscription;
    expect(updated).toMatchObject({
      id: subscription.id,
      enabled: false,
      trigger: 'type = "identify"',
      name: 'Track',
    });
    expect(
      ok(await go('GET', `/destinations/${first.id}/subscriptions/${subscription.id}`)).subscription,
    ).toEqual(updated);

    const badTrigger = await go(
      'POST',
      `/destinations/${first.id}/subscriptions`,
      { actionId: 'logEventV2', enabled: true, name: 'Bad', settings: {}, trigger: 'type = ' },
      ALPHA,
    );
    errorOf(badTrigger, 422, 'ValidationFailure');
    const badAction = errorOf(
      await go(
        'POST',
        `/destinations/${first.id}/subscriptions`,
        { actionId: 'sendFax', trigger: 'type = "track"' },
        ALPHA,
      ),
      422,
      'ValidationFailure',
    );
    expect(badAction.field).toBe('actionId');

    ok(await go('DELETE', `/destinations/${first.id}/subscriptions/${subscription.id}`));
    errorOf(await go('GET', `/destinations/${first.id}/subscriptions/${subscription.id}`), 404, 'NotFound');
    ok(await go('DELETE', `/destinations/${second.id}`));
    errorOf(await go('GET', `/destinations/${second.id}`), 404, 'NotFound');
  });

  it('creates a tracking plan, PUTs rules (even []) and deletes rules named in bracketed query keys', async () => {
    const plan = ok(
      await go('POST', '/tracking-plans', { description: 'Main plan', name: 'Main', type: 'LIVE' }),
    ).trackingPlan;
    expect(plan).toMatchObject({ name: 'Main', type: 'LIVE', description: 'Main plan' });
    expect(plan.id).toMatch(/^tp_/);
    expect(plan.resourceSchemaId).toMatch(/^rs_/);
    ok(await go('PUT', `/tracking-plans/${plan.id}/rules`, { rules: [] }));
    const schema = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: {} };
    ok(
      await go('PUT', `/tracking-plans/${plan.id}/rules`, {
        rules: [
          { jsonSchema: schema, key: 'Order Completed', type: 'TRACK', version: 1 },
          { jsonSchema: schema, key: 'Signed Up', type: 'TRACK', version: 1 },
          { jsonSchema: schema, type: 'IDENTIFY', version: 1 },
          { jsonSchema: schema, key: 'Home', type: 'PAGE', version: 1 },
        ],
      }),
    );
    const rules = ok(await go('GET', `/tracking-plans/${plan.id}/rules`)).rules;
    expect(rules.map((rule: { type: string; key?: string }) => `${rule.type}:${rule.key ?? ''}`)).toEqual([
      'TRACK:Order Completed',
      'TRACK:Signed Up',
      'IDENTIFY:',
      'PAGE:Home',
    ]);
    expect(rules[0].jsonSchema).toEqual(schema);
    ok(
      await go(
        'DELETE',
        `/tracking-plans/${plan.id}/rules?rules.0.type=TRACK&rules.0.key=Signed%20Up&rules[1][type]=PAGE&rules[1][key]=Home`,
      ),
    );
    const left = ok(await go('GET', `/tracking-plans/${plan.id}/rules`)).rules;
    expect(left.map((rule: { type: string }) => rule.type)).toEqual(['TRACK', 'IDENTIFY']);
    errorOf(
      await go('PUT', `/tracking-plans/${plan.id}/rules`, {
        rules: [
          { jsonSchema: schema, key: 'A', type: 'TRACK', version: 1 },
          { jsonSchema: schema, key: 'A', type: 'TRACK', version: 1 },
        ],
      }),
      422,
      'ValidationFailure',
    );
    errorOf(await go('POST', '/tracking-plans', { name: 'X', type: 'WEIRD' }), 422, 'ValidationFailure');
    ok(await go('DELETE', `/tracking-plans/${plan.id}`));
    errorOf(await go('GET', `/tracking-plans/${plan.id}`), 404, 'NotFound');
  });

  it('answers every refusal in {errors}: auth, scope, unknown routes and ids, media types, unserved routes', async () => {
    errorOf(
      await rawRequest(instance.port, { method: 'GET', path: '/public-api/sources' }),
      401,
      'Unauthorized',
    );
    errorOf(await go('GET', '/sources', undefined, undefined, 'not-a-token'), 401, 'Unauthorized');
    const admin = errorOf(
      await go('GET', '/sources', undefined, undefined, instance.adminToken),
      403,
      'Forbidden',
    );
    expect(admin.message).toBe('token is not bound to one workspace');
    errorOf(
      await go(
        'POST',
        '/sources',
        { enabled: true, metadataId: 'javascript', slug: 'ro' },
        undefined,
        access.readerToken,
      ),
      403,
      'Forbidden',
    );
    errorOf(await go('GET', '/sources/no-such-id'), 404, 'NotFound');
    errorOf(await go('GET', '/no-such-route'), 404, 'NotFound');
    errorOf(await go('PUT', '/sources'), 404, 'NotFound');
    errorOf(await go('POST', '/sources', 'slug=x', 'text/plain'), 422, 'ValidationFailure');
    errorOf(
      await rawRequest(instance.port, {
        method: 'POST',
        path: '/public-api/sources',
        headers: { authorization: `Bearer ${access.writerToken}`, 'content-type': 'application/json' },
        body: '{"slug":',
      }),
      422,
      'ValidationFailure',
    );
    errorOf(await go('POST', '/regulations', { regulationType: 'SUPPRESS_ONLY' }), 501, 'NotImplemented');
    // Nothing of this API's shape leaks into /v1beta.
    const v1beta = await rawRequest(instance.port, { method: 'GET', path: '/v1beta/no-such-route' });
    expect(v1beta.body).toMatchObject({ code: 5 });
  });
});
