// The destination-filter use cases without HTTP, on a real SQLite event store and read model; the
// destination they hang off is made by DestinationCommands.
import { ConfigApiError } from '@tributary/config-api-access';
import { SecretBox } from '@tributary/auth';
import type { DestinationView } from '@tributary/config-projections';
import { randomBytes } from 'node:crypto';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { DestinationConfigMapper } from '../destinations/destination-config';
import { DestinationCommands } from '../destinations/destination.commands';
import { DestinationCatalog } from '../destinations/destination-catalog';
import { FilterCommands } from './filter.commands';

describe('FilterCommands', () => {
  let harness: CommandHarness;
  let filters: FilterCommands;
  let sourceId: string;

  const destination = (): DestinationView => harness.readModel.destination(sourceId, 'webhooks')!;
  const filter = (filterId: string) =>
    destination().filters.find((candidate) => candidate.filterId === filterId);

  beforeEach(async () => {
    harness = await startCommandHarness({ filtersPerDestination: 2 });
    filters = new FilterCommands(harness.commands, harness.quotas, harness.readModel);
    await harness.seedWorkspace('ws');
    await harness.seedSource('ws', 'web');
    const source = harness.readModel.source('ws', 'web')!.source;
    sourceId = source.sourceId;
    const destinations = new DestinationCommands(
      harness.commands,
      new DestinationConfigMapper(new SecretBox(randomBytes(32))),
      harness.quotas,
      new DestinationCatalog(harness.readModel),
    );
    await destinations.create(
      source,
      { name: 'webhooks', config: [{ name: 'url', value: 'https://hooks.example/in' }] },
      metadata,
    );
  });

  afterEach(() => harness.stop());

  it('adds a filter under a fresh df_ id, disabled and untitled unless told otherwise', async () => {
    const filterId = await filters.create(
      destination(),
      { if: "event = 'Order Completed'", actions: [{ type: 'drop_event' }] },
      metadata,
    );

    expect(filterId).toMatch(/^df_[0-9A-Za-z]{27}$/);
    expect(filter(filterId)).toMatchObject({
      title: '',
      enabled: false,
      if: "event = 'Order Completed'",
      actions: [{ type: 'drop_event' }],
      createTime: metadata.time,
    });
  });

  it('refuses a condition or actions the router could not evaluate, and stores nothing', async () => {
    await expect(
      filters.create(destination(), { if: "event = = 'x'", actions: [{ type: 'drop_event' }] }, metadata),
    ).rejects.toMatchObject({ status: 400, code: 3, message: expect.stringMatching(/^filter\.if: /) });
    const refusal = await filters
      .create(destination(), { if: 'all', actions: [{ type: 'sample_event', percent: 2 }] }, metadata)
      .catch((e) => e);
    expect(refusal).toBeInstanceOf(ConfigApiError);
    expect(refusal.message).toMatch(/^filter\.actions/);
    expect(destination().filters).toEqual([]);
  });

  it('refuses a filter past the per-destination quota with 429, code 8', async () => {
    await filters.create(destination(), { if: 'all', actions: [{ type: 'drop_event' }] }, metadata);
    await filters.create(destination(), { if: 'all', actions: [{ type: 'drop_event' }] }, metadata);

    await expect(
      filters.create(destination(), { if: 'all', actions: [{ type: 'drop_event' }] }, metadata),
    ).rejects.toMatchObject({ status: 429, code: 8 });
  });

  it('updates the fields a bare mask path names, checks the new condition, and deletes by full name', async () => {
    const filterId = await filters.create(
      destination(),
      { title: 'drop tests', if: "event = 'Test'", actions: [{ type: 'drop_event' }] },
      metadata,
    );

    await filters.update(
      destination().destination,
      filterId,
      { filter: { enabled: true, title: 'ignored' }, update_mask: { paths: ['enabled'] } },
      metadata,
    );
    expect(filter(filterId)).toMatchObject({ enabled: true, title: 'drop tests' });
    await expect(
      filters.update(destination().destination, filterId, { filter: { if: 'event = = 1' } }, metadata),
    ).rejects.toMatchObject({ status: 400, code: 3 });

    await filters.delete(
      destination().destination,
      `workspaces/ws/sources/web/destinations/webhooks/filters/${filterId}`,
      metadata,
    );
    expect(filter(filterId)).toBeUndefined();
  });
});
