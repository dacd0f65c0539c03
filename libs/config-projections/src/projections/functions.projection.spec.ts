import type { ConfigEvent, FunctionKind } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import { functionOf, functionsOfWorkspace, functionsProjection } from './functions.projection';

const T0 = '2026-11-27T12:00:00.000Z';
const T1 = '2026-11-27T12:05:00.000Z';

const created = (
  workspaceSlug: string,
  functionId: string,
  type: FunctionKind = 'DESTINATION',
): ConfigEvent => ({
  type: 'FunctionCreated',
  data: {
    workspaceSlug,
    functionId,
    workspaceId: `id-${workspaceSlug}`,
    type,
    displayName: functionId,
    description: '',
    logoUrl: '',
    code: 'async function onTrack() {}',
    settings: [],
    createTime: T0,
    createdBy: 'access-tokens/1',
  },
});

describe('functions projection', () => {
  it('finds a function only in its own workspace and lists a workspace’s by type, oldest first', () => {
    const { view } = given(functionsProjection, [
      created('ws', 'dfn_a'),
      created('ws', 'sfn_b', 'SOURCE'),
      created('other', 'dfn_c'),
      created('ws', 'ifnd_d', 'INSERT_DESTINATION'),
    ]);
    expect(functionOf(view, 'ws', 'dfn_a')?.function).toMatchObject({ functionId: 'dfn_a', version: 1 });
    expect(functionOf(view, 'ws', 'dfn_c')).toBeUndefined();
    expect(functionsOfWorkspace(view, 'ws').map((f) => f.function.functionId)).toEqual([
      'dfn_a',
      'sfn_b',
      'ifnd_d',
    ]);
    expect(functionsOfWorkspace(view, 'ws', 'SOURCE').map((f) => f.function.functionId)).toEqual(['sfn_b']);
    expect(functionsOfWorkspace(view, 'nobody')).toEqual([]);
  });

  it('tells listeners of a new version, a deploy and a delete, replacing the record each time', () => {
    const history = given(functionsProjection, [created('ws', 'dfn_a')]);
    const before = functionOf(history.view, 'ws', 'dfn_a')!;
    const updated = history.when({
      type: 'FunctionUpdated',
      data: {
        workspaceSlug: 'ws',
        functionId: 'dfn_a',
        changes: { displayName: 'Relay' },
        version: {
          version: 2,
          code: 'async function onIdentify() {}',
          settings: [],
          createTime: T1,
          createdBy: 'x',
        },
        updateTime: T1,
      },
    });
    const after = functionOf(updated.view, 'ws', 'dfn_a')!;
    expect(after).not.toBe(before);
    expect(before.function.version).toBe(1);
    expect(after.function).toMatchObject({ displayName: 'Relay', version: 2, deployedVersion: 1 });
    expect(updated.changes).toEqual([{ kind: 'function-upserted', view: after }]);

    const deployed = functionsProjection.evolve(updated.view, {
      type: 'FunctionDeployed',
      data: { workspaceSlug: 'ws', functionId: 'dfn_a', deployedVersion: 2, deployTime: T1 },
    });
    expect(functionOf(deployed.view, 'ws', 'dfn_a')?.function.deployedVersion).toBe(2);

    const deleted = functionsProjection.evolve(deployed.view, {
      type: 'FunctionDeleted',
      data: { workspaceSlug: 'ws', functionId: 'dfn_a' },
    });
    expect(functionOf(deleted.view, 'ws', 'dfn_a')).toBeUndefined();
    expect(deleted.changes).toEqual([
      { kind: 'function-deleted', function: expect.objectContaining({ functionId: 'dfn_a' }) },
    ]);
  });
});
