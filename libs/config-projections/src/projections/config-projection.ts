import type {
  ConfigEvent,
  DestinationRecord,
  FunctionRecord,
  SourceRecord,
  WorkspaceRecord,
} from '@tributary/config-domain';
import type { DestinationView, FunctionView, RegulationView } from './config-views';

/** A change the tracking API and the router react to without polling. */
export type ConfigChange =
  | { kind: 'source-upserted'; source: SourceRecord }
  | { kind: 'source-deleted'; source: SourceRecord }
  | { kind: 'destination-upserted'; view: DestinationView }
  | { kind: 'destination-deleted'; destination: DestinationRecord }
  | { kind: 'dead-letter-redrive-requested'; view: DestinationView; redriveId: string }
  | { kind: 'workspace-upserted'; workspace: WorkspaceRecord }
  /** A regulation was recorded or moved on (the router runs its deletion). */
  | { kind: 'regulation-upserted'; view: RegulationView }
  /** A tracking plan, a plan connection or a schema config of the workspace changed (Protocols). */
  | { kind: 'protocols-changed'; workspaceSlug: string }
  /** A function was created, got a new version or was deployed (runners load the deployed version). */
  | { kind: 'function-upserted'; view: FunctionView }
  | { kind: 'function-deleted'; function: FunctionRecord };

/** A view after one event, and what listeners hear of that event. */
export interface Evolved<View> {
  view: View;
  changes: readonly ConfigChange[];
}

/**
 * One read model folded from the config events: `initial()` is the view before any event, `evolve`
 * folds one event in. The same events give the same view. A view's maps are changed in place (a copy
 * of every map per event would make a start from a long history quadratic), but their entries never
 * are: an entry is replaced by a new one, so a reader holding an entry keeps a consistent record, and
 * a record's identity says whether it changed (the tracking API's compiled plans, the router's
 * prepared destinations rely on that). `evolve` does everything that can throw before it changes
 * the view, so an event that cannot be folded leaves the view as it was.
 */
export interface ConfigProjection<View> {
  initial(): View;
  evolve(view: View, event: ConfigEvent): Evolved<View>;
}

export const unchanged = <View>(view: View): Evolved<View> => ({ view, changes: [] });
