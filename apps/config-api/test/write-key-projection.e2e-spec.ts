// The config read model the tracking API authenticates write keys with, driven through the Config
// API: a source's write key resolves as soon as its create returns, and stops when it is deleted.
import { ConfigChange, ConfigReadModel } from '@tributary/config-projections';
import { startTributary, TributaryTestInstance } from '../../../test/support/tributary-test-instance';
import { ConfigApiClient, createWorkspaceWithTokens } from '../../../test/support/config-api.client';
import { WRITE_KEY } from './support/config-api-e2e.kit';

describe('write keys in the config read model', () => {
  let instance: TributaryTestInstance;
  let writer: ConfigApiClient;
  let readModel: ConfigReadModel;
  let changes: ConfigChange[];
  let stopListening: () => void;
  const ws = 'keys';

  beforeAll(async () => {
    instance = await startTributary();
    ({ writer } = await createWorkspaceWithTokens(new ConfigApiClient(instance), ws));
    readModel = instance.app.get(ConfigReadModel);
  });

  beforeEach(() => {
    changes = [];
    stopListening = readModel.onChange((change) => changes.push(change));
  });

  afterEach(() => stopListening());

  afterAll(async () => {
    await instance?.stop({ removeData: true });
  });

  it("resolves a new source's write key to its workspace and source right after the create returns", async () => {
    const created = await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/web`, catalog_name: 'catalog/sources/javascript' },
    });
    const writeKey = created.write_keys[0];
    expect(writeKey).toMatch(WRITE_KEY);
    // No waiting: the Config API answers only once the read model holds the change.
    const resolved = readModel.sourceByWriteKey(writeKey);
    expect(resolved).toMatchObject({ workspaceSlug: ws, sourceSlug: 'web', writeKey, sourceId: created.id });
    expect(changes).toEqual([{ kind: 'source-upserted', source: resolved }]);
  });

  it('tells listeners about destinations of the source', async () => {
    await writer.ok('POST', `workspaces/${ws}/sources/web/destinations`, {
      destination: {
        name: `workspaces/${ws}/sources/web/destinations/actions-mixpanel`,
        config: [
          { name: 'projectToken', value: 't' },
          { name: 'apiSecret', value: 's' },
        ],
      },
    });
    await writer.ok('PATCH', `workspaces/${ws}/sources/web/destinations/actions-mixpanel`, {
      destination: { enabled: true },
      update_mask: { paths: ['destination.enabled'] },
    });
    expect(changes.map((change) => change.kind)).toEqual(['destination-upserted', 'destination-upserted']);
    const last = changes[1] as Extract<ConfigChange, { kind: 'destination-upserted' }>;
    expect(last.view.destination).toMatchObject({
      sourceSlug: 'web',
      destinationSlug: 'actions-mixpanel',
      enabled: true,
    });
  });

  it('keeps write keys of different sources apart', async () => {
    const other = await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/server`, catalog_name: 'catalog/sources/node' },
    });
    const web = await writer.ok('GET', `workspaces/${ws}/sources/web`);
    expect(other.write_keys[0]).not.toBe(web.write_keys[0]);
    expect(readModel.sourceByWriteKey(other.write_keys[0])?.sourceSlug).toBe('server');
    expect(readModel.sourceByWriteKey(web.write_keys[0])?.sourceSlug).toBe('web');
    expect(readModel.sourceByWriteKey('0'.repeat(32))).toBeUndefined();
  });

  it('stops resolving the write key once the source is deleted, and says so', async () => {
    const web = await writer.ok('GET', `workspaces/${ws}/sources/web`);
    const writeKey = web.write_keys[0];
    expect(await writer.ok('DELETE', `workspaces/${ws}/sources/web`)).toEqual({});
    expect(readModel.sourceByWriteKey(writeKey)).toBeUndefined();
    expect(changes.map((change) => change.kind)).toEqual(['destination-deleted', 'source-deleted']);
    expect(changes[1]).toMatchObject({ kind: 'source-deleted', source: { writeKey, sourceSlug: 'web' } });

    // A source created again under the same slug gets a new key; the old one stays dead.
    const again = await writer.ok('POST', `workspaces/${ws}/sources`, {
      source: { name: `workspaces/${ws}/sources/web`, catalog_name: 'catalog/sources/javascript' },
    });
    expect(again.write_keys[0]).not.toBe(writeKey);
    expect(readModel.sourceByWriteKey(writeKey)).toBeUndefined();
    expect(readModel.sourceByWriteKey(again.write_keys[0])?.sourceSlug).toBe('web');
    // Its destinations went with the old source.
    expect((await writer.get(`workspaces/${ws}/sources/web/destinations`)).body.destinations).toEqual([]);
  });
});
