'use strict';
/**
 * Sends third-party Config API clients to a local Tributary instead of Segment.
 *
 * typewriter@7.4.1 (got@9) and segment-typescript-api@0.6.10 (cross-fetch -> node-fetch@2) both
 * hard-code `https://platform.segmentapis.com/v1beta`. Both libraries end in Node's
 * `https.request`, which they look up on the `https` module object at call time, so replacing
 * that property is enough and the clients themselves stay unchanged. `globalThis.fetch` (undici)
 * is wrapped too, so a client that moves to the built-in fetch is still covered.
 *
 * A request to host `platform.segmentapis.com` is rewritten to
 * `http://127.0.0.1:$TRIBUTARY_CONFIG_API_PORT` with the same method, path, query, headers
 * (Authorization included) and body. The port is read on every request, so a jest test can load
 * this module first and set the variable after its server has started.
 *
 * If the variable is unset the request fails locally: a test must never send a token to Segment.
 *
 * typewriter also reports its own usage to `https://api.segment.io/v1/batch` (analytics-node,
 * errors swallowed). A test run must not phone home, so requests to that host fail at DNS lookup
 * time with ENOTFOUND, exactly as they would offline.
 *
 * Usage: `node -r ./test/support/segment-api-redirect.preload.js <client>`, or inside jest
 * `import '../support/segment-api-redirect.preload';` before the client module.
 */
const http = require('http');
const https = require('https');
const { URL, urlToHttpOptions } = require('url');

const REDIRECTED_HOST = 'platform.segmentapis.com';
const BLOCKED_TELEMETRY_HOST = 'api.segment.io';
const PORT_VARIABLE = 'TRIBUTARY_CONFIG_API_PORT';
// Marks the patched functions; jest may evaluate this file once per test file, but `https` is
// the one process-wide core module, so the patch must be applied only once.
const INSTALLED = Symbol.for('tributary.segmentApiRedirect.installed');

function localPort() {
  const raw = process.env[PORT_VARIABLE];
  const port = Number(raw);
  if (!raw || !Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new Error(
      `${PORT_VARIABLE} is not set to a port (got ${JSON.stringify(raw)}); ` +
        `refusing to send a request to ${REDIRECTED_HOST}`,
    );
  }
  return port;
}

function hostOf(options) {
  // `host` may carry a port ("example.com:443"); `hostname` never does and wins when present.
  const host = options.hostname || options.host || '';
  return String(host).replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
}

/** Merges the (url, options, callback) / (options, callback) overloads of https.request. */
function normaliseRequestArguments(args) {
  let [first, second, third] = args;
  let options;
  let callback;
  if (typeof first === 'string' || first instanceof URL) {
    options = urlToHttpOptions(typeof first === 'string' ? new URL(first) : first);
    if (typeof second === 'function') {
      callback = second;
    } else {
      Object.assign(options, second);
      callback = third;
    }
  } else {
    options = Object.assign({}, first);
    callback = second;
  }
  return { options, callback };
}

function toLocalOptions(options) {
  const local = Object.assign({}, options, {
    protocol: 'http:',
    hostname: '127.0.0.1',
    host: '127.0.0.1',
    port: localPort(),
  });
  // An https.Agent cannot carry a plain-http request, and TLS settings mean nothing here.
  delete local.agent;
  delete local.servername;
  delete local._defaultAgent;
  delete local.defaultPort;
  return local;
}

function refuseLookup(hostname, _options, callback) {
  const error = new Error(`getaddrinfo ENOTFOUND ${hostname} (blocked by segment-api-redirect)`);
  error.code = 'ENOTFOUND';
  error.hostname = hostname;
  process.nextTick(callback, error);
}

function install() {
  if (https.request[INSTALLED]) return;

  const originalRequest = https.request;

  function redirectingRequest(...args) {
    const { options, callback } = normaliseRequestArguments(args);
    const host = hostOf(options);
    if (host === BLOCKED_TELEMETRY_HOST) {
      return originalRequest.call(https, Object.assign(options, { lookup: refuseLookup }), callback);
    }
    if (host !== REDIRECTED_HOST) {
      return originalRequest.apply(https, args);
    }
    const local = toLocalOptions(options);
    return callback ? http.request(local, callback) : http.request(local);
  }

  function redirectingGet(...args) {
    const request = redirectingRequest(...args);
    request.end();
    return request;
  }

  redirectingRequest[INSTALLED] = true;
  https.request = redirectingRequest;
  https.get = redirectingGet;

  if (typeof globalThis.fetch === 'function' && !globalThis.fetch[INSTALLED]) {
    const originalFetch = globalThis.fetch;
    const redirectingFetch = async function (input, init) {
      const isRequest = typeof Request !== 'undefined' && input instanceof Request;
      const url = new URL(isRequest ? input.url : String(input));
      if (url.protocol === 'https:' && hostOf(url) === BLOCKED_TELEMETRY_HOST) {
        throw new TypeError(`fetch failed: ${BLOCKED_TELEMETRY_HOST} is blocked by segment-api-redirect`);
      }
      if (url.protocol !== 'https:' || hostOf(url) !== REDIRECTED_HOST) {
        return originalFetch(input, init);
      }
      const localUrl = `http://127.0.0.1:${localPort()}${url.pathname}${url.search}`;
      return originalFetch(isRequest ? new Request(localUrl, input) : localUrl, init);
    };
    redirectingFetch[INSTALLED] = true;
    globalThis.fetch = redirectingFetch;
  }
}

install();

module.exports = { REDIRECTED_HOST, BLOCKED_TELEMETRY_HOST, PORT_VARIABLE };
