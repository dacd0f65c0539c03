// The destination use cases without HTTP, on a real SQLite event store and read model.
import { ConfigApiError } from '@tributary/config-api-access';
import { SecretBox, secretPlace } from '@tributary/auth';
import { destinationSecretsOwner, type SourceRecord } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import { randomBytes } from 'node:crypto';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { DestinationConfigMapper } from './destination-config';
import { DestinationCommands } from './destination.commands';
import { DestinationCatalog } from './destination-catalog';

describe('DestinationCommands', () => {
  let harness: CommandHarness;
  let secretBox: SecretBox;
  let destinations: DestinationCommands;
  let source: SourceRecord;

  const destination = (slug: string) => harness.readModel.destination(source.sourceId, slug)?.destination;
  /** A stored secret of the destination, decrypted where it is kept (its destination and setting). */
  const opened = (slug: string, key: string, value: unknown) =>
    secretBox.decrypt(value as string, secretPlace(destinationSecretsOwner(destination(slug)!), key));
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
      new DestinationCatalog(harness.readModel),
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
    expect(opened('webhooks', 'shared_secret', stored)).toBe('s3cret');
    // Bound to where it is kept: copied into another destination or setting, it does not open.
    expect(() =>
      secretBox.decrypt(stored as string, secretPlace('destinations/other/webhooks', 'shared_secret')),
    ).toThrow();
    expect(() => opened('webhooks', 'url', stored)).toThrow();
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

  describe('stored secrets stay with their target', () => {
    const update = (config: { name: string; value: unknown }[]) =>
      destinations.update(
        destination('webhooks')!,
        { destination: { config }, update_mask: { paths: ['destination.config'] } },
        metadata,
      );

    beforeEach(async () => {
      await destinations.create(
        source,
        {
          name: 'webhooks',
          config: [
            { name: 'url', value: 'https://alice:pa55@hooks.example/in' },
            { name: 'headers', value: { authorization: 'Bearer vendor-key' } },
            { name: 'shared_secret', value: 's3cret' },
          ],
        },
        metadata,
      );
    });

    it.each([
      [
        'masked URL credentials at another host',
        [{ name: 'url', value: `https://${MASKED_SECRET}:${MASKED_SECRET}@attacker.example/in` }],
      ],
      [
        'a new host, the headers and secret left stored',
        [{ name: 'url', value: 'https://attacker.example/in' }],
      ],
      [
        'a new host with the headers sent back masked',
        [
          { name: 'url', value: 'https://attacker.example/in' },
          { name: 'headers', value: { authorization: MASKED_SECRET } },
          { name: 'shared_secret', value: 'new' },
        ],
      ],
      [
        'another scheme or port of the same host',
        [{ name: 'url', value: `http://${MASKED_SECRET}:${MASKED_SECRET}@hooks.example:8443/in` }],
      ],
    ])('refuses %s with 400, code 3, naming what to re-enter', async (_, config) => {
      const before = destination('webhooks')!.config;
      const refusal = await update(config).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(ConfigApiError);
      expect(refusal).toMatchObject({ status: 400, code: 3 });
      expect((refusal as Error).message).toMatch(/re-enter .*(headers|shared_secret|url)/);
      expect(destination('webhooks')!.config).toEqual(before);
    });

    it('keeps masked secrets on the same target, and takes a new target with every secret re-entered', async () => {
      await update([
        { name: 'url', value: `https://${MASKED_SECRET}:${MASKED_SECRET}@hooks.example/v2` },
        { name: 'headers', value: { authorization: MASKED_SECRET } },
      ]);
      const kept = destination('webhooks')!.config;
      expect(opened('webhooks', 'url', kept.url)).toBe('https://alice:pa55@hooks.example/v2');
      expect(opened('webhooks', 'headers', (kept.headers as Record<string, string>).authorization)).toBe(
        'Bearer vendor-key',
      );

      await update([
        { name: 'url', value: 'https://elsewhere.example/in' },
        { name: 'headers', value: { authorization: 'Bearer other-key' } },
        { name: 'shared_secret', value: 'other' },
      ]);
      const moved = destination('webhooks')!.config;
      expect(moved.url).toBe('https://elsewhere.example/in');
      expect(opened('webhooks', 'shared_secret', moved.shared_secret)).toBe('other');
    });
  });

  it('deletes a destination', async () => {
    await destinations.create(source, webhook('webhooks'), metadata);

    await destinations.delete(destination('webhooks')!, metadata);

    expect(destination('webhooks')).toBeUndefined();
  });
});
