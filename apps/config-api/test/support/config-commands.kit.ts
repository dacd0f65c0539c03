// What the Config API's command modules run on in their unit tests, without HTTP: a real SQLite
// event store, the projections' runner folding it, the read model over the runner and the command
// handler that writes to the store and waits for the projections, as the Config API wires them;
// resources other modules own are seeded as the events that record them.
import { ResourceLookup } from '@tributary/config-api-access';
import { DEFAULT_SCHEMA_CONFIG } from '@tributary/config-domain';
import { ConfigCommandHandler } from '@tributary/config-commands';
import { ConfigProjectionRunner, ConfigReadModel } from '@tributary/config-projections';
import { SqliteEventStore, type EventMetadata } from '@tributary/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceQuotas, type WorkspaceQuotaLimits } from '../../src/shared/workspace-quotas';

export const COMMAND_METADATA: EventMetadata = {
  actor: 'access-tokens/1',
  requestId: 'req',
  time: '2026-01-01T00:00:00.000Z',
};

export interface CommandHarness {
  store: SqliteEventStore;
  readModel: ConfigReadModel;
  commands: ConfigCommandHandler;
  lookup: ResourceLookup;
  quotas: WorkspaceQuotas;
  seedWorkspace(slug: string): Promise<void>;
  seedSource(workspaceSlug: string, sourceSlug: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startCommandHarness(
  limits: Partial<WorkspaceQuotaLimits> = {},
): Promise<CommandHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'config-commands-'));
  const store = new SqliteEventStore(join(dataDir, 'config-events.sqlite'));
  const projections = new ConfigProjectionRunner();
  const readModel = new ConfigReadModel(projections);
  await projections.start(store);
  let seeded = 0;
  const seed = async (type: string, data: Record<string, unknown>) => {
    seeded += 1;
    const { position } = await store.append(
      `seed-${seeded}`,
      [{ type, data, metadata: COMMAND_METADATA }],
      'no_stream',
    );
    await readModel.waitFor(position);
  };
  return {
    store,
    readModel,
    commands: new ConfigCommandHandler(store, readModel),
    lookup: new ResourceLookup(readModel),
    quotas: new WorkspaceQuotas(readModel, {
      sources: 10,
      destinations: 10,
      filtersPerDestination: 10,
      trackingPlans: 10,
      oauthApplications: 10,
      runningReplays: 10,
      configBytes: 16 * 1024 * 1024,
      filterBytes: 16 * 1024,
      ...limits,
    }),
    seedWorkspace: (slug) =>
      seed('WorkspaceCreated', {
        slug,
        id: 'e5bdb0902b',
        displayName: slug,
        region: 'us',
        createTime: COMMAND_METADATA.time,
      }),
    seedSource: (workspaceSlug, sourceSlug) =>
      seed('SourceCreated', {
        workspaceSlug,
        sourceSlug,
        sourceId: `id-${workspaceSlug}-${sourceSlug}`,
        catalogName: 'catalog/sources/javascript',
        displayName: sourceSlug,
        writeKey: `key-${sourceSlug}`.padEnd(32, 'x'),
        createTime: COMMAND_METADATA.time,
        schemaConfig: DEFAULT_SCHEMA_CONFIG,
      }),
    async stop() {
      await projections.stop();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
