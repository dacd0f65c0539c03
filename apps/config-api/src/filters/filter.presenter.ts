import { DestinationRecord, FilterRecord } from '@tributary/config-domain';
import { destinationResourceName } from '../destinations/destination.presenter';

/** Filters are returned flat, never wrapped (docs/config-api.md §2.6: C2 reads `name` from the top level). */
export function presentFilter(destination: DestinationRecord, filter: FilterRecord) {
  return {
    name: `${destinationResourceName(destination)}/filters/${filter.filterId}`,
    title: filter.title,
    description: filter.description,
    if: filter.if,
    enabled: filter.enabled,
    actions: filter.actions,
  };
}
