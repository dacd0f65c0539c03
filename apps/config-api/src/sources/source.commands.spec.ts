// The source use cases without HTTP, on a real SQLite event store and read model.
import { ConfigApiError } from '@tributary/config-api-access';
import { DomainError } from '@tributary/config-domain';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { SecretBox } from '@tributary/auth';
import { randomBytes } from 'node:crypto';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { DestinationConfigMapper } from '../destinations/destination-config';
import { SourceCommands } from './source.commands';

describe('SourceCommands', () => {
  let harness: CommandHarness;
  let sources: SourceCommands;

  const source = (sourceSlug: string) => harness.readModel.source('ws', sourceSlug);

  beforeEach(async () => {
    harness = await startCommandHarness({ sources: 3 });
    sources = new SourceCommands(
      harness.readModel,
      harness.commands,
      harness.quotas,
      new DestinationCatalog(harness.readModel),
      new DestinationConfigMapper(new SecretBox(randomBytes(32))),
    );
    await harness.seedWorkspace('ws');
  });

  afterEach(() => harness.stop());

  it('creates a source from a full name or a bare slug, with a fresh id and write key', async () => {
    expect(
      await sources.create(
        'ws',
        { name: 'workspaces/ws/sources/web', catalog_name: 'catalog/sources/javascript' },
        metadata,
      ),
    ).toBe('web');
    expect(
      await sources.create('ws', { name: 'server', catalog_name: 'node', display_name: 'API' }, metadata),
    ).toBe('server');

    expect(source('web')?.source).toMatchObject({
      catalogName: 'catalog/sources/javascript',
      displayName: 'web',
      createTime: metadata.time,
    });
    expect(source('server')?.source).toMatchObject({
      catalogName: 'catalog/sources/node',
      displayName: 'API',
    });
    expect(source('web')?.source.writeKey).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(source('web')?.source.writeKey).not.toBe(source('server')?.source.writeKey);
    expect(source('web')?.source.sourceId).not.toBe(source('server')?.source.sourceId);
  });

  it('refuses a name under another workspace, an unknown catalog entry, a duplicate and an unknown workspace', async () => {
    await sources.create('ws', { name: 'web', catalog_name: 'javascript' }, metadata);

    await expect(
      sources.create('ws', { name: 'workspaces/other/sources/web', catalog_name: 'javascript' }, metadata),
    ).rejects.toEqual(
      ConfigApiError.invalidArgument(
        'source.name must be workspaces/ws/sources/<slug>, got "workspaces/other/sources/web"',
      ),
    );
    await expect(
      sources.create('ws', { name: 'x', catalog_name: 'no-such-source' }, metadata),
    ).rejects.toMatchObject({
      kind: 'invalid_argument',
    });
    await expect(sources.create('ws', { name: 'web', catalog_name: 'node' }, metadata)).rejects.toEqual(
      new DomainError('already_exists', 'workspaces/ws/sources/web already exists'),
    );
    await expect(sources.create('nope', { name: 'web', catalog_name: 'node' }, metadata)).rejects.toEqual(
      new DomainError('not_found', 'workspaces/nope not found'),
    );
    expect(harness.readModel.listSources('ws').map((view) => view.source.catalogName)).toEqual([
      'catalog/sources/javascript',
    ]);
  });

  it('refuses a source past the workspace quota with 429, code 8', async () => {
    for (const slug of ['a', 'b', 'c'])
      await sources.create('ws', { name: slug, catalog_name: 'node' }, metadata);

    await expect(sources.create('ws', { name: 'd', catalog_name: 'node' }, metadata)).rejects.toMatchObject({
      status: 429,
      code: 8,
    });
  });

  it('sets allowed origins, and empties them when the mask names the field and the body leaves it out', async () => {
    await sources.create('ws', { name: 'web', catalog_name: 'javascript' }, metadata);

    await sources.update(
      source('web')!.source,
      { source: { allowed_origins: ['https://shop.example'] } },
      metadata,
    );
    expect(source('web')?.source.allowedOrigins).toEqual(['https://shop.example']);

    await sources.update(
      source('web')!.source,
      { source: {}, update_mask: { paths: ['source.allowed_origins'] } },
      metadata,
    );
    expect(source('web')?.source.allowedOrigins).toEqual([]);
  });

  it('forwards a schema config only to another source of the workspace', async () => {
    await sources.create('ws', { name: 'web', catalog_name: 'javascript' }, metadata);
    await sources.create('ws', { name: 'quarantine', catalog_name: 'javascript' }, metadata);

    await sources.updateSchemaConfig(
      'ws',
      'web',
      { schema_config: { forwarding_violations_to: 'quarantine', allow_unplanned_track_events: false } },
      metadata,
    );
    expect(source('web')?.schemaConfig).toMatchObject({
      forwarding_violations_to: 'quarantine',
      allow_unplanned_track_events: false,
      allow_unplanned_identify_traits: true,
    });

    await expect(
      sources.updateSchemaConfig(
        'ws',
        'web',
        { schema_config: { forwarding_blocked_events_to: 'gone' } },
        metadata,
      ),
    ).rejects.toEqual(
      new DomainError(
        'invalid_argument',
        'schema_config.forwarding_blocked_events_to: workspaces/ws/sources/gone does not exist',
      ),
    );
  });

  it('deletes a source', async () => {
    await sources.create('ws', { name: 'web', catalog_name: 'javascript' }, metadata);

    await sources.delete('ws', 'web', metadata);

    expect(source('web')).toBeUndefined();
  });
});
