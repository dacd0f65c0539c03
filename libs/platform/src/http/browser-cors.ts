/**
 * CORS for the tracking API's `/v1/*` paths, which web pages on any origin call (docs/browser-mobile.md
 * §5): analytics.js fetches its settings and posts events cross-origin, with `Authorization` (so a
 * preflight) from 1.84 on. Every answer, refusals and errors included, must carry
 * `Access-Control-Allow-Origin`, or the page cannot read the status and retries a refused event as a
 * network failure. Nothing here reads cookies, so credentials are never allowed. The origin is
 * echoed rather than `*` because a source may restrict its origins (`allowed_origins`): the answer
 * then differs by origin, which `Vary: Origin` tells caches.
 *
 * Only requests that carry `Origin` (browsers) get the headers: server and mobile clients send none,
 * and their requests cost a single header lookup.
 */

/** The paths CORS applies to: the tracking API under `/v1/` (not the Config API's `/v1beta`). */
export function isBrowserCorsPath(path: string): boolean {
  return path.startsWith('/v1/');
}

/** Headers a page may read besides the safelisted ones: the browser library honours `Retry-After`
 *  on 429 only when it can read it. */
const EXPOSED_HEADERS = 'Retry-After, X-RateLimit-Reset, X-Request-Id';
const ALLOWED_METHODS = 'POST, GET, HEAD, OPTIONS';
/** What analytics.js sends: `Authorization` (1.84+), `Content-Type: text/plain`, `X-Retry-Count` on retries. */
const DEFAULT_ALLOWED_HEADERS = 'Authorization, Content-Type, X-Retry-Count';
/** A day: browsers cap it lower anyway (Chromium at 2 h). */
const PREFLIGHT_MAX_AGE_SECONDS = '86400';
/** `Access-Control-Request-Headers` as browsers send it: comma-separated header names. */
const HEADER_NAME_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;

/** The headers of every answer to a request that carries `Origin` (`*` when the origin is unknown,
 *  as on the HTTP edge's refusals of requests it could not read). */
export function browserCorsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) {
    return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS };
  }
  return {
    'access-control-allow-origin': origin,
    'access-control-expose-headers': EXPOSED_HEADERS,
    vary: 'Origin',
  };
}

/**
 * The answer to a preflight (`OPTIONS`): 204 for any path under `/v1/`, before authentication and
 * rate limiting, since a preflight carries neither the write key nor the body. The requested headers
 * are echoed so that a site adding its own (the library's `deliveryStrategy.config.headers`) works.
 */
export function browserPreflightHeaders(
  origin: string | undefined,
  requestedHeaders: string | undefined,
): Record<string, string> {
  const requested = requestedHeaders?.trim();
  return {
    ...browserCorsHeaders(origin),
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers':
      requested && HEADER_NAME_LIST.test(requested) ? requested : DEFAULT_ALLOWED_HEADERS,
    'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
    vary: 'Origin, Access-Control-Request-Headers',
  };
}
