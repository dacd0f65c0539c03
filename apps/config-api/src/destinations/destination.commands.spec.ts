// The destination use cases without HTTP, on a real SQLite event store and read model.
import { ConfigApiError } from '@tributary/config-api-access';
import { SecretBox } from '@tributary/auth';
import type { SourceRecord } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import { randomBytes } from 'node:crypto';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { DestinationConfigMapper } from './destination-config';
import { DestinationCommands } from './destination.commands';

describe('DestinationCommands', () => {
  let harness: CommandHarness;
  let secretBox: SecretBox;
  let destinations: DestinationCommands;
  let source: SourceRecord;

  const destination = (slug: string) => harness.readModel.destination(source.sourceId, slug)?.destination;
  const webhook = (name: string, catalogName?: string) => ({
    name,
    ...(catalogName && { catalog_name: catalogName }),
    config: [
      { name: 'url', value: 'https://hooks.example/in' },
      { name: 'shared_secret', value: 's3cret' },
    ],
  });

  beforeEach(async () => {
    harness = await startCommandHarness({ destinations: 2 });
    secretBox = new SecretBox(randomBytes(32));
    destinations = new DestinationCommands(
      harness.commands,
      new DestinationConfigMapper(secretBox),
      harness.quotas,
    );
    await harness.seedWorkspace('ws');
    await harness.seedSource('ws', 'web');
    source = harness.readModel.source('ws', 'web')!.source;
  });

  afterEach(() => harness.stop());

  it('creates a destination named by its catalog slug, disabled and in cloud mode, its secret encrypted', async () => {
    expect(
      await destinations.create(source, webhook('workspaces/ws/sources/web/destinations/webhooks'), metadata),
    ).toBe('webhooks');

    expect(destination('webhooks')).toMatchObject({
      catalogSlug: 'webhooks',
      enabled: false,
      connectionMode: 'CLOUD',
      config: { url: 'https://hooks.example/in' },
    });
    const stored = destination('webhooks')!.config.shared_secret;
    expect(SecretBox.isEncrypted(stored)).toBe(true);
    expect(secretBox.decrypt(stored as string)).toBe('s3cret');
  });

  it('names a second destination of one kind by catalog_name, and refuses an entry not in the catalog', async () => {
    await destinations.create(source, webhook('webhooks'), metadata);
    expect(
      await destinations.create(source, webhook('audit-hook', 'catalog/destinations/webhooks'), metadata),
    ).toBe('audit-hook');
    expect(destination('audit-hook')?.catalogSlug).toBe('webhooks');

    const refusal = await destinations
      .create(source, { name: 'no-such-destination' }, metadata)
      .catch((e) => e);
    expect(refusal).toBeInstanceOf(ConfigApiError);
    expect(refusal).toMatchObject({ status: 400, code: 3 });
  });

  it('refuses a destination past the workspace quota with 429, code 8', async () => {
    await destinations.create(source, webhook('webhooks'), metadata);
    await destinations.create(source, webhook('second', 'webhooks'), metadata);

    await expect(destinations.create(source, webhook('third', 'webhooks'), metadata)).rejects.toMatchObject({
      status: 429,
      code: 8,
    });
  });

  it('updates what the mask names, and keeps a secret sent back as the mask', async () => {
    await destinations.create(source, webhook('webhooks'), metadata);
    const before = destination('webhooks')!.config.shared_secret;

    await destinations.update(
      destination('webhooks')!,
      {
        destination: {
          enabled: true,
          connection_mode: 'DEVICE',
          config: [
            { name: 'url', value: 'https://hooks.example/v2' },
            { name: 'shared_secret', value: MASKED_SECRET },
          ],
        },
        update_mask: { paths: ['destination.enabled', 'destination.config'] },
      },
      metadata,
    );

    expect(destination('webhooks')).toMatchObject({
      enabled: true,
      connectionMode: 'CLOUD',
      config: { url: 'https://hooks.example/v2', shared_secret: before },
    });
  });

  it('deletes a destination', async () => {
    await destinations.create(source, webhook('webhooks'), metadata);

    await destinations.delete(destination('webhooks')!, metadata);

    expect(destination('webhooks')).toBeUndefined();
  });
});
