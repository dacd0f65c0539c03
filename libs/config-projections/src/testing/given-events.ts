import type { ConfigEvent } from '@tributary/config-domain';
import type { ConfigChange, ConfigProjection } from '../projections/config-projection';

/**
 * given events / then view for projections (docs/architecture.md), with no framework beyond jest's
 * `expect`:
 *
 *   const { view } = given(sourcesProjection, [sourceCreated, sourceUpdated]);
 *   expect(sourceOf(view, 'ws', 'web')?.source.allowedOrigins).toEqual([...]);
 *   expect(given(sourcesProjection, [sourceCreated]).when(sourceDeleted).changes).toEqual([...]);
 *
 * Events are folded as the store hands them back (through a JSON round trip), and the history is
 * folded twice from `initial()` to check that the same events give the same view.
 */
export function given<View>(projection: ConfigProjection<View>, history: readonly ConfigEvent[] = []) {
  const view = foldAll(projection, history);
  expect(foldAll(projection, history)).toEqual(view);
  return {
    view,
    /** Folds one more event into the view; returns the view after it and what listeners hear of it. */
    when(event: ConfigEvent): { view: View; changes: readonly ConfigChange[] } {
      return projection.evolve(view, throughStorage([event])[0]);
    },
  };
}

function foldAll<View>(projection: ConfigProjection<View>, events: readonly ConfigEvent[]): View {
  return throughStorage(events).reduce(
    (view, event) => projection.evolve(view, event).view,
    projection.initial(),
  );
}

function throughStorage<Event>(events: readonly Event[]): Event[] {
  return JSON.parse(JSON.stringify(events));
}
