/**
 * What a replay does to a stored message before routing it to the one destination being replayed to
 * (docs/tracking-api.md §12.4): the `integrations` object is replaced by
 * `{"All": false, "<Destination Name>": true}`, so the replayed copy reaches that destination and no
 * other, whatever the original said; everything else, the consent object `context.consent` included,
 * is kept as stored. The `messageId` is kept too.
 *
 * Returns a deep copy; the stored message is not touched.
 */
import type { NormalizedMessage } from '@tributary/contracts';

export function prepareReplayMessage(
  message: NormalizedMessage,
  destinationDisplayName: string,
): NormalizedMessage {
  const copy = structuredClone(message);
  copy.integrations = { All: false, [destinationDisplayName]: true };
  return copy;
}
