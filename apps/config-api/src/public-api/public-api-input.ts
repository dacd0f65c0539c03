import { PublicApiError } from './public-api.error';

/** Public API masks secrets with ten bullets; a value sent back containing one keeps the stored secret. */
export const PUBLIC_MASK = '\u2022'.repeat(10);

export function optionalBoolean(body: Record<string, unknown>, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw PublicApiError.validation(`${field} must be true or false`, field);
  return value;
}

export function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw PublicApiError.validation(`${field} must be a string`, field);
  return value;
}

export function requiredString(body: Record<string, unknown>, field: string): string {
  const value = optionalString(body, field);
  if (value === undefined || value === '') throw PublicApiError.validation(`${field} is required`, field);
  return value;
}

/** A flat settings map `{key: value}`. */
export function settingsMap(value: unknown, field = 'settings'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw PublicApiError.validation(`${field} must be an object of settings`, field);
  }
  return value as Record<string, unknown>;
}

/** PATCH semantics of settings: keys merge into the stored ones, and a key set to null is removed. */
export function mergedSettings(
  stored: Record<string, unknown>,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  const merged = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
