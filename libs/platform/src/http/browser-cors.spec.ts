import { browserCorsHeaders, browserPreflightHeaders, isBrowserCorsPath } from './browser-cors';

describe('browser CORS', () => {
  it('applies to the tracking API under /v1/, not to the Config API or anything else', () => {
    expect(isBrowserCorsPath('/v1/t')).toBe(true);
    expect(isBrowserCorsPath('/v1/projects/K/settings')).toBe(true);
    expect(isBrowserCorsPath('/v1beta/workspaces')).toBe(false);
    expect(isBrowserCorsPath('/v1')).toBe(false);
    expect(isBrowserCorsPath('/token')).toBe(false);
    expect(isBrowserCorsPath('/analytics.js/v1/K/analytics.min.js')).toBe(false);
  });

  it('echoes the origin, varies on it, exposes Retry-After, and never allows credentials', () => {
    const headers = browserCorsHeaders('https://shop.example');
    expect(headers).toEqual({
      'access-control-allow-origin': 'https://shop.example',
      'access-control-expose-headers': 'Retry-After, X-RateLimit-Reset, X-Request-Id',
      vary: 'Origin',
    });
    expect(browserCorsHeaders(undefined)['access-control-allow-origin']).toBe('*');
    expect(Object.keys(browserPreflightHeaders('https://shop.example', undefined))).not.toContain(
      'access-control-allow-credentials',
    );
  });

  it('echoes the requested headers when they are a list of header names, else names what analytics.js sends', () => {
    expect(browserPreflightHeaders('o', 'authorization, x-retry-count')['access-control-allow-headers']).toBe(
      'authorization, x-retry-count',
    );
    for (const odd of [undefined, '', '   ', 'a\r\nb', 'bad header', 'x,,y']) {
      expect(browserPreflightHeaders('o', odd)['access-control-allow-headers']).toBe(
        'Authorization, Content-Type, X-Retry-Count',
      );
    }
    expect(browserPreflightHeaders('o', undefined)).toMatchObject({
      'access-control-allow-methods': 'POST, GET, HEAD, OPTIONS',
      'access-control-max-age': '86400',
    });
  });
});
