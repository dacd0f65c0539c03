// Drives Segment's own Public API SDK, @segment/public-api-sdk-typescript 47.0.0-b8398, unchanged,
// against the all-in-one server: every API class of the SDK has a settable `basePath`, pointed here at
// `/public-api`. Each endpoint of the subset is called through the SDK's own methods and `unwrap`, and
// its failures are read as the SDK rethrows them (`body.errors[0]`).
import * as PublicApi from '@segment/public-api-sdk-typescript';
import { RegulationRunner } from '../../apps/router/src/regulations/regulation-runner.service';
import { ConfigApiClient, createWorkspaceWithTokens, WorkspaceAccess } from '../support/config-api.client';
import { startTributary, TributaryTestInstance } from '../support/tributary-test-instance';

type Apis = ReturnType<typeof PublicApi.configureApis>;

/** The SDK types enums as TypeScript enums whose values are the wire strings. */
function sdkEnum<Enum>(wireValue: string): Enum {
  return wireValue as Enum;
}

/** What `unwrap` rethrows for a non-2xx answer: the first of `{errors}`. */
async function failureOf(call: Promise<unknown>): Promise<{ type: string; message: string; field?: string }> {
  try {
    await call;
  } catch (error) {
    return error as { type: string; message: string; field?: string };
  }
  throw new Error('expected the call to fail');
}

