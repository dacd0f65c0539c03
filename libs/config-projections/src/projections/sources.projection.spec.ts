import { type ConfigEvent, DEFAULT_SCHEMA_CONFIG, type SourceRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import { sourceByWriteKey, sourceOf, sourcesOfWorkspace, sourcesProjection } from './sources.projection';

const source = (workspaceSlug: string, sourceSlug: string): SourceRecord => ({
  workspaceSlug,
  sourceSlug,
  sourceId: `id_${workspaceSlug}_${sourceSlug}`,
  catalogName: 'catalog/sources/javascript',
  displayName: sourceSlug,
  writeKey: `key-${workspaceSlug}-${sourceSlug}`,
  createTime: '2026-01-01T00:00:00.000Z',
});
const created = (workspaceSlug: string, sourceSlug: string): ConfigEvent => ({
  type: 'SourceCreated',
  data: { ...source(workspaceSlug, sourceSlug), schemaConfig: DEFAULT_SCHEMA_CONFIG },
});
const identity = (workspaceSlug: string, sourceSlug: string) => {
  const { sourceId } = source(workspaceSlug, sourceSlug);
  return { workspaceSlug, sourceSlug, sourceId };
};

describe('sources projection', () => {
  it('holds a created source with its schema config, by slug and by write key', () => {
    const { view } = given(sourcesProjection, [created('ws', 'web'), created('other', 'web')]);
    expect(sourceOf(view, 'ws', 'web')).toEqual({
      source: source('ws', 'web'),
      schemaConfig: DEFAULT_SCHEMA_CONFIG,
    });
    expect(sourceByWriteKey(view, 'key-other-web')).toEqual(source('other', 'web'));
    expect(sourcesOfWorkspace(view, 'ws').map((entry) => entry.source)).toEqual([source('ws', 'web')]);
  });

  it('tells listeners of a created source', () => {
    const { changes } = given(sourcesProjection).when(created('ws', 'web'));
    expect(changes).toEqual([{ kind: 'source-upserted', source: source('ws', 'web') }]);
  });

  it('applies an update as the source decider folds it: a new record under both lookups', () => {
    const given_ = given(sourcesProjection, [created('ws', 'web')]);
    const before = sourceOf(given_.view, 'ws', 'web')!;
    const { view, changes } = given_.when({
      type: 'SourceUpdated',
      data: { ...identity('ws', 'web'), changes: { allowedOrigins: ['https://shop.example'] } },
    });
    const updated = { ...source('ws', 'web'), allowedOrigins: ['https://shop.example'] };
    expect(sourceOf(view, 'ws', 'web')?.source).toEqual(updated);
    expect(sourceByWriteKey(view, 'key-ws-web')).toBe(sourceOf(view, 'ws', 'web')?.source);
    // Readers holding the record from before keep a consistent one.
    expect(before.source).toEqual(source('ws', 'web'));
    expect(changes).toEqual([{ kind: 'source-upserted', source: updated }]);
  });

  it('replaces the schema config with a new object and keeps the source record, telling Protocols', () => {
    const given_ = given(sourcesProjection, [created('ws', 'web')]);
    const before = sourceOf(given_.view, 'ws', 'web')!;
    const { view, changes } = given_.when({
      type: 'SchemaConfigUpdated',
      data: { ...identity('ws', 'web'), changes: { allow_unplanned_track_events: false } },
    });
    const after = sourceOf(view, 'ws', 'web')!;
    expect(after.schemaConfig).toEqual({ ...DEFAULT_SCHEMA_CONFIG, allow_unplanned_track_events: false });
    // Compiled plans are known stale by the identity of the schema config they were compiled from.
    expect(after.schemaConfig).not.toBe(before.schemaConfig);
    expect(after.source).toBe(before.source);
    expect(changes).toEqual([{ kind: 'protocols-changed', workspaceSlug: 'ws' }]);
  });

  it('tells Protocols of a schema config change even of a source it does not hold', () => {
    const { view, changes } = given(sourcesProjection).when({
      type: 'SchemaConfigUpdated',
      data: { ...identity('ws', 'ghost'), changes: { allow_unplanned_track_events: false } },
    });
    expect(sourceOf(view, 'ws', 'ghost')).toBeUndefined();
    expect(changes).toEqual([{ kind: 'protocols-changed', workspaceSlug: 'ws' }]);
  });

  it('forgets a deleted source under both lookups and tells listeners which one it was', () => {
    const { view, changes } = given(sourcesProjection, [created('ws', 'web'), created('ws', 'app')]).when({
      type: 'SourceDeleted',
      data: identity('ws', 'web'),
    });
    expect(sourceOf(view, 'ws', 'web')).toBeUndefined();
    expect(sourceByWriteKey(view, 'key-ws-web')).toBeUndefined();
    expect(sourcesOfWorkspace(view, 'ws').map((entry) => entry.source.sourceSlug)).toEqual(['app']);
    expect(changes).toEqual([{ kind: 'source-deleted', source: source('ws', 'web') }]);
  });

  it('ignores an update or a deletion of a source it does not hold, and says nothing', () => {
    const updated = given(sourcesProjection).when({
      type: 'SourceUpdated',
      data: { ...identity('ws', 'ghost'), changes: { allowedOrigins: [] } },
    });
    expect(sourcesOfWorkspace(updated.view, 'ws')).toEqual([]);
    expect(updated.changes).toEqual([]);
    const deleted = given(sourcesProjection).when({ type: 'SourceDeleted', data: identity('ws', 'ghost') });
    expect(deleted.changes).toEqual([]);
  });
});
