/**
 * The settings document Segment's libraries fetch before sending anything (docs/browser-mobile.md §1b,
 * §2, §5). What matters:
 * - `integrations["Segment.io"]` with `apiKey` (analytics.js puts it in every event as `writeKey`)
 *   and `apiHost`/`protocol` pointing back here: analytics-next, analytics-swift and analytics-kotlin
 *   follow the settings' `apiHost` over their configured one;
 * - `metrics.sampleRate` 0, so that no library reports its own metrics to Segment's host;
 * - every top-level key an object or array, never `null` (analytics-kotlin fails on `null`);
 * - nothing that makes analytics.js load device-mode destinations, middleware or plugins from a CDN.
 */

/** Where clients reach the tracking API: `apiHost` is host and path without scheme (`t.example.com/v1`). */
export interface TrackingApiAddress {
  apiHost: string;
  protocol: 'http' | 'https';
}

/** From `PUBLIC_BASE_URL` (a path prefix is kept), or from the scheme and host a request came with. */
export function trackingApiAddress(
  publicBaseUrl: string | undefined,
  request: { protocol: string; host: string },
): TrackingApiAddress {
  if (publicBaseUrl !== undefined) {
    const url = new URL(publicBaseUrl);
    const prefix = url.pathname.replace(/(?<!\/)\/+$/, '');
    return { apiHost: `${url.host}${prefix}/v1`, protocol: url.protocol === 'http:' ? 'http' : 'https' };
  }
  return { apiHost: `${request.host}/v1`, protocol: request.protocol === 'http' ? 'http' : 'https' };
}

export function presentProjectSettings(writeKey: string, address: TrackingApiAddress) {
  return {
    integrations: {
      'Segment.io': {
        apiKey: writeKey,
        apiHost: address.apiHost,
        protocol: address.protocol,
        addBundledMetadata: true,
        unbundledIntegrations: [],
        maybeBundledConfigIds: {},
      },
    },
    plan: {},
    edgeFunction: {},
    middlewareSettings: {},
    enabledMiddleware: {},
    remotePlugins: [],
    legacyVideoPluginsEnabled: false,
    metrics: { sampleRate: 0 },
    consentSettings: { allCategories: [], hasUnmappedDestinations: false },
  };
}
