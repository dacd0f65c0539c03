/** The log's durable consumer of one destination: stable across restarts, unique per source incarnation. */
export const destinationConsumerName = (sourceId: string, destinationSlug: string) =>
  `destination_${sourceId}_${destinationSlug}`;

export const destinationKey = (sourceId: string, destinationSlug: string) => `${sourceId}/${destinationSlug}`;
