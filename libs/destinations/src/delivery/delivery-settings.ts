/**
 * What the Config API must know about the settings the delivery adapters read: which parts are secrets
 * (encrypted before they enter an event, masked in responses and the audit trail) and which values the
 * adapters would refuse (checked once at write time, 400 code 3, rather than on every delivery). Each
 * destination's definition declares both (`secrets`, `checkSetting`); a function's instance has only
 * its `password` settings as secrets.
 */
import { isFunctionId, problemWithFunctionSetting } from '../catalog/function-catalog-entry';
import { findDestinationDefinition } from '../definitions';
import type { SettingSecrecy } from '../destination-definition';

export type { SettingSecrecy } from '../destination-definition';

/**
 * Header names whose values are credentials: `Authorization`, `X-API-Key`, and any naming a token,
 * secret, key, password or cookie.
 */
const SECRET_HEADER_NAME = /^(?:authorization|x-api-key)$|token|secret|key|password|cookie/i;

export function isSecretHeaderName(name: string): boolean {
  return SECRET_HEADER_NAME.test(name);
}

/** A secret literal in a subscription's mapping: where it is, and its value. */
export interface SubscriptionSecret {
  /** Index of the subscription in the setting's array. */
  entry: number;
  /** The header's name as written. */
  header: string;
  value: string;
}

/**
 * The subscriptions with every secret header value (a non-empty string under a secret name in an
 * entry's `mapping.headers`; directives such as `{"@path": ...}` are not literals and stay as they are)
 * replaced by `replace`'s answer. Other parts are shared, not copied; anything not shaped like
 * subscriptions comes back as it is.
 */
export function mapSubscriptionSecrets(
  value: unknown,
  replace: (secret: SubscriptionSecret) => unknown,
): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((entry: unknown, index) => {
    if (!isRecord(entry) || !isRecord(entry.mapping) || !isRecord(entry.mapping.headers)) return entry;
    const headers = entry.mapping.headers;
    if (!Object.entries(headers).some(([name, inner]) => isSecretLiteral(name, inner))) return entry;
    return {
      ...entry,
      mapping: {
        ...entry.mapping,
        headers: Object.fromEntries(
          Object.entries(headers).map(([name, inner]) => [
            name,
            isSecretLiteral(name, inner) ? replace({ entry: index, header: name, value: inner }) : inner,
          ]),
        ),
      },
    };
  });
}

function isSecretLiteral(name: string, value: unknown): value is string {
  return typeof value === 'string' && value !== '' && isSecretHeaderName(name);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function secrecyOfSetting(
  catalogSlug: string,
  setting: { readonly key: string; readonly type: string },
): SettingSecrecy | undefined {
  if (setting.type === 'password') return 'whole';
  return findDestinationDefinition(catalogSlug)?.secrets?.[setting.key];
}

/** Why the adapter of `catalogSlug` could never use this value, or `null`. Never quotes the value. */
export function problemWithDeliverySetting(catalogSlug: string, key: string, value: unknown): string | null {
  if (isFunctionId(catalogSlug)) return problemWithFunctionSetting(key, value);
  return findDestinationDefinition(catalogSlug)?.checkSetting?.(key, value) ?? null;
}

/** Whether `text` is a URL with a user name or password in it. */
export function urlHasCredentials(text: string): boolean {
  const url = parsedUrl(text);
  return url !== undefined && (url.username !== '' || url.password !== '');
}

/** The URL with its user name and password (those present) replaced by `mask`; other text unchanged. */
export function maskUrlCredentials(text: string, mask: string): string {
  const url = parsedUrl(text);
  if (url === undefined || (url.username === '' && url.password === '')) return text;
  const userinfo = `${url.username === '' ? '' : mask}${url.password === '' ? '' : `:${mask}`}`;
  return `${url.protocol}//${userinfo}@${url.host}${url.pathname}${url.search}${url.hash}`;
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text.trim());
  } catch {
    return undefined;
  }
}
