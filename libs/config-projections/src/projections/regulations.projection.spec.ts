import type { ConfigEvent, RegulationRecord, RegulationType } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import {
  isSuppressedUser,
  regulationOf,
  regulationsOfWorkspace,
  regulationsProjection,
  RegulationsView,
  suppressionsOfWorkspace,
} from './regulations.projection';

const T0 = '2026-11-27T10:00:00.000Z';
const app = { sourceId: 'src-app', sourceSlug: 'app', displayName: 'App' };

let counter = 0;
const regulation = (
  regulationType: RegulationType,
  subjectIds: string[],
  source: RegulationRecord['source'] = null,
  workspaceSlug = 'acme',
): RegulationRecord => ({
  workspaceSlug,
  regulationId: `r${(counter += 1)}`,
  regulationType,
  subjectType: 'USER_ID',
  subjectIds,
  source,
  createTime: T0,
});
const created = (record: RegulationRecord): ConfigEvent => ({ type: 'RegulationCreated', data: record });
const deleted = (record: RegulationRecord): ConfigEvent => ({ type: 'RegulationDeleted', data: record });

const suppressed = (view: RegulationsView, sourceId: string, userId: unknown, workspaceSlug = 'acme') => {
  const suppressions = suppressionsOfWorkspace(view, workspaceSlug);
  return suppressions !== undefined && isSuppressedUser(suppressions, sourceId, userId);
};

describe('regulations projection', () => {
  it('lists a workspace’s regulations oldest first and tells listeners of each change', () => {
    const first = regulation('DELETE_ONLY', ['u1']);
    const second = regulation('SUPPRESS_ONLY', ['u2']);
    const other = regulation('DELETE_ONLY', ['u1'], null, 'other');
    const { view, changes } = given(regulationsProjection, [created(first), created(other)]).when(
      created(second),
    );
    expect(regulationsOfWorkspace(view, 'acme').map((entry) => entry.regulation.regulationId)).toEqual([
      first.regulationId,
      second.regulationId,
    ]);
    expect(regulationOf(view, 'other', first.regulationId)).toBeUndefined();
    expect(changes).toEqual([
      {
        kind: 'regulation-upserted',
        view: { regulation: second, progress: expect.objectContaining({ status: 'INITIALIZED' }) },
      },
    ]);
  });

  it('suppresses workspace-wide subjects on every source, source-scoped ones on their source only', () => {
    const { view } = given(regulationsProjection, [
      created(regulation('SUPPRESS_WITH_DELETE', ['u1'])),
      created(regulation('SUPPRESS_ONLY', ['u2'], app)),
    ]);
    expect(suppressed(view, 'src-app', 'u1')).toBe(true);
    expect(suppressed(view, 'src-other', 'u1')).toBe(true);
    expect(suppressed(view, 'src-app', 'u2')).toBe(true);
    expect(suppressed(view, 'src-other', 'u2')).toBe(false);
    expect(suppressed(view, 'src-app', 'u3')).toBe(false);
    expect(suppressed(view, 'src-app', undefined)).toBe(false);
    expect(suppressed(view, 'src-app', 'u1', 'other')).toBe(false);
    // Deleting types that do not suppress add nothing.
    const { view: deleting } = given(regulationsProjection, [created(regulation('DELETE_ONLY', ['u9']))]);
    expect(suppressionsOfWorkspace(deleting, 'acme')).toBeUndefined();
  });

  it('lifts a subject everywhere with a workspace-wide unsuppress, on one source with a scoped one', () => {
    const { view } = given(regulationsProjection, [
      created(regulation('SUPPRESS_ONLY', ['u1', 'u2'])),
      created(regulation('SUPPRESS_ONLY', ['u1', 'u3'], app)),
      created(regulation('UNSUPPRESS', ['u3'], app)),
    ]);
    expect(suppressed(view, 'src-app', 'u3')).toBe(false);
    expect(suppressed(view, 'src-app', 'u1')).toBe(true);
    const { view: lifted } = given(regulationsProjection, [
      created(regulation('SUPPRESS_ONLY', ['u1', 'u2'])),
      created(regulation('SUPPRESS_ONLY', ['u1'], app)),
      created(regulation('UNSUPPRESS', ['u1'])),
    ]);
    expect(suppressed(lifted, 'src-app', 'u1')).toBe(false);
    expect(suppressed(lifted, 'src-other', 'u1')).toBe(false);
    expect(suppressed(lifted, 'src-other', 'u2')).toBe(true);
    // An unsuppress of nobody leaves no trace; the last lifted subject empties the workspace's entry.
    const { view: empty } = given(regulationsProjection, [
      created(regulation('UNSUPPRESS', ['nobody'])),
      created(regulation('SUPPRESS_ONLY', ['u1'], app)),
      created(regulation('UNSUPPRESS', ['u1'])),
    ]);
    expect(suppressionsOfWorkspace(empty, 'acme')).toBeUndefined();
  });

  it('lifts only a cancelled regulation’s own suppression, and forgets the regulation', () => {
    const kept = regulation('SUPPRESS_ONLY', ['u1']);
    const cancelled = regulation('SUPPRESS_WITH_DELETE', ['u1', 'u2']);
    const { view } = given(regulationsProjection, [created(kept), created(cancelled)]).when(
      deleted(cancelled),
    );
    expect(suppressed(view, 'src-app', 'u1')).toBe(true);
    expect(suppressed(view, 'src-app', 'u2')).toBe(false);
    expect(regulationOf(view, 'acme', cancelled.regulationId)).toBeUndefined();
    expect(regulationsOfWorkspace(view, 'acme')).toHaveLength(1);
  });

  it('follows a regulation’s progress to its final status', () => {
    const record = regulation('DELETE_ONLY', ['u1']);
    const identity = { workspaceSlug: 'acme', regulationId: record.regulationId };
    const { view } = given(regulationsProjection, [
      created(record),
      { type: 'RegulationStarted', data: { ...identity, streams: [], startTime: T0 } },
      { type: 'RegulationFinished', data: { ...identity, status: 'FINISHED', finishTime: T0 } },
    ]);
    expect(regulationOf(view, 'acme', record.regulationId)?.progress).toEqual({
      status: 'FINISHED',
      streams: [],
      startTime: T0,
      finishTime: T0,
    });
  });
});
