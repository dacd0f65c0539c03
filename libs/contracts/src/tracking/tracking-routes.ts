/**
 * The names every part of Tributary uses for the tracking API's routes and event types (docs/tracking-api.md §3, §6.1).
 */

/** The six Segment event types; a message's `type` must be one of these. */
export const EVENT_TYPES = ['track', 'identify', 'page', 'screen', 'group', 'alias'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Routes whose body is a batch envelope. Segment documents `import` as an alias of `batch`. */
export const BATCH_ROUTES = ['batch', 'import'] as const;
export type BatchRoute = (typeof BATCH_ROUTES)[number];

/** Routes whose body is one message; the route name is the event type (a body `type` is overridden). */
export const SINGLE_EVENT_ROUTES = EVENT_TYPES;
export type SingleEventRoute = EventType;

/** Every tracking route, named by the last path segment after `/v1/`. */
export const TRACKING_ROUTES = [...BATCH_ROUTES, ...SINGLE_EVENT_ROUTES] as const;
export type TrackingRoute = (typeof TRACKING_ROUTES)[number];

/** The path each route is served on, relative to wherever the API is mounted. */
export const TRACKING_ROUTE_PATHS: Readonly<Record<TrackingRoute, string>> = Object.freeze({
  batch: '/v1/batch',
  import: '/v1/import',
  track: '/v1/track',
  identify: '/v1/identify',
  page: '/v1/page',
  screen: '/v1/screen',
  group: '/v1/group',
  alias: '/v1/alias',
});

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}

export function isBatchRoute(route: TrackingRoute): route is BatchRoute {
  return (BATCH_ROUTES as readonly string[]).includes(route);
}

export function isTrackingRoute(value: unknown): value is TrackingRoute {
  return typeof value === 'string' && (TRACKING_ROUTES as readonly string[]).includes(value);
}

/**
 * The one-letter paths Segment's browser and mobile libraries post to (docs/browser-mobile.md §4, item 1):
 * analytics.js posts each event to `/v1/<first letter of its type>`, and the mobile libraries and
 * analytics.js in batching mode post batches to `/v1/b`. Each is an alias of a route above.
 */
export const SHORT_ROUTE_ALIASES: Readonly<Record<string, TrackingRoute>> = Object.freeze({
  t: 'track',
  i: 'identify',
  p: 'page',
  s: 'screen',
  g: 'group',
  a: 'alias',
  b: 'batch',
});

/** The tracking route a path segment after `/v1/` names, by its full name or its short alias. */
export function trackingRouteOf(segment: string): TrackingRoute | undefined {
  if (isTrackingRoute(segment)) return segment;
  return Object.hasOwn(SHORT_ROUTE_ALIASES, segment) ? SHORT_ROUTE_ALIASES[segment] : undefined;
}

/** Whether a path segment after `/v1/` is one of the short aliases (client-side libraries only). */
export function isShortRouteAlias(segment: string): boolean {
  return Object.hasOwn(SHORT_ROUTE_ALIASES, segment);
}
