// The regulation use cases without HTTP (and without a router to run them), on a real SQLite event
// store and read model: what the Public API's regulation routes will call too.
import { DomainError, RegulationRequestError } from '@tributary/config-domain';
import { isSuppressedUser, readAuditPage } from '@tributary/config-projections';
import {
  COMMAND_METADATA as metadata,
  type CommandHarness,
  startCommandHarness,
} from '../../test/support/config-commands.kit';
import { RegulationCommands } from './regulation.commands';

describe('RegulationCommands', () => {
  let harness: CommandHarness;
  let regulations: RegulationCommands;

  const suppressed = (userId: string, sourceId = 'id-ws-app') => {
    const suppressions = harness.readModel.suppressions('ws');
    return suppressions !== undefined && isSuppressedUser(suppressions, sourceId, userId);
  };
  const create = (regulationType: string, subjectIds: unknown, acceptAliases = false) =>
    regulations.create(
      { workspaceSlug: 'ws', regulationType, subjectType: 'USER_ID', subjectIds, acceptAliases },
      metadata,
    );

  beforeEach(async () => {
    harness = await startCommandHarness();
    regulations = new RegulationCommands(harness.readModel, harness.commands);
    await harness.seedWorkspace('ws');
    await harness.seedSource('ws', 'app');
  });

  afterEach(() => harness.stop());

  it('cancels an initialized regulation: its suppression is lifted and the trail keeps the request', async () => {
    const view = await create('SUPPRESS_WITH_DELETE', ['u1', 'u2']);
    expect(view.progress.status).toBe('INITIALIZED');
    expect(suppressed('u1')).toBe(true);

    await regulations.cancel(view, metadata);
    expect(regulations.get('ws', view.regulation.regulationId)).toBeUndefined();
    expect(suppressed('u1')).toBe(false);
    expect(regulations.suppressedUsers('ws')).toEqual([]);

    const { entries } = await readAuditPage(harness.store, {
      workspaceSlug: 'ws',
      resourceNamePrefix: `workspaces/ws/regulations/${view.regulation.regulationId}`,
      pageSize: 10,
    });
    expect(entries.map((entry) => [entry.type, entry.data])).toEqual([
      [
        'RegulationDeleted',
        {
          regulation_type: 'SUPPRESS_WITH_DELETE',
          subject_type: 'USER_ID',
          subject_ids: ['u1', 'u2'],
          source_name: '',
        },
      ],
      [
        'RegulationCreated',
        {
          regulation_type: 'SUPPRESS_WITH_DELETE',
          subject_type: 'USER_ID',
          subject_ids: ['u1', 'u2'],
          source_name: '',
        },
      ],
    ]);
    await expect(regulations.cancel(view, metadata)).rejects.toEqual(
      new DomainError('not_found', 'regulation not found'),
    );
  });

  it('takes only Public names without aliases, names the refused field, and stores nothing then', async () => {
    await expect(create('Suppress', ['u1'])).rejects.toMatchObject({ field: 'regulationType' });
    await expect(create('SUPPRESS_ONLY', [])).rejects.toBeInstanceOf(RegulationRequestError);
    expect(regulations.list('ws')).toEqual([]);
    expect(suppressed('u1')).toBe(false);
    expect((await create('Suppress', ['u1'], true)).regulation.regulationType).toBe('SUPPRESS_ONLY');
  });

  it('lists by source, status and type, oldest first', async () => {
    const app = harness.readModel.source('ws', 'app')!;
    const first = await create('DELETE_ONLY', ['u1']);
    const scoped = await regulations.create(
      {
        workspaceSlug: 'ws',
        source: app,
        regulationType: 'SUPPRESS_ONLY',
        subjectType: 'USER_ID',
        subjectIds: ['u2'],
        acceptAliases: false,
      },
      metadata,
    );
    const ids = (views: { regulation: { regulationId: string } }[]) =>
      views.map((view) => view.regulation.regulationId);
    expect(ids(regulations.list('ws'))).toEqual([
      first.regulation.regulationId,
      scoped.regulation.regulationId,
    ]);
    expect(ids(regulations.list('ws', { sourceId: app.source.sourceId }))).toEqual([
      scoped.regulation.regulationId,
    ]);
    expect(ids(regulations.list('ws', { statuses: ['INITIALIZED'] }))).toEqual([
      first.regulation.regulationId,
    ]);
    expect(ids(regulations.list('ws', { regulationTypes: ['SUPPRESS_ONLY', 'UNSUPPRESS'] }))).toEqual([
      scoped.regulation.regulationId,
    ]);
    expect(regulations.suppressedUsers('ws')).toEqual([
      { subjectType: 'USER_ID', subjectId: 'u2', source: app },
    ]);
  });
});
