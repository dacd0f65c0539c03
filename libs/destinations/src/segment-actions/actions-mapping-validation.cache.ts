/**
 * mapping-kit checks the whole mapping of a subscription (every directive, every nested value) at each
 * `transform`, that is for every message, though the adapter hands it the same mapping until the
 * destination's config changes. A prepared mapping is made deeply frozen here (`frozenMapping`: a copy
 * nobody can change), and once mapping-kit has found it valid, its check of that mapping is skipped:
 * the same frozen content is valid again. Any other mapping is checked as before.
 *
 * mapping-kit's `transform` hands its check a fresh shallow copy of the mapping (`{ ...mapping }`), so a
 * prepared mapping is recognised by its entries: the same keys, in the same order, with the very same
 * values, found through its first object value (an object of the frozen copy, so of no other mapping).
 */
import type { JsonValue } from '../catalog/catalog-entry.types';

type Mapping = Readonly<Record<string, JsonValue>>;

/** Prepared mappings by their first object value, and whether mapping-kit found each valid. */
const preparedByAnchor = new WeakMap<object, { readonly mapping: Mapping; valid: boolean }>();

/** A deeply frozen copy of `mapping`, whose check mapping-kit makes once. */
export function frozenMapping(mapping: Mapping): Mapping {
  const frozen = deepFreeze(structuredClone(mapping)) as Mapping;
  const anchor = anchorOf(frozen);
  if (anchor) preparedByAnchor.set(anchor, { mapping: frozen, valid: false });
  return frozen;
}

function deepFreeze(value: unknown): unknown {
  if (value !== null && typeof value === 'object') {
    for (const nested of Object.values(value)) deepFreeze(nested);
    Object.freeze(value);
  }
  return value;
}

function anchorOf(mapping: object): object | undefined {
  for (const value of Object.values(mapping)) if (value !== null && typeof value === 'object') return value;
  return undefined;
}

/** The prepared mapping that `candidate` copies entry for entry, if any. */
function preparedCopiedBy(candidate: Record<string, unknown>) {
  const anchor = anchorOf(candidate);
  const prepared = anchor && preparedByAnchor.get(anchor);
  if (!prepared) return undefined;
  const keys = Object.keys(candidate);
  const preparedKeys = Object.keys(prepared.mapping);
  if (keys.length !== preparedKeys.length) return undefined;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    if (key !== preparedKeys[index] || candidate[key] !== prepared.mapping[key]) return undefined;
  }
  return prepared;
}

let installed = false;

/** Puts the cached check in place of mapping-kit's `validate`, which `transform` reads at each call. */
export function installMappingValidationCache(): void {
  if (installed) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const validation = require('@segment/actions-core/mapping-kit/validate') as {
    default: (mapping: unknown, ...rest: unknown[]) => void;
  };
  const check = validation.default;
  validation.default = (mapping, ...rest) => {
    const prepared =
      rest.length === 0 && mapping !== null && typeof mapping === 'object' && !Array.isArray(mapping)
        ? preparedCopiedBy(mapping as Record<string, unknown>)
        : undefined;
    if (prepared?.valid) return;
    check(mapping, ...rest);
    if (prepared) prepared.valid = true;
  };
  installed = true;
}
