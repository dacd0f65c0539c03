/** The prefix Segment's Public API is served under, beside `/v1beta` (docs/public-api.md). */
export const PUBLIC_API_PREFIX = '/public-api';

/** True for `/public-api`, `/public-api/...` and `/public-api?...`, not for `/public-apis`. */
export function isPublicApiPath(url: string): boolean {
  return (
    url.startsWith(PUBLIC_API_PREFIX) &&
    (url.length === PUBLIC_API_PREFIX.length || '/?'.includes(url[PUBLIC_API_PREFIX.length]))
  );
}
