/**
 * What the Config API must know about the settings the delivery adapters read: which parts are secrets
 * (encrypted before they enter an event, masked in responses and the audit trail) and which values the
 * adapters would refuse (checked once at write time, 400 code 3, rather than on every delivery).
 */
import { problemWithConnectionString } from './adapters/postgres/postgres-connection';
import { problemWithWebhookHeaders } from './adapters/webhooks/webhook-settings.validator';
import { findActionsDestination, SUBSCRIPTIONS_SETTING } from '../catalog/actions/actions-catalog.entries';
import { problemWithActionsSubscriptions } from '../catalog/actions/actions-subscriptions.validator';
import { isFunctionId, problemWithFunctionSetting } from '../catalog/function-catalog-entry';

/**
 * - `whole`: the value is a secret (`password` settings);
 * - `url-credentials`: a URL whose `user:password@` part is a secret; with credentials the whole URL is
 *   stored encrypted, since the credentials cannot be encrypted apart from it;
 * - `map-values`: every value of the map is a secret (webhook `headers` carry API keys and tokens);
 * - `subscription-headers`: an Actions destination's `subscriptions`, whose mappings' `headers` may
 *   carry credentials as literal values (`actions-webhook`'s `Authorization`): those whose header
 *   name says so (`isSecretHeaderName`) are secrets.
 */
export type SettingSecrecy = 'whole' | 'url-credentials' | 'map-values' | 'subscription-headers';

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

const SECRET_PARTS: Readonly<Record<string, Readonly<Record<string, SettingSecrecy>>>> = {
  webhooks: { url: 'url-credentials', headers: 'map-values' },
};

export function secrecyOfSetting(
  catalogSlug: string,
  setting: { readonly key: string; readonly type: string },
): SettingSecrecy | undefined {
  if (setting.type === 'password') return 'whole';
  if (setting.key === SUBSCRIPTIONS_SETTING && findActionsDestination(catalogSlug))
    return 'subscription-headers';
  return SECRET_PARTS[catalogSlug]?.[setting.key];
}

/** Why the adapter of `catalogSlug` could never use this value, or `null`. Never quotes the value. */
export function problemWithDeliverySetting(catalogSlug: string, key: string, value: unknown): string | null {
  if (isFunctionId(catalogSlug)) return problemWithFunctionSetting(key, value);
  if (catalogSlug === 'webhooks' && key === 'headers' && value !== undefined && value !== null) {
    return problemWithWebhookHeaders(value);
  }
  if (catalogSlug === 'postgres' && key === 'connection_string' && typeof value === 'string') {
    const problem = problemWithConnectionString(value);
    return problem === null ? null : `setting "connection_string" ${problem}`;
  }
  const actions = findActionsDestination(catalogSlug);
  if (actions && key === SUBSCRIPTIONS_SETTING) {
    const problem = problemWithActionsSubscriptions(actions, value);
    return problem === null ? null : `setting "subscriptions"${problem.startsWith('[') ? '' : ' '}${problem}`;
  }
  return null;
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