describe('@segment/public-api-sdk-typescript 47.0.0-b8398 against the Public API', () => {
  let instance: TributaryTestInstance;
  let access: WorkspaceAccess;
  let sdk: Apis;
  let readOnly: Apis;

  function configured(token: string): Apis {
    const apis = PublicApi.configureApis(token);
    for (const api of Object.values(apis)) api.basePath = `${instance.baseUrl}/public-api`;
    return apis;
  }

  beforeAll(async () => {
    instance = await startTributary();
    access = await createWorkspaceWithTokens(new ConfigApiClient(instance), 'ts-sdk', 'TS SDK');
    sdk = configured(access.writerToken);
    readOnly = configured(access.readerToken);
  });

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it('reads the workspace', async () => {
    const { workspace } = await PublicApi.unwrap(sdk.workspaces.getWorkspace());
    expect(workspace).toMatchObject({ slug: 'ts-sdk', name: 'TS SDK', id: expect.any(String) });
  });

  it('pages through the catalog, Actions entries with their actions and presets, by id', async () => {
    const firstPage = await PublicApi.unwrap(sdk.catalog.getDestinationsCatalog({ count: 2 }));
    expect(firstPage.destinationsCatalog).toHaveLength(2);
    expect(firstPage.pagination.next).toBeDefined();
    const secondPage = await PublicApi.unwrap(
      sdk.catalog.getDestinationsCatalog({ count: 2, cursor: firstPage.pagination.next ?? undefined }),
    );
    expect(secondPage.pagination.previous).toBe('MA==');
    expect(secondPage.destinationsCatalog[0].id).not.toBe(firstPage.destinationsCatalog[0].id);

    const { destinationMetadata } = await PublicApi.unwrap(
      sdk.catalog.getDestinationMetadata('actions-amplitude'),
    );
    expect(destinationMetadata.actions.map((action) => action.slug)).toContain('logEventV2');
    expect(destinationMetadata.presets.length).toBeGreaterThan(0);
    expect(destinationMetadata.options.map((option) => option.name)).toEqual(
      expect.arrayContaining(['apiKey', 'secretKey']),
    );
    const sources = await PublicApi.unwrap(sdk.catalog.getSourcesCatalog({ count: 200 }));
    expect(sources.sourcesCatalog.map((source) => source.slug)).toContain('javascript');
    const { sourceMetadata } = await PublicApi.unwrap(sdk.catalog.getSourceMetadata('javascript'));
    expect(sourceMetadata.name).toBeTruthy();
    const unknown = await failureOf(PublicApi.unwrap(sdk.catalog.getSourceMetadata('no-such-source')));
    expect(unknown).toMatchObject({ type: 'NotFound' });
  });

  it('creates, lists over several pages, gets, updates and deletes sources, with their settings', async () => {
    const created = [];
    for (const slug of ['sdk-a', 'sdk-b', 'sdk-c']) {
      const { source } = await PublicApi.unwrap(
        sdk.sources.createSource({ slug, enabled: true, metadataId: 'javascript', settings: { tier: slug } }),
      );
      created.push(source);
    }
    expect(created[0]).toMatchObject({ slug: 'sdk-a', enabled: true, settings: { tier: 'sdk-a' } });

    const slugs: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await PublicApi.unwrap(sdk.sources.listSources({ count: 2, ...(cursor && { cursor }) }));
      slugs.push(...page.sources.map((source) => source.slug));
      cursor = page.pagination.next ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(2);
    expect(slugs).toEqual(['sdk-a', 'sdk-b', 'sdk-c']);

    const fetched = await PublicApi.unwrap(sdk.sources.getSource(created[1].id));
    expect(fetched.source).toEqual(created[1]);
    expect(fetched.trackingPlanId ?? null).toBeNull();

    const { source: updated } = await PublicApi.unwrap(
      sdk.sources.updateSource(created[1].id, { name: 'Source B', enabled: false }),
    );
    expect(updated).toMatchObject({ name: 'Source B', enabled: false });

    const settings = await PublicApi.unwrap(
      sdk.sources.updateSchemaSettingsInSource(created[1].id, {
        track: { allowUnplannedEvents: false },
        forwardingViolationsTo: created[0].id,
      }),
    );
    expect(settings.settings.track?.allowUnplannedEvents).toBe(false);
    expect(settings.settings.forwardingViolationsTo).toBe(created[0].id);
    const listedSettings = await PublicApi.unwrap(sdk.sources.listSchemaSettingsInSource(created[1].id));
    expect(listedSettings.settings).toEqual(settings.settings);
    const badTarget = await failureOf(
      PublicApi.unwrap(
        sdk.sources.updateSchemaSettingsInSource(created[1].id, { forwardingViolationsTo: 'nope' }),
      ),
    );
    expect(badTarget).toMatchObject({ type: 'ValidationFailure', field: 'forwardingViolationsTo' });

    const { status } = await PublicApi.unwrap(sdk.sources.deleteSource(created[2].id));
    expect(status).toBe('SUCCESS');
    const gone = await failureOf(PublicApi.unwrap(sdk.sources.getSource(created[2].id)));
    expect(gone).toEqual({ type: 'NotFound', message: 'Resource not found' });

    const duplicate = await failureOf(
      PublicApi.unwrap(sdk.sources.createSource({ slug: 'sdk-a', enabled: true, metadataId: 'javascript' })),
    );
    expect(duplicate.type).toBe('Conflict');
    const forbidden = await failureOf(
      PublicApi.unwrap(
        readOnly.sources.createSource({ slug: 'sdk-ro', enabled: true, metadataId: 'javascript' }),
      ),
    );
    expect(forbidden.type).toBe('Forbidden');

    // The SDK sends the write-key POST with no body and no Content-Type.
    const { source: withTwoKeys } = await PublicApi.unwrap(
      sdk.sources.createWriteKeyForSource(created[0].id),
    );
    expect(withTwoKeys.writeKeys).toHaveLength(2);
    expect(withTwoKeys.writeKeys[0]).toBe(created[0].writeKeys[0]);
    const [oldKey, newKey] = withTwoKeys.writeKeys;
    const track = (writeKey: string) =>
      fetch(`${instance.baseUrl}/v1/track`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
        },
        body: JSON.stringify({ userId: 'u1', event: 'Key Rotated' }),
      });
    expect((await track(newKey)).status).toBe(200);
    await PublicApi.unwrap(sdk.sources.removeWriteKeyFromSource(created[0].id, oldKey));
    expect((await track(oldKey)).status).toBe(401);
    expect((await track(newKey)).status).toBe(200);
    const last = await failureOf(
      PublicApi.unwrap(sdk.sources.removeWriteKeyFromSource(created[0].id, newKey)),
    );
    expect(last.type).toBe('ValidationFailure');
    const notHeld = await failureOf(
      PublicApi.unwrap(sdk.sources.removeWriteKeyFromSource(created[0].id, oldKey)),
    );
    expect(notHeld.type).toBe('NotFound');
  });

  it('creates destinations and their subscriptions, lists them over pages, updates and deletes them', async () => {
    const { source } = await PublicApi.unwrap(
      sdk.sources.createSource({ slug: 'sdk-dest', enabled: true, metadataId: 'javascript' }),
    );
    const destinations = [];
    for (const name of ['Hook One', 'Hook Two', 'Hook Three']) {
      const { destination } = await PublicApi.unwrap(
        sdk.destinations.createDestination({
          sourceId: source.id,
          metadataId: 'actions-webhook',
          name,
          enabled: false,
          settings: {},
        }),
      );
      destinations.push(destination);
    }
    expect(new Set(destinations.map((destination) => destination.id)).size).toBe(3);
    expect(destinations[0]).toMatchObject({ name: 'Hook One', enabled: false, sourceId: source.id });

    const firstPage = await PublicApi.unwrap(sdk.destinations.listDestinations({ count: 2 }));
    const secondPage = await PublicApi.unwrap(
      sdk.destinations.listDestinations({ count: 2, cursor: firstPage.pagination.next ?? undefined }),
    );
    expect(
      [...firstPage.destinations, ...secondPage.destinations].map((destination) => destination.name),
    ).toEqual(['Hook One', 'Hook Two', 'Hook Three']);
    expect(secondPage.pagination.next).toBeUndefined();
    const connected = await PublicApi.unwrap(
      sdk.sources.listConnectedDestinationsFromSource(source.id, { count: 10 }),
    );
    expect(connected.destinations).toHaveLength(3);

    const { destination: renamed } = await PublicApi.unwrap(
      sdk.destinations.updateDestination(destinations[1].id, { name: 'Hook 2', enabled: true }),
    );
    expect(renamed).toMatchObject({ name: 'Hook 2', enabled: true });
    expect((await PublicApi.unwrap(sdk.destinations.getDestination(destinations[1].id))).destination).toEqual(
      renamed,
    );

    const subscriptions = [];
    for (const url of [
      'https://one.example/hook',
      'https://two.example/hook',
      'https://three.example/hook',
    ]) {
      const { destinationSubscription } = await PublicApi.unwrap(
        sdk.destinations.createDestinationSubscription(destinations[0].id, {
          name: `Send to ${url}`,
          actionId: 'send',
          trigger: 'type = "track"',
          enabled: true,
          settings: { url, method: 'POST' },
        }),
      );
      subscriptions.push(destinationSubscription);
    }
    const subscriptionPage = await PublicApi.unwrap(
      sdk.destinations.listSubscriptionsFromDestination(destinations[0].id, { count: 2 }),
    );
    expect(subscriptionPage.subscriptions).toHaveLength(2);
    expect(subscriptionPage.pagination?.next).toBeDefined();
    const { subscription: updated } = await PublicApi.unwrap(
      sdk.destinations.updateSubscriptionForDestination(destinations[0].id, subscriptions[1].id, {
        input: { name: 'Second', enabled: false },
      }),
    );
    expect(updated).toMatchObject({ id: subscriptions[1].id, name: 'Second', enabled: false });
    const { subscription } = await PublicApi.unwrap(
      sdk.destinations.getSubscriptionFromDestination(destinations[0].id, subscriptions[1].id),
    );
    expect(subscription).toEqual(updated);
    await PublicApi.unwrap(
      sdk.destinations.removeSubscriptionFromDestination(destinations[0].id, subscriptions[0].id),
    );
    const missing = await failureOf(
      PublicApi.unwrap(
        sdk.destinations.getSubscriptionFromDestination(destinations[0].id, subscriptions[0].id),
      ),
    );
    expect(missing.type).toBe('NotFound');
    const badMapping = await failureOf(
      PublicApi.unwrap(
        sdk.destinations.createDestinationSubscription(destinations[0].id, {
          name: 'No URL',
          actionId: 'send',
          trigger: 'type = "track"',
          enabled: true,
          settings: { method: 'POST' },
        }),
      ),
    );
    expect(badMapping.type).toBe('ValidationFailure');
    expect(badMapping.message).toMatch(/url/);

    expect((await PublicApi.unwrap(sdk.destinations.deleteDestination(destinations[2].id))).status).toBe(
      'SUCCESS',
    );
    expect(
      (await failureOf(PublicApi.unwrap(sdk.destinations.getDestination(destinations[2].id)))).type,
    ).toBe('NotFound');
    const unknownType = await failureOf(
      PublicApi.unwrap(
        sdk.destinations.createDestination({
          sourceId: source.id,
          metadataId: 'nope',
          enabled: false,
          settings: {},
        }),
      ),
    );
    expect(unknownType).toMatchObject({ type: 'ValidationFailure', field: 'metadataId' });
  });

  it('creates tracking plans, replaces, updates, lists and removes rules, connects and disconnects sources', async () => {
    const { source } = await PublicApi.unwrap(
      sdk.sources.createSource({ slug: 'sdk-plan', enabled: true, metadataId: 'javascript' }),
    );
    const plans = [];
    for (const name of ['Plan One', 'Plan Two', 'Plan Three']) {
      const { trackingPlan } = await PublicApi.unwrap(
        sdk.trackingPlans.createTrackingPlan({ name, type: sdkEnum('LIVE'), description: `${name} rules` }),
      );
      plans.push(trackingPlan);
    }
    const listed = await PublicApi.unwrap(sdk.trackingPlans.listTrackingPlans({ count: 2 }));
    const rest = await PublicApi.unwrap(
      sdk.trackingPlans.listTrackingPlans({ count: 2, cursor: listed.pagination.next ?? undefined }),
    );
    expect([...listed.trackingPlans, ...rest.trackingPlans].map((plan) => plan.name)).toEqual([
      'Plan One',
      'Plan Two',
      'Plan Three',
    ]);
    const plan = plans[0];
    expect(plan).toMatchObject({ type: 'LIVE', description: 'Plan One rules' });

    await PublicApi.unwrap(sdk.trackingPlans.updateTrackingPlan(plan.id, { name: 'Main Plan' }));
    expect((await PublicApi.unwrap(sdk.trackingPlans.getTrackingPlan(plan.id))).trackingPlan.name).toBe(
      'Main Plan',
    );

    const schema = { type: 'object', properties: { properties: { type: 'object' } } };
    await PublicApi.unwrap(
      sdk.trackingPlans.replaceRulesInTrackingPlan(plan.id, {
        rules: [
          { type: sdkEnum('TRACK'), key: 'Order Completed', jsonSchema: schema, version: 1 },
          { type: sdkEnum('TRACK'), key: 'Signed Up', jsonSchema: schema, version: 1 },
          { type: sdkEnum('COMMON'), jsonSchema: schema, version: 1 },
        ],
      }),
    );
    await PublicApi.unwrap(
      sdk.trackingPlans.updateRulesInTrackingPlan(plan.id, {
        rules: [
          {
            type: sdkEnum('TRACK'),
            key: 'Signed Up',
            jsonSchema: { ...schema, description: 'v2' },
            version: 1,
          },
        ],
      }),
    );
    const rulesPage = await PublicApi.unwrap(
      sdk.trackingPlans.listRulesFromTrackingPlan(plan.id, { count: 2 }),
    );
    expect(rulesPage.rules).toHaveLength(2);
    expect(rulesPage.pagination.totalEntries).toBe(3);
    await PublicApi.unwrap(
      sdk.trackingPlans.removeRulesFromTrackingPlan(plan.id, [
        { type: sdkEnum('TRACK'), key: 'Order Completed', version: 1 },
      ]),
    );
    const rules = (
      await PublicApi.unwrap(sdk.trackingPlans.listRulesFromTrackingPlan(plan.id, { count: 10 }))
    ).rules;
    expect(rules.map((rule) => `${rule.type}:${rule.key ?? ''}`).sort()).toEqual([
      'COMMON:',
      'TRACK:Signed Up',
    ]);
    expect(rules.find((rule) => rule.key === 'Signed Up')?.jsonSchema).toEqual({
      ...schema,
      description: 'v2',
    });

    await PublicApi.unwrap(sdk.trackingPlans.addSourceToTrackingPlan(plan.id, { sourceId: source.id }));
    expect((await PublicApi.unwrap(sdk.sources.getSource(source.id))).trackingPlanId).toBe(plan.id);
    const connected = await PublicApi.unwrap(
      sdk.trackingPlans.listSourcesFromTrackingPlan(plan.id, { count: 10 }),
    );
    expect(connected.sources.map((connectedSource) => connectedSource.id)).toEqual([source.id]);
    const taken = await failureOf(
      PublicApi.unwrap(sdk.trackingPlans.addSourceToTrackingPlan(plans[1].id, { sourceId: source.id })),
    );
    expect(taken.type).toBe('Conflict');
    await PublicApi.unwrap(sdk.trackingPlans.removeSourceFromTrackingPlan(plan.id, source.id));
    expect((await PublicApi.unwrap(sdk.sources.getSource(source.id))).trackingPlanId ?? null).toBeNull();

    await PublicApi.unwrap(sdk.trackingPlans.deleteTrackingPlan(plans[2].id));
    expect((await failureOf(PublicApi.unwrap(sdk.trackingPlans.getTrackingPlan(plans[2].id)))).type).toBe(
      'NotFound',
    );
    const badType = await failureOf(
      PublicApi.unwrap(sdk.trackingPlans.createTrackingPlan({ name: 'X', type: sdkEnum('WRONG') })),
    );
    expect(badType).toMatchObject({ type: 'ValidationFailure', field: 'type' });
  });

  it('creates, lists and deletes labels, and labels sources with them', async () => {
    const { label } = await PublicApi.unwrap(
      sdk.labels.createLabel({ label: { key: 'env', value: 'prod', description: 'Production' } }),
    );
    expect(label).toEqual({ key: 'env', value: 'prod', description: 'Production' });
    await PublicApi.unwrap(sdk.labels.createLabel({ label: { key: 'team', value: 'web' } }));
    expect((await PublicApi.unwrap(sdk.labels.listLabels())).labels).toHaveLength(2);
    const duplicate = await failureOf(
      PublicApi.unwrap(sdk.labels.createLabel({ label: { key: 'env', value: 'prod' } })),
    );
    expect(duplicate.type).toBe('Conflict');

    const { source } = await PublicApi.unwrap(
      sdk.sources.createSource({ slug: 'sdk-labelled', enabled: true, metadataId: 'javascript' }),
    );
    const added = await PublicApi.unwrap(
      sdk.sources.addLabelsToSource(source.id, { labels: [{ key: 'env', value: 'prod' }] }),
    );
    expect(added.labels).toEqual([{ key: 'env', value: 'prod', description: 'Production' }]);
    const replaced = await PublicApi.unwrap(
      sdk.sources.replaceLabelsInSource(source.id, {
        labels: [
          { key: 'team', value: 'web' },
          { key: 'env', value: 'prod' },
        ],
      }),
    );
    expect(replaced.labels.map((entry) => `${entry.key}:${entry.value}`)).toEqual(['team:web', 'env:prod']);
    const unknown = await failureOf(
      PublicApi.unwrap(
        sdk.sources.addLabelsToSource(source.id, { labels: [{ key: 'env', value: 'staging' }] }),
      ),
    );
    expect(unknown).toMatchObject({ type: 'ValidationFailure', field: 'labels' });

    await PublicApi.unwrap(sdk.labels.deleteLabel('env', 'prod'));
    expect((await PublicApi.unwrap(sdk.sources.getSource(source.id))).source.labels).toEqual([
      { key: 'team', value: 'web' },
    ]);
    expect((await failureOf(PublicApi.unwrap(sdk.labels.deleteLabel('env', 'prod')))).type).toBe('NotFound');
  });

  it('creates regulations, lists them over pages and by filter, gets, cancels them, and lists suppressions', async () => {
    // Without the router's runner a deletion stays INITIALIZED, so that it can be cancelled.
    await instance.app.get(RegulationRunner).beforeApplicationShutdown();
    const regulations = sdk.deletionAndSuppresion;
    const { source } = await PublicApi.unwrap(
      sdk.sources.createSource({ slug: 'sdk-regulated', enabled: true, metadataId: 'javascript' }),
    );
    const create = (regulationType: string, subjectIds: string[]) =>
      PublicApi.unwrap(
        regulations.createWorkspaceRegulation({
          regulationType: sdkEnum(regulationType),
          subjectType: sdkEnum('USER_ID'),
          subjectIds,
        }),
      );
    const deletion = await create('DELETE_ONLY', ['u-delete']);
    expect(deletion.regulateId).toMatch(/^[0-9A-Za-z]{27}$/);
    const suppression = await create('SUPPRESS_ONLY', ['u-suppressed', 'u-suppressed-2']);
    const internal = await create('DELETE_INTERNAL', ['u-internal']);
    const scoped = await PublicApi.unwrap(
      regulations.createSourceRegulation(source.id, {
        regulationType: sdkEnum('SUPPRESS_ONLY'),
        subjectType: sdkEnum('USER_ID'),
        subjectIds: ['u-source-only'],
      }),
    );

    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await PublicApi.unwrap(
        regulations.listWorkspaceRegulations({ count: 3, ...(cursor && { cursor }) }),
      );
      ids.push(...page.regulations.map((entry) => entry.id));
      expect(page.pagination.totalEntries).toBe(4);
      cursor = page.pagination.next ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(pages).toBe(2);
    expect(ids).toEqual([
      deletion.regulateId,
      suppression.regulateId,
      internal.regulateId,
      scoped.regulateId,
    ]);

    const suppressions = await PublicApi.unwrap(
      regulations.listWorkspaceRegulations({ count: 10 }, undefined, [sdkEnum('SUPPRESS_ONLY')]),
    );
    expect(suppressions.regulations.map((entry) => entry.id)).toEqual([
      suppression.regulateId,
      scoped.regulateId,
    ]);
    expect(suppressions.regulations[0]).toMatchObject({
      subjectType: 'USER_ID',
      subjects: ['u-suppressed', 'u-suppressed-2'],
      regulationType: 'SUPPRESS_ONLY',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const initialized = await PublicApi.unwrap(
      regulations.listWorkspaceRegulations({ count: 10 }, sdkEnum('INITIALIZED')),
    );
    expect(initialized.regulations.map((entry) => entry.id)).toEqual([
      deletion.regulateId,
      internal.regulateId,
    ]);
    const ofSource = await PublicApi.unwrap(regulations.listRegulationsFromSource(source.id, { count: 10 }));
    expect(ofSource.regulations.map((entry) => entry.id)).toEqual([scoped.regulateId]);

    const { regulation } = await PublicApi.unwrap(regulations.getRegulation(deletion.regulateId));
    expect(regulation).toMatchObject({
      id: deletion.regulateId,
      workspaceId: access.workspace.id,
      overallStatus: 'INITIALIZED',
      // The sources in scope are taken when work starts.
      streamStatus: [],
    });
    expect(regulation.finishedAt).toBeUndefined();

    const { status } = await PublicApi.unwrap(regulations.deleteRegulation(deletion.regulateId));
    expect(status).toBe('SUCCESS');
    expect(await failureOf(PublicApi.unwrap(regulations.getRegulation(deletion.regulateId)))).toEqual({
      type: 'NotFound',
      message: 'Resource not found',
    });

    // Only the workspace-wide suppressions: the source's own are not in Segment's model.
    const suppressed = await PublicApi.unwrap(regulations.listSuppressions({ count: 1 }));
    expect(suppressed.suppressed).toEqual([{ subjectType: 'userId', subjectIds: ['u-suppressed'] }]);
    expect(suppressed.pagination).toMatchObject({ totalEntries: 2, next: expect.any(String) });
    const rest = await PublicApi.unwrap(
      regulations.listSuppressions({ count: 1, cursor: suppressed.pagination.next ?? undefined }),
    );
    expect(rest.suppressed).toEqual([{ subjectType: 'userId', subjectIds: ['u-suppressed-2'] }]);
  });

  it('refuses bad regulations with the errors the SDK rethrows, and stores nothing for them', async () => {
    const regulations = sdk.deletionAndSuppresion;
    const before = (await PublicApi.unwrap(regulations.listWorkspaceRegulations({ count: 100 }))).pagination
      .totalEntries;
    const refusal = (regulationType: string, subjectType: string, subjectIds: unknown) =>
      failureOf(
        PublicApi.unwrap(
          regulations.createWorkspaceRegulation({
            regulationType: sdkEnum(regulationType),
            subjectType: sdkEnum(subjectType),
            subjectIds: subjectIds as string[],
          }),
        ),
      );
    expect(await refusal('Suppress', 'USER_ID', ['u'])).toMatchObject({
      type: 'ValidationFailure',
      field: 'regulationType',
    });
    expect(await refusal('DELETE_ARCHIVE_ONLY', 'USER_ID', ['u'])).toMatchObject({
      type: 'ValidationFailure',
      field: 'regulationType',
    });
    expect(await refusal('SUPPRESS_ONLY', 'OBJECT_ID', ['u'])).toMatchObject({
      type: 'ValidationFailure',
      field: 'subjectType',
    });
    expect(await refusal('DELETE_ONLY', 'ANONYMOUS_ID', ['u'])).toMatchObject({
      type: 'ValidationFailure',
      field: 'subjectType',
    });
    // The SDK serializes the ids as strings; ids of other JSON types are sent raw (public-api-go-requests).
    for (const subjectIds of [[], ['ok', ''], ['x'.repeat(1_025)]]) {
      expect(await refusal('SUPPRESS_ONLY', 'USER_ID', subjectIds)).toMatchObject({
        type: 'ValidationFailure',
        field: 'subjectIds',
      });
    }
    expect(
      await failureOf(
        PublicApi.unwrap(
          readOnly.deletionAndSuppresion.createWorkspaceRegulation({
            regulationType: sdkEnum('SUPPRESS_ONLY'),
            subjectType: sdkEnum('USER_ID'),
            subjectIds: ['u'],
          }),
        ),
      ),
    ).toMatchObject({ type: 'Forbidden' });
    expect(
      await failureOf(
        PublicApi.unwrap(
          regulations.createSourceRegulation('no-such-source', {
            regulationType: sdkEnum('SUPPRESS_ONLY'),
            subjectType: sdkEnum('USER_ID'),
            subjectIds: ['u'],
          }),
        ),
      ),
    ).toEqual({ type: 'NotFound', message: 'Resource not found' });
    expect(
      (await PublicApi.unwrap(regulations.listWorkspaceRegulations({ count: 100 }))).pagination.totalEntries,
    ).toBe(before);

    expect(await failureOf(PublicApi.unwrap(regulations.getRegulation('no-such-regulation')))).toMatchObject({
      type: 'NotFound',
    });
    expect(
      await failureOf(PublicApi.unwrap(regulations.listWorkspaceRegulations({ count: 10 }, sdkEnum('DONE')))),
    ).toMatchObject({ type: 'ValidationFailure', field: 'status' });
    expect(
      await failureOf(
        PublicApi.unwrap(regulations.listWorkspaceRegulations({ count: 10 }, undefined, [sdkEnum('Delete')])),
      ),
    ).toMatchObject({ type: 'ValidationFailure', field: 'regulationTypes' });
    expect(
      await failureOf(PublicApi.unwrap(regulations.listWorkspaceRegulations({ count: 0 }))),
    ).toMatchObject({ type: 'ValidationFailure', field: 'pagination.count' });

    // A suppression is final as soon as it is recorded: it can no longer be cancelled.
    const { regulateId } = await PublicApi.unwrap(
      regulations.createWorkspaceRegulation({
        regulationType: sdkEnum('SUPPRESS_ONLY'),
        subjectType: sdkEnum('USER_ID'),
        subjectIds: ['u-final'],
      }),
    );
    const refused = await failureOf(PublicApi.unwrap(regulations.deleteRegulation(regulateId)));
    expect(refused).toMatchObject({ type: 'ValidationFailure', message: expect.stringMatching(/cancel/) });
    expect(
      await failureOf(PublicApi.unwrap(readOnly.deletionAndSuppresion.deleteRegulation(regulateId))),
    ).toMatchObject({
      type: 'Forbidden',
    });
  });

  it('creates, updates, deploys, versions, restores and deletes functions, and runs an insert function instance on a destination', async () => {
    const code = 'async function onTrack(event, settings) {\n  return event;\n}';
    const { function: fn } = await PublicApi.unwrap(
      sdk.functions.createFunction({
        code,
        displayName: 'Renamer',
        resourceType: sdkEnum<PublicApi.CreateFunctionV1Input.ResourceTypeEnum>('INSERT_DESTINATION'),
        settings: [
          {
            name: 'apiKey',
            label: 'API key',
            description: '',
            type: sdkEnum<PublicApi.FunctionSettingV1.TypeEnum>('STRING'),
            required: true,
            sensitive: true,
          },
        ],
      }),
    );
    expect(fn).toMatchObject({ id: expect.stringMatching(/^ifnd_/), displayName: 'Renamer', code });
    const created = { ...fn, id: fn.id! };
    const listed = await PublicApi.unwrap(sdk.functions.listFunctions({ count: 10 }, 'INSERT_DESTINATION'));
    expect(listed.functions.map((fn) => fn.id)).toContain(created.id);

    const changed = `${code}\nasync function onIdentify(event) {\n  return event;\n}`;
    const { function: updated } = await PublicApi.unwrap(
      sdk.functions.updateFunction(created.id, { code: changed }),
    );
    expect(updated.code).toBe(changed);
    await PublicApi.unwrap(sdk.functions.createFunctionDeployment(created.id));
    const versions = await PublicApi.unwrap(sdk.functions.listFunctionVersions(created.id, { count: 10 }));
    expect(versions.versions.length).toBeGreaterThanOrEqual(2);
    const first = await PublicApi.unwrap(sdk.functions.getFunctionVersion(created.id, '1'));
    expect(JSON.stringify(first)).toContain('onTrack');
    await PublicApi.unwrap(sdk.functions.restoreFunctionVersion(created.id, { versionId: '1' }));
    expect((await PublicApi.unwrap(sdk.functions.getFunction(created.id))).function?.code).toBe(code);

    const { source } = await PublicApi.unwrap(
      sdk.sources.createSource({ slug: 'sdk-functions', enabled: true, metadataId: 'javascript' }),
    );
    const { destination } = await PublicApi.unwrap(
      sdk.destinations.createDestination({
        sourceId: source.id,
        metadataId: 'webhooks',
        name: 'Hook',
        enabled: false,
        settings: { url: 'https://hooks.example.com/in' },
      }),
    );
    const { insertFunctionInstance: instance } = (await PublicApi.unwrap(
      sdk.functions.createInsertFunctionInstance({
        functionId: created.id,
        integrationId: destination.id,
        name: 'Renamer on Hook',
        enabled: true,
        settings: { apiKey: 'k-123' },
      }),
    )) as any;
    expect(instance).toMatchObject({ integrationId: destination.id, enabled: true });
    expect(JSON.stringify(instance)).not.toContain('k-123');
    const instances = (await PublicApi.unwrap(
      sdk.functions.listInsertFunctionInstances({ count: 10 }, created.id),
    )) as any;
    expect(instances.instances.map((one: { id: string }) => one.id)).toEqual([instance.id]);
    const { insertFunctionInstance: disabled } = (await PublicApi.unwrap(
      sdk.functions.updateInsertFunctionInstance(instance.id, { enabled: false, settings: {} }),
    )) as any;
    expect(disabled.enabled).toBe(false);

    // In use: refused, as the SDK rethrows it; then deleted once the instance is gone.
    const inUse = await failureOf(PublicApi.unwrap(sdk.functions.deleteFunction(created.id)));
    expect(inUse.message).toMatch(/instance|in use|used/i);
    await PublicApi.unwrap(sdk.functions.deleteInsertFunctionInstance(instance.id));
    await PublicApi.unwrap(sdk.functions.deleteFunction(created.id));
    expect(await failureOf(PublicApi.unwrap(sdk.functions.getFunction(created.id)))).toMatchObject({
      type: 'NotFound',
    });
    // A read-only token reads functions but may not create one.
    const refused = await failureOf(
      PublicApi.unwrap(
        readOnly.functions.createFunction({
          code,
          displayName: 'Nope',
          resourceType: sdkEnum<PublicApi.CreateFunctionV1Input.ResourceTypeEnum>('DESTINATION'),
        }),
      ),
    );
    expect(refused.type).toMatch(/Forbidden|Unauthorized/i);
  });
});
