/**
 * The built-in destinations, in catalog order. Adding one is a folder with its definition and adapter
 * beside it, and one line here (docs/destinations.md, "Adding a destination").
 */
import type { DestinationDefinition } from './destination-definition';
import { postgresDefinition } from './postgres/postgres.definition';
import { ACTIONS_DEFINITIONS } from './segment-actions/actions.definitions';
import { webhooksDefinition } from './webhooks/webhooks.definition';

export const DESTINATION_DEFINITIONS: readonly DestinationDefinition[] = [
  webhooksDefinition,
  postgresDefinition,
  // Segment's open-source Actions destinations, one per generated entry (segment-actions/).
  ...ACTIONS_DEFINITIONS,
];

const definitionsBySlug = new Map(
  DESTINATION_DEFINITIONS.map((definition) => [definition.catalog.slug, definition]),
);

/** The definition of a built-in catalog slug; `undefined` for a function id or an unknown slug. */
export function findDestinationDefinition(slug: string): DestinationDefinition | undefined {
  return definitionsBySlug.get(slug);
}
