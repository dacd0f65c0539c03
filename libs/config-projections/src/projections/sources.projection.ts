import {
  SchemaConfig,
  sourceDecider,
  SourceRecord,
  SourceState,
  writeKeysOf,
} from '@tributary/config-domain';
import { ConfigChange, ConfigProjection, unchanged } from './config-projection';

export interface SourceView {
  source: SourceRecord;
  schemaConfig: SchemaConfig;
}

/** Sources by workspace and slug, and by each of their write keys (what the tracking API resolves a request by). */
export interface SourcesView {
  readonly bySlug: Map<string, SourceView>;
  readonly byWriteKey: Map<string, SourceRecord>;
}

export const sourceKey = (workspaceSlug: string, sourceSlug: string) => `${workspaceSlug}/${sourceSlug}`;

export const sourcesProjection: ConfigProjection<SourcesView> = {
  initial: () => ({ bySlug: new Map(), byWriteKey: new Map() }),

  evolve(view, event) {
    switch (event.type) {
      case 'SourceCreated':
      case 'SourceUpdated':
      case 'SchemaConfigUpdated':
      case 'SourceDeleted':
        break;
      default:
        return unchanged(view);
    }
    const key = sourceKey(event.data.workspaceSlug, event.data.sourceSlug);
    const before = view.bySlug.get(key);
    const stateBefore: SourceState = before ? { status: 'active', ...before } : { status: 'absent' };
    const state = sourceDecider.evolve(stateBefore, event);
    // A schema config change reaches the tracking API's compiled plans whether or not the source is known.
    const changes: ConfigChange[] =
      event.type === 'SchemaConfigUpdated'
        ? [{ kind: 'protocols-changed', workspaceSlug: event.data.workspaceSlug }]
        : [];
    if (state.status === 'active') {
      // A new view, never an edit in place: the tracking API knows its compiled plans are stale by the
      // identity of the schema config and plan records they were compiled from.
      view.bySlug.set(key, { source: state.source, schemaConfig: state.schemaConfig });
      // A removed key stops authenticating at once; every live key resolves to the new record.
      for (const writeKey of before ? writeKeysOf(before.source) : []) view.byWriteKey.delete(writeKey);
      for (const writeKey of writeKeysOf(state.source)) view.byWriteKey.set(writeKey, state.source);
      if (state.source !== before?.source) changes.push({ kind: 'source-upserted', source: state.source });
      return { view, changes };
    }
    if (!before) return { view, changes };
    view.bySlug.delete(key);
    for (const writeKey of writeKeysOf(before.source)) view.byWriteKey.delete(writeKey);
    return { view, changes: [{ kind: 'source-deleted', source: before.source }] };
  },
};

export function sourceOf(
  view: SourcesView,
  workspaceSlug: string,
  sourceSlug: string,
): SourceView | undefined {
  return view.bySlug.get(sourceKey(workspaceSlug, sourceSlug));
}

export function sourcesOfWorkspace(view: SourcesView, workspaceSlug: string): SourceView[] {
  return [...view.bySlug.values()].filter((entry) => entry.source.workspaceSlug === workspaceSlug);
}

export function sourceByWriteKey(view: SourcesView, writeKey: string): SourceRecord | undefined {
  return view.byWriteKey.get(writeKey);
}
