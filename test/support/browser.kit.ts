// Real Chromium (Debian's, driven by playwright-core) against Tributary, for the browser library's
// tests: a page server on its own loopback origin (so every call to Tributary is cross-origin and
// CORS is exercised), the page that pastes Segment's snippet, and one that loads the npm package's
// UMD build and calls `AnalyticsBrowser.load`.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Browser, BrowserContext, Page, Request, Response } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Chromium is installed by `.ci/run`; a machine without it cannot run these tests, and says so. */
export const chromiumAvailable = existsSync(CHROMIUM_PATH);

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
}

const UMD_DIRECTORY = join(dirname(require.resolve('@segment/analytics-next/package.json')), 'dist', 'umd');

/**
 * Segment's snippet as a site pastes it, with only the host changed: a stub `analytics` array whose
 * methods queue their calls (each event call with the page context of its moment, as the snippet
 * does), and `load` inserting the loader script from `<cdn>/analytics.js/v1/<key>/analytics.min.js`.
 * `_cdn` is set because analytics.js derives its CDN from the script URL only for https pages
 * (docs/browser-mobile.md §1a(ii)); a plain-http test page must name it.
 */
export function snippetPage(
  tributaryUrl: string,
  writeKey: string,
  calls: string,
  loadOptions?: Record<string, unknown>,
): string {
  return `<!doctype html>
<html><head><title>Tributary snippet test</title>
<script>
!function(){
  var analytics = window.analytics = window.analytics || [];
  if (analytics.initialize) return;
  if (analytics.invoked) { window.console && console.error && console.error('Segment snippet included twice.'); return; }
  analytics.invoked = true;
  analytics.methods = ['trackSubmit','trackClick','trackLink','trackForm','pageview','identify','reset','group',
    'track','ready','alias','debug','page','screen','once','off','on','addSourceMiddleware',
    'addIntegrationMiddleware','setAnonymousId','addDestinationMiddleware','register'];
  analytics.factory = function (method) {
    return function () {
      if (window.analytics.initialized) return window.analytics[method].apply(window.analytics, arguments);
      var args = Array.prototype.slice.call(arguments);
      if (['track','screen','alias','group','page','identify'].indexOf(method) > -1) {
        var canonical = document.querySelector("link[rel='canonical']");
        args.push({ __t: 'bpc', c: (canonical && canonical.getAttribute('href')) || undefined,
          p: location.pathname, u: location.href, s: location.search, t: document.title, r: document.referrer });
      }
      args.unshift(method);
      analytics.push(args);
      return analytics;
    };
  };
  for (var i = 0; i < analytics.methods.length; i++) {
    var key = analytics.methods[i];
    analytics[key] = analytics.factory(key);
  }
  analytics.load = function (writeKey, options) {
    var script = document.createElement('script');
    script.type = 'text/javascript';
    script.async = true;
    script.setAttribute('data-global-segment-analytics-key', 'analytics');
    script.src = '${tributaryUrl}/analytics.js/v1/' + writeKey + '/analytics.min.js';
    var first = document.getElementsByTagName('script')[0];
    first.parentNode.insertBefore(script, first);
    analytics._loadOptions = options;
  };
  analytics._writeKey = ${JSON.stringify(writeKey)};
  analytics._cdn = ${JSON.stringify(tributaryUrl)};
  analytics.SNIPPET_VERSION = '5.2.0';
  analytics.load(${JSON.stringify(writeKey)}${loadOptions ? `, ${JSON.stringify(loadOptions)}` : ''});
  ${calls}
}();
</script></head><body><h1>Snippet</h1></body></html>`;
}

/** The npm package's UMD build (`window.AnalyticsNext`), loaded by a script tag from the page's own
 *  origin, with `AnalyticsBrowser.load({ writeKey, cdnURL })` pointing at Tributary. */
export function npmPackagePage(tributaryUrl: string, writeKey: string, calls: string): string {
  return `<!doctype html>
<html><head><title>Tributary npm test</title>
<script src="/umd/index.js"></script>
<script>
  window.analytics = AnalyticsNext.AnalyticsBrowser.load({ writeKey: ${JSON.stringify(writeKey)}, cdnURL: ${JSON.stringify(tributaryUrl)} });
  window.analytics.ready(function () { window.analyticsReady = true; });
  ${calls}
</script></head><body><h1>npm</h1></body></html>`;
}

/** Serves `pages` (path → HTML) and the package's `dist/umd/` files under `/umd/` on a free port. */
export async function startPageServer(
  pages: Map<string, string>,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const page = pages.get(path);
    if (page !== undefined) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end(page);
      return;
    }
    const umd = /^\/umd\/([A-Za-z0-9._-]+\.js)$/.exec(path);
    if (umd && existsSync(join(UMD_DIRECTORY, umd[1]))) {
      response.writeHead(200, { 'content-type': 'application/javascript; charset=utf-8' });
      response.end(readFileSync(join(UMD_DIRECTORY, umd[1])));
      return;
    }
    // Chromium asks every origin for its icon; no 404 to read as a failure in the console.
    response.writeHead(path === '/favicon.ico' ? 204 : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What the page asked of Tributary, and the console, for assertions and for failure messages. */
export interface PageTraffic {
  requests: Request[];
  responses: Response[];
  console: string[];
}

export function recordTraffic(page: Page, tributaryUrl: string): PageTraffic {
  const traffic: PageTraffic = { requests: [], responses: [], console: [] };
  page.on('request', (request) => {
    if (request.url().startsWith(tributaryUrl)) traffic.requests.push(request);
  });
  page.on('response', (response) => {
    if (response.url().startsWith(tributaryUrl)) traffic.responses.push(response);
  });
  page.on('console', (message) => traffic.console.push(`${message.type()}: ${message.text()}`));
  page.on('pageerror', (error) => traffic.console.push(`pageerror: ${error.message}`));
  return traffic;
}

/** `ajs_anonymous_id` as the page's cookie holds it (older versions stored it JSON-quoted). */
export async function anonymousIdCookie(context: BrowserContext): Promise<string | undefined> {
  const cookie = (await context.cookies()).find(({ name }) => name === 'ajs_anonymous_id');
  if (!cookie) return undefined;
  return decodeURIComponent(cookie.value).replace(/^"|"$/g, '');
}

export function describeTraffic(traffic: PageTraffic): string {
  const requests = traffic.requests.map((request) => `${request.method()} ${request.url()}`);
  return [...requests, ...traffic.console].join('\n');
}
