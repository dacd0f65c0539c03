import { invalidArgument } from './decider';

/**
 * Update-mask semantics of the Config API (docs/config-api.md §1.6):
 * - a path in the mask sets the field, to its zero value when the body lacks it;
 * - a field in the body but not in the mask is ignored;
 * - paths may carry the resource prefix (`destination.enabled`) or not (`enabled`, as filters send);
 * - without a mask, the mask is the set of updatable fields present in the body.
 *
 * `zeroValues` lists every updatable field path (dotted for nested ones such as `rules.events`)
 * with the value it takes when masked but absent.
 */
export function resolveUpdateMask(
  resourceKey: string,
  resourceBody: Record<string, unknown>,
  maskPaths: readonly string[] | undefined,
  zeroValues: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const paths = maskPaths ?? presentFieldPaths(resourceBody, zeroValues);
  const changes: Record<string, unknown> = {};
  for (const rawPath of paths) {
    const path = stripResourcePrefix(resourceKey, String(rawPath).trim());
    // Own keys only: `in` would also accept names every object inherits (`constructor`, `__proto__`).
    if (!Object.hasOwn(zeroValues, path)) {
      throw invalidArgument(
        `update_mask path "${rawPath}" is not an updatable field of ${resourceKey}; ` +
          `updatable: ${Object.keys(zeroValues).join(', ')}`,
      );
    }
    const value = valueAtPath(resourceBody, path);
    changes[path] = value === undefined || value === null ? structuredClone(zeroValues[path]) : value;
  }
  return changes;
}

function stripResourcePrefix(resourceKey: string, path: string): string {
  return path.startsWith(`${resourceKey}.`) ? path.slice(resourceKey.length + 1) : path;
}

function presentFieldPaths(
  body: Record<string, unknown>,
  zeroValues: Readonly<Record<string, unknown>>,
): string[] {
  // Only top-level fields: a body without a mask replaces whole fields, never parts of one.
  return Object.keys(zeroValues).filter((path) => !path.includes('.') && body[path] !== undefined);
}

function valueAtPath(body: Record<string, unknown>, path: string): unknown {
  let current: unknown = body;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
