/**
 * Entries the catalog used to list without being able to deliver to them: creating one is refused with
 * the name of the destination that replaces it (`undefined` when none does). The catalog's entries
 * themselves are the destinations' definitions (`DESTINATION_DEFINITIONS`, `definitions.ts`).
 */
export const RETIRED_CATALOG_DESTINATIONS: Readonly<Record<string, string | undefined>> = {
  'google-analytics': 'actions-google-analytics-4',
  mixpanel: 'actions-mixpanel',
  amplitude: 'actions-amplitude',
  slack: 'actions-slack',
  segment: undefined,
};
