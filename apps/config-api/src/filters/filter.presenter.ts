import { destinationName } from '@tributary/contracts';
import { DestinationRecord, FilterRecord } from '@tributary/config-domain';

/** Filters are returned flat, never wrapped (docs/config-api.md §2.6: C2 reads `name` from the top level). */
export function presentFilter(destination: DestinationRecord, filter: FilterRecord) {
  return {
    name: `${destinationName(destination)}/filters/${filter.filterId}`,
    title: filter.title,
    description: filter.description,
    if: filter.if,
    enabled: filter.enabled,
    actions: filter.actions,
  };
}
