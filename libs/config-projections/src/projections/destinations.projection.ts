import { ConfigEvent, destinationDecider, DestinationState } from '@tributary/config-domain';
import { ConfigChange, ConfigProjection, Evolved, unchanged } from './config-projection';
import type { DestinationView } from './config-views';

export type { DestinationView } from './config-views';

/** Destinations by source id and slug. */
export type DestinationsView = Map<string, DestinationView>;

const destinationKey = (sourceId: string, destinationSlug: string) => `${sourceId}/${destinationSlug}`;

type DestinationEventOf<Type> = Extract<ConfigEvent, { type: Type }>;

export const destinationsProjection: ConfigProjection<DestinationsView> = {
  initial: () => new Map(),

  evolve(view, event) {
    switch (event.type) {
      // A deleted source takes its destinations with it.
      case 'SourceDeleted':
        return removeDestinationsOfSource(view, event.data.sourceId);
      case 'DestinationCreated':
      case 'DestinationUpdated':
      case 'DestinationDeleted':
      case 'DestinationInsertFunctionCreated':
      case 'DestinationInsertFunctionUpdated':
      case 'DestinationInsertFunctionDeleted':
      case 'DestinationFilterCreated':
      case 'DestinationFilterUpdated':
      case 'DestinationFilterDeleted':
      case 'DestinationReplayRequested':
      case 'DestinationReplayCancelRequested':
      case 'DestinationReplayFinished':
      case 'DestinationDeadLettersRedriveRequested':
      case 'DestinationDeadLettersRedriven':
        return evolveDestination(view, event);
      default:
        return unchanged(view);
    }
  },
};

function evolveDestination(
  view: DestinationsView,
  event: DestinationEventOf<`Destination${string}`>,
): Evolved<DestinationsView> {
  const key = destinationKey(event.data.sourceId, event.data.destinationSlug);
  const before = view.get(key);
  // Events of a destination this process does not know (deleted, or its source deleted) change nothing.
  if (!before && event.type !== 'DestinationCreated') return unchanged(view);
  // What a redrive delivered is the view's own: the aggregate only needs to know the redrive is done.
  const redrivenDeadLetters =
    !before || event.type === 'DestinationCreated'
      ? new Set<number>()
      : event.type === 'DestinationDeadLettersRedriven'
        ? withRedriven(before.redrivenDeadLetters, event.data.delivered)
        : before.redrivenDeadLetters;
  const state = destinationDecider.evolve(before ? stateOf(before) : destinationDecider.initialState, event);
  if (state.status !== 'active') {
    view.delete(key);
    return {
      view,
      changes: before ? [{ kind: 'destination-deleted', destination: before.destination }] : [],
    };
  }
  const after: DestinationView = {
    destination: state.destination,
    filters: state.filters,
    replays: state.replays,
    redrivenDeadLetters,
    pendingRedriveIds: state.pendingRedriveIds,
  };
  view.set(key, after);
  return { view, changes: changesOf(event, after) };
}

function changesOf(
  event: DestinationEventOf<`Destination${string}`>,
  after: DestinationView,
): ConfigChange[] {
  switch (event.type) {
    case 'DestinationDeadLettersRedriveRequested':
      return [{ kind: 'dead-letter-redrive-requested', view: after, redriveId: event.data.redriveId }];
    // The router learns of a finished redrive from the stream it records it in, not from a change.
    case 'DestinationDeadLettersRedriven':
      return [];
    default:
      return [{ kind: 'destination-upserted', view: after }];
  }
}

function stateOf(view: DestinationView): DestinationState {
  const { destination, filters, replays, pendingRedriveIds } = view;
  return { status: 'active', destination, filters, replays, pendingRedriveIds };
}

/** A new set: readers holding the old view keep what it said. Throws on a `delivered` that is not a list. */
function withRedriven(redriven: ReadonlySet<number>, delivered: number[]): ReadonlySet<number> {
  const next = new Set(redriven);
  delivered.forEach((sequence) => next.add(sequence));
  return next;
}

function removeDestinationsOfSource(view: DestinationsView, sourceId: string): Evolved<DestinationsView> {
  const changes: ConfigChange[] = [];
  for (const [key, entry] of view) {
    if (entry.destination.sourceId !== sourceId) continue;
    view.delete(key);
    changes.push({ kind: 'destination-deleted', destination: entry.destination });
  }
  return { view, changes };
}

export function destinationOf(
  view: DestinationsView,
  sourceId: string,
  destinationSlug: string,
): DestinationView | undefined {
  return view.get(destinationKey(sourceId, destinationSlug));
}

export function destinationsOfSource(view: DestinationsView, sourceId: string): DestinationView[] {
  return [...view.values()].filter((entry) => entry.destination.sourceId === sourceId);
}

export function allDestinations(view: DestinationsView): DestinationView[] {
  return [...view.values()];
}
