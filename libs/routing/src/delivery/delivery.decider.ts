/**
 * Whether one message goes to one destination, and in what form (docs/architecture.md, `routing`). Pure: the router
 * passes the clock reading in `now`.
 *
 * The checks run in this order; the first that stops the message gives the decision:
 * 1. `enabled`: a disabled destination gets nothing, except a replay (docs/tracking-api.md §12.4: "a disabled destination
 *    can still receive a replay").
 * 2. `integrations` (see `decideIntegrations`). A replay is routed with the integrations object the
 *    replayer wrote (`prepareReplayMessage`), so it passes for the replayed destination.
 * 3. Historical timestamps: a destination whose vendor refuses old events (catalog capability
 *    `acceptsHistoricalTimestampsUpToMs`) is skipped when `now − timestamp` exceeds the limit, rather
 *    than failing at the vendor. This holds for replays too: the vendor refuses them just the same.
 * 4. Destination filters (see `applyDestinationFilters`), unless the catalog says filters do not apply to
 *    this destination (Segment skips them for warehouses and S3, docs/config-api.md D7). They apply to replays
 *    (docs/tracking-api.md §12.4). Spec §12.5 puts them after source-scoped transformations, which happen before routing.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import {
  applyDestinationFilters,
  type FilterOutcomeReason,
  type RoutableFilter,
} from '../filters/destination-filters.decider';
import { decideIntegrations } from '../integrations/integrations.decider';

/** What routing needs to know about one destination instance, from its record and its catalog entry. */
export interface RoutableDestination {
  /** The destination instance's slug, for logs and metrics. */
  readonly slug: string;
  /** The catalog's published name: the key looked up in a message's `integrations` object. */
  readonly displayName: string;
  readonly enabled: boolean;
  readonly filters: readonly RoutableFilter[];
  readonly capabilities: {
    /** Oldest accepted event age in milliseconds at delivery time; `null`: any age. */
    readonly acceptsHistoricalTimestampsUpToMs: number | null;
    readonly destinationFiltersApply: boolean;
  };
}

export interface RoutingContext {
  /** The router's clock reading for this decision. */
  readonly now: Date;
  /** The message is being replayed to this destination. */
  readonly replay?: boolean;
}

export type DeliverySkipReason = 'disabled' | 'integrations' | 'historical';

export type RoutingDecision =
  | {
      readonly outcome: 'deliver';
      /** What to send: the input message itself, or a transformed copy when a filter removed fields. */
      readonly message: NormalizedMessage;
    }
  | {
      readonly outcome: 'skip';
      readonly reason: DeliverySkipReason;
      /** A sentence saying why, for logs and the debugger. */
      readonly detail: string;
    }
  | {
      readonly outcome: 'filter';
      readonly reason: FilterOutcomeReason;
      readonly filterId: string;
      readonly filterTitle: string;
      /** Set for `invalid_filter`. */
      readonly detail?: string;
    };

export function decideDelivery(
  message: NormalizedMessage,
  destination: RoutableDestination,
  context: RoutingContext,
): RoutingDecision {
  const now = context.now.getTime();
  if (Number.isNaN(now)) throw new Error('decideDelivery: context.now is an invalid Date');

  if (!destination.enabled && !context.replay) {
    return { outcome: 'skip', reason: 'disabled', detail: `destination ${destination.slug} is disabled` };
  }

  const integrations = decideIntegrations(message.integrations, destination.displayName);
  if (!integrations.enabled) return { outcome: 'skip', reason: 'integrations', detail: integrations.detail };

  const maximumAge = destination.capabilities.acceptsHistoricalTimestampsUpToMs;
  if (maximumAge !== null) {
    const eventTime = Date.parse(message.timestamp);
    // A normalized timestamp always parses; were one not to, the vendor is left to judge it.
    if (!Number.isNaN(eventTime) && now - eventTime > maximumAge) {
      return {
        outcome: 'skip',
        reason: 'historical',
        detail:
          `timestamp ${message.timestamp} is ${now - eventTime} ms old; ` +
          `${destination.displayName} accepts events up to ${maximumAge} ms old`,
      };
    }
  }

  if (!destination.capabilities.destinationFiltersApply) return { outcome: 'deliver', message };
  const filtered = applyDestinationFilters(message, destination.filters);
  if (filtered.outcome === 'pass') return { outcome: 'deliver', message: filtered.message };
  return filtered;
}
