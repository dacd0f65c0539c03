/**
 * A source's `allowed_origins`: the web origins whose pages may send it events from a browser. Empty
 * means any origin, since a write key in a page is public anyway and most sites never set this; a
 * list stops another site from filling the source with events under a copied key. Only requests that
 * carry an `Origin` header (browsers) are checked: mobile apps and servers send none.
 *
 * An entry is `scheme://host[:port]` (http or https, no path), or `scheme://*.domain[:port]` for any
 * subdomain of `domain` (not `domain` itself). Entries are kept in their normalized form (lower case,
 * default port dropped), which is also the form browsers send.
 */

export const MAX_ALLOWED_ORIGINS = 100;

const WILDCARD_PREFIX = '*.';

/** The normalized entry, or why it is not one. */
export function parseAllowedOrigin(entry: unknown): { origin: string } | { problem: string } {
  if (typeof entry !== 'string' || entry.trim() === '') return { problem: 'must be a non-empty string' };
  const text = entry.trim();
  const schemeEnd = text.indexOf('://');
  const wildcard = schemeEnd > 0 && text.startsWith(WILDCARD_PREFIX, schemeEnd + 3);
  // The URL parser does not take `*` in a host: a stand-in label is parsed, then put back.
  const parseable = wildcard
    ? `${text.slice(0, schemeEnd + 3)}wildcard-label.${text.slice(schemeEnd + 3 + WILDCARD_PREFIX.length)}`
    : text;
  let url: URL;
  try {
    url = new URL(parseable);
  } catch {
    return { problem: `"${text}" is not an origin such as https://www.example.com` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: `"${text}" must start with http:// or https://` };
  }
  if (url.username || url.password || url.search || url.hash || !/^[a-z]+:\/\/[^/]+\/?$/i.test(text)) {
    return { problem: `"${text}" must be an origin only (scheme, host and port), without a path` };
  }
  const origin = url.origin;
  return { origin: wildcard ? origin.replace('://wildcard-label.', `://${WILDCARD_PREFIX}`) : origin };
}

/** Whether a request's `Origin` header is one a source with these allowed origins accepts. */
export function isOriginAllowed(allowedOrigins: readonly string[] | undefined, origin: string): boolean {
  if (allowedOrigins === undefined || allowedOrigins.length === 0) return true;
  const sent = origin.toLowerCase();
  for (const allowed of allowedOrigins) {
    if (allowed === sent) return true;
    const star = allowed.indexOf(`://${WILDCARD_PREFIX}`);
    if (star < 0) continue;
    const scheme = allowed.slice(0, star + 3);
    const suffix = allowed.slice(star + 3 + 1); // `.example.com[:port]`
    if (sent.startsWith(scheme) && sent.endsWith(suffix) && sent.length > scheme.length + suffix.length) {
      const label = sent.slice(scheme.length, sent.length - suffix.length);
      if (!label.includes(':') && !label.includes('/')) return true;
    }
  }
  return false;
}
