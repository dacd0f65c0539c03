import { isShortRouteAlias } from '@tributary/contracts';

/** User-Agent prefixes of Segment's mobile libraries (analytics-swift sends `analytics-ios/<v>`). */
const MOBILE_LIBRARY_AGENT = /^analytics-(ios|android|kotlin|swift|react-native)\//;

/**
 * Whether a tracking request comes from a client-side library (a browser or a phone), whose address
 * is its user's and so becomes `context.ip` (as Segment does). Decided by the request alone, never by
 * its messages: a short route (`/v1/t`, `/v1/b`...) only those libraries use, an `Origin` header
 * (browsers send it on every cross-origin request), or a mobile library's User-Agent (the legacy ones
 * post to `/v1/batch` and `/v1/import`). A server-side library's address is its server's; filling it
 * in would tell destinations where a data centre is, so those messages are left as sent.
 */
export function isClientSideRequest(
  routeSegment: string,
  headers: { origin?: string; 'user-agent'?: string },
): boolean {
  if (isShortRouteAlias(routeSegment) || headers.origin !== undefined) return true;
  const agent = headers['user-agent'];
  return agent !== undefined && MOBILE_LIBRARY_AGENT.test(agent);
}
