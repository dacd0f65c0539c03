/**
 * Field paths of destination filters (`properties.address.city`) are tenant input that the router
 * follows through live message objects. A segment named after a JavaScript prototype link would lead
 * from the message into the built-in objects every tenant shares (`properties.__proto__` is
 * `Object.prototype`), so such segments are refused wherever a path can be given, and the router's own
 * lookups follow own properties only.
 */

/** Segments that name a prototype link rather than data: refused in every filter field path. */
export const FORBIDDEN_FIELD_PATH_SEGMENTS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** The first segment of `segments` that is a prototype link, if any. */
export function forbiddenFieldPathSegment(segments: readonly string[]): string | undefined {
  return segments.find((segment) => FORBIDDEN_FIELD_PATH_SEGMENTS.has(segment));
}

export function describeForbiddenSegment(path: string, segment: string): string {
  return (
    `the field path ${JSON.stringify(path)} contains "${segment}"; ` +
    `${[...FORBIDDEN_FIELD_PATH_SEGMENTS].map((name) => `"${name}"`).join(', ')} cannot be used as field names`
  );
}

/**
 * The value at a dot-separated `path` in `root`, following own properties only (array indexes are own
 * properties of their array), so a lookup never leaves the message for a prototype.
 */
export function ownValueAtPath(root: unknown, path: string): unknown {
  let current: unknown = root;
  for (const segment of path.split('.')) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
