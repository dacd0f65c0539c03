// The replay request without HTTP, on a real SQLite event store and read model; the destination
// replayed is made by DestinationCommands.
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
import { ReplayCommands } from './replay.commands';

describe('ReplayCommands', () => {
  let harness: CommandHarness;
  let replays: ReplayCommands;
  let sourceId: string;

  const destination = (): DestinationView => harness.readModel.destination(sourceId, 'webhooks')!;

  beforeEach(async () => {
    harness = await startCommandHarness({ runningReplays: 1 });
    replays = new ReplayCommands(harness.commands, harness.quotas);
    await harness.seedWorkspace('ws');
    await harness.seedSource('ws', 'web');
    const source = harness.readModel.source('ws', 'web')!.source;
    sourceId = source.sourceId;
    await new DestinationCommands(
      harness.commands,
      new DestinationConfigMapper(new SecretBox(randomBytes(32))),
      harness.quotas,
      new DestinationCatalog(harness.readModel),
    ).create(
      source,
      { name: 'webhooks', config: [{ name: 'url', value: 'https://hooks.example/in' }] },
      metadata,
    );
  });

  afterEach(() => harness.stop());

  it('requests a replay from a flat or a wrapped body, under a fresh rp_ id', async () => {
    const replayId = await replays.request(
      destination().destination,
      { replay: { start_time: '2025-12-31T00:00:00Z', end_time: '2025-12-31T12:00:00Z' } },
      metadata,
    );

    expect(replayId).toMatch(/^rp_[0-9A-Za-z]{27}$/);
    expect(destination().replays).toEqual([
      expect.objectContaining({
        replayId,
        startTime: '2025-12-31T00:00:00.000Z',
        endTime: '2025-12-31T12:00:00.000Z',
        state: 'RUNNING',
      }),
    ]);
  });

  it('refuses a replay past the running-replays quota with 429, code 8', async () => {
    await replays.request(destination().destination, { start_time: '2025-12-31T00:00:00Z' }, metadata);

    await expect(
      replays.request(destination().destination, { start_time: '2025-12-31T00:00:00Z' }, metadata),
    ).rejects.toMatchObject({ status: 429, code: 8 });
    expect(destination().replays).toHaveLength(1);
  });
});
