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
  const copy = deepCopy(message) as NormalizedMessage;
  copy.integrations = { All: false, [destinationDisplayName]: true };
  return copy;
}

/**
 * A deep copy of what JSON holds (plain objects, arrays, primitives), walked in code: a stored message
 * comes from JSON, and `structuredClone`'s serialization costs several times as much per message,
 * which a replay pays for every message it sends. Anything else (a Date) goes to `structuredClone`.
 */
function deepCopy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(deepCopy);
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const child = deepCopy((value as Record<string, unknown>)[key]);
    // JSON.parse makes `__proto__` an own key; assigning it would set the copy's prototype instead.
    if (key === '__proto__')
      Object.defineProperty(copy, key, {
        value: child,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = child;
  }
  return copy;
}
