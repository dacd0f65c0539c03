/**
 * What a replay does to a stored message before routing it to the one destination being replayed to
 * (docs/tracking-api.md §12.4): the `integrations` object is replaced by
 * `{"All": false, "<Destination Name>": true}`, so the replayed copy reaches that destination and no
 * other, whatever the original said; everything else, the consent object `context.consent` included,
 * is kept as stored. The `messageId` is kept too.
 *
 * Returns a new message object with a new `integrations` object and the stored message's other values:
 * only what the replay rewrites is copied. The stored message is not touched. Nested values are shared
 * with it, as a live delivery hands the stored message itself to routing and to the destination (which
 * read messages, never change them); a replay holds as many messages in flight as a live consumer, and
 * a deep copy of each would double what they keep alive.
 */
import type { NormalizedMessage } from '@tributary/contracts';

export function prepareReplayMessage(
  message: NormalizedMessage,
  destinationDisplayName: string,
): NormalizedMessage {
  // Spread copies an own `__proto__` key (JSON.parse makes one) as a key, not as the prototype.
  return { ...message, integrations: { All: false, [destinationDisplayName]: true } };
}
