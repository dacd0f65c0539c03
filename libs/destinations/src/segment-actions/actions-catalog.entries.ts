/**
 * Lookups over the generated Actions data (`actions-catalog.generated.ts`): what the catalog, the
 * settings checks and the lane's workers read of an Actions destination without loading its code.
 */
import { ACTIONS_DESTINATIONS } from './actions-catalog.generated';
import type { ActionsDestinationData } from './actions-catalog.types';

/** The setting that holds a destination's subscriptions (`[{subscribe, partnerAction, mapping}]`). */
export const SUBSCRIPTIONS_SETTING = 'subscriptions';

const actionsBySlug = new Map(ACTIONS_DESTINATIONS.map((destination) => [destination.slug, destination]));

/** The generated data of an Actions catalog slug, or `undefined` for other slugs. */
export function findActionsDestination(slug: string): ActionsDestinationData | undefined {
  return actionsBySlug.get(slug);
}

export function listActionsDestinations(): readonly ActionsDestinationData[] {
  return ACTIONS_DESTINATIONS;
}
