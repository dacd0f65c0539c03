/**
 * The library's version, sent as `context.library.version` and in the `User-Agent` header. Kept equal to
 * `version` in this package's package.json (a unit test checks it), because a published build must not
 * read its own package.json at run time.
 */
export const VERSION = '0.1.0';

/** The name sent as `context.library.name`. */
export const LIBRARY_NAME = '@tributary/analytics-client';
