/** `http://host:port` at the start of an absolute-form request target. */
const ABSOLUTE_FORM_ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * Rewrites a request URL before routing, so that what real clients send reaches the right route:
 * - `//` collapsed and trailing slashes dropped (C6 and C9 send both; Node's OAuth client `//token`);
 * - Config API custom verbs, a colon suffix on the last segment (`source-connections:batchCreateConnections`),
 *   become a segment of their own (`source-connections/@batchCreateConnections`), since routers read
 *   `:` as the start of a parameter;
 * - a full resource name where a slug is expected (`…/sources/workspaces/ws/sources/js`, from C2's
 *   cleanup, and source-connection deletes) is cut to its last segment;
 * - the absolute form (`http://host/v1/batch`), which RFC 9112 §3.2.2 has servers accept, becomes
 *   its path and query.
 */
export function normalizeRequestUrl(rawUrl: string | undefined): string {
  let url = rawUrl ?? '/';
  const origin = ABSOLUTE_FORM_ORIGIN.exec(url);
  if (origin) {
    url = url.slice(origin[0].length);
    if (!url.startsWith('/')) url = `/${url}`;
  }
  const queryStart = url.indexOf('?');
  const query = queryStart >= 0 ? url.slice(queryStart) : '';
  let path = (queryStart >= 0 ? url.slice(0, queryStart) : url).replace(/\/{2,}/g, '/');
  if (path.length > 1) path = path.replace(/(?<!\/)\/+$/, '');
  if (path.startsWith('/v1beta/')) path = rewriteConfigApiPath(path);
  return path + query;
}

function rewriteConfigApiPath(path: string): string {
  const lastSlash = path.lastIndexOf('/');
  const lastSegment = path.slice(lastSlash + 1).replace(/%3A/gi, ':');
  const verb = /^([^:]*):([A-Za-z][A-Za-z0-9]*)$/.exec(lastSegment);
  let rewritten = verb ? `${path.slice(0, lastSlash + 1)}${verb[1]}/@${verb[2]}` : path;
  rewritten = rewritten.replace(
    /\/(sources|source-connections)\/workspaces\/[^/]+\/sources\/([^/]+)(?=\/|$)/,
    (_match, collection: string, sourceSlug: string) => `/${collection}/${sourceSlug}`,
  );
  return rewritten;
}
