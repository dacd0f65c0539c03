import { ConfigApiError } from '@tributary/config-api-access';

const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/**
 * Reads the slug of a resource created under `parentName` from the name the client sent:
 * `workspaces/ws/sources/js` under `workspaces/ws` gives `js`. A bare slug is accepted too.
 */
export function slugUnder(parentName: string, collection: string, name: string, field: string): string {
  const prefix = `${parentName}/${collection}/`;
  const slug = name.startsWith(prefix) ? name.slice(prefix.length) : name.includes('/') ? undefined : name;
  if (slug === undefined)
    throw ConfigApiError.invalidArgument(`${field} must be ${prefix}<slug>, got "${name}"`);
  if (!SLUG.test(slug)) {
    throw ConfigApiError.invalidArgument(
      `${field}: "${slug}" is not a valid slug (letters, digits, "-" and "_", at most 100 characters)`,
    );
  }
  return slug;
}
