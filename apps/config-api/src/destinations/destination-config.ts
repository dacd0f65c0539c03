import { Injectable } from '@nestjs/common';
import { SecretBox, secretPlace } from '@tributary/auth';
import { DestinationRecord, SettingDefinition } from '@tributary/config-domain';
import { MASKED_SECRET } from '@tributary/contracts';
import {
  CatalogDestinationDefinition,
  emptyValueOf,
  mapSubscriptionSecrets,
  problemWithDeliverySetting,
  secrecyOfSetting,
  SettingSecrecy,
  urlHasCredentials,
  validateDestinationSettingValue,
} from '@tributary/destinations';
import { ConfigApiError } from '@tributary/config-api-access';

export interface ConfigEntryInput {
  name: string;
  value?: unknown;
  type?: string | null;
}

/**
 * Turns the config entries of a request into setting values the decider can store: names
 * resolved (full `…/config/<key>` or a bare key), types taken from the catalog when the entry has
 * none, values checked against the catalog and against what the delivery adapter accepts, and secrets
 * encrypted so that none enters an event: `password` values, URLs with credentials, webhook header
 * values (`secrecyOfSetting`). A secret sent back as the mask keeps its stored value: clients that read
 * a destination and write it back unchanged must not overwrite the secret with the mask.
 *
 * Kept secrets stay with their target: when a request moves where the destination sends (a URL's
 * origin, an endpoint, host or region setting), every stored secret must be entered again in the
 * same request. Otherwise a write token, which can never read a secret, could send the stored ones
 * to a host of its choosing (with `:test`, at once) and read them there.
 */
@Injectable()
export class DestinationConfigMapper {
  constructor(private readonly secretBox: SecretBox) {}

  /**
   * `owner` is the instance's owner of secrets (`destinationSecretsOwner`,
   * `insertFunctionSecretsOwner`, `sourceFunctionSecretsOwner`): each secret is encrypted for its
   * place there (its instance and setting), so it opens nowhere else.
   */
  toSettingValues(
    entries: readonly ConfigEntryInput[],
    catalogEntry: CatalogDestinationDefinition,
    owner: string,
    /** The instance's stored values, on an update: a destination's, an insert function's, a source function's. */
    current?: Pick<DestinationRecord, 'config'>,
    /** The request field the entries came in, for messages. */
    field = 'destination.config',
  ): Record<string, unknown> {
    const values: Record<string, unknown> = {};
    /** Secret settings this request enters anew (no part of them the mask). */
    const reEntered = new Set<string>();
    /** Target settings whose target this request changes. */
    const moved: string[] = [];
    for (const entry of entries) {
      const key = settingKeyOf(entry.name);
      const setting = catalogEntry.settings.find((candidate) => candidate.key === key);
      if (!setting) {
        throw ConfigApiError.invalidArgument(
          `${field}: "${key}" is not a setting of ${catalogEntry.slug}; settings: ${catalogEntry.settings
            .map((candidate) => candidate.key)
            .join(', ')}`,
        );
      }
      if (entry.type && entry.type !== setting.type) {
        throw ConfigApiError.invalidArgument(
          `${field}.${key}: type "${entry.type}" does not match the catalog type "${setting.type}"`,
        );
      }
      const requested =
        entry.value === undefined || entry.value === null
          ? emptyValueOf(setting.type, setting.selectOptions)
          : entry.value;
      const secrecy = secrecyOfSetting(catalogEntry.slug, setting);
      const stored = current?.config[key];
      const place = secretPlace(owner, key);
      if (secrecy !== undefined && !containsMask(secrecy, requested)) reEntered.add(key);
      if (
        current !== undefined &&
        isTargetSetting(key, secrecy) &&
        // A choice among the vendor's own regions (Amplitude's `endpoint`) cannot name a host of the
        // tenant's: Terraform's PATCH sends the masks back with such a change, and it stays accepted.
        !(setting.selectOptions && setting.selectOptions.length > 0) &&
        // The mask alone keeps the stored value, and so its target.
        !(requested === MASKED_SECRET && stored !== undefined) &&
        targetOf(requested) !== targetOf(this.plaintextOf(stored, place))
      ) {
        moved.push(key);
      }
      if (
        secrecy !== undefined &&
        secrecy !== 'map-values' &&
        requested === MASKED_SECRET &&
        stored !== undefined
      ) {
        continue;
      }
      const value =
        secrecy === undefined ? requested : this.withMaskedPartsRestored(secrecy, requested, stored, place);
      const problem =
        validateDestinationSettingValue(setting, value) ??
        problemWithDeliverySetting(catalogEntry.slug, key, value);
      if (problem) throw ConfigApiError.invalidArgument(`${field}.${key}: ${problem}`);
      values[key] = secrecy === undefined ? value : this.encryptSecretParts(secrecy, value, place);
      if (key === 'subscriptions') values[key] = withKeptSubscriptionIds(values[key], current?.config[key]);
    }
    if (current !== undefined && moved.length > 0) {
      const kept = catalogEntry.settings
        .filter((setting) => secrecyOfSetting(catalogEntry.slug, setting) !== undefined)
        .map((setting) => setting.key)
        .filter((key) => hasSecret(current.config[key]) && !reEntered.has(key));
      if (kept.length > 0) {
        throw ConfigApiError.invalidArgument(
          `${field}: ${moved.join(', ')} changes where the destination sends; re-enter ` +
            `${kept.join(', ')} in the same request (stored secrets are never sent to a new target)`,
        );
      }
    }
    return values;
  }

  /** A stored value with its secret parts decrypted, to compare targets. */
  private plaintextOf(stored: unknown, place: string): unknown {
    return SecretBox.isEncrypted(stored) ? this.secretBox.decrypt(stored, place) : stored;
  }

  /**
   * The value with masks sent back replaced by the stored secrets, in plaintext: a header whose value is
   * the mask keeps its stored value, and so do the user name and password of a URL written back as
   * `https://********:********@host/...`.
   */
  private withMaskedPartsRestored(
    secrecy: SettingSecrecy,
    value: unknown,
    stored: unknown,
    place: string,
  ): unknown {
    if (secrecy === 'map-values' && isPlainObject(value)) {
      const storedMap = isPlainObject(stored) ? stored : {};
      return Object.fromEntries(
        Object.entries(value).map(([name, inner]) => [
          name,
          inner === MASKED_SECRET && typeof storedMap[name] === 'string'
            ? this.secretBox.decrypt(storedMap[name] as string, place)
            : inner,
        ]),
      );
    }
    if (secrecy === 'url-credentials' && typeof value === 'string' && typeof stored === 'string') {
      return restoreMaskedUrlCredentials(value, this.secretBox.decrypt(stored, place));
    }
    if (secrecy === 'subscription-headers') return this.withSubscriptionSecretsKept(value, stored, place);
    return value;
  }

  /**
   * Subscriptions with each secret header sent back as the mask (or as the stored ciphertext, which
   * the Public API's subscription routes pass through for the entries they do not change) replaced
   * by the stored value of that header, in plaintext. Kept only in the same subscription (by id,
   * else action and trigger) with the same target: a mapping whose `url` (or another address field)
   * changes must enter its secret headers again, as a destination whose endpoint changes must.
   */
  private withSubscriptionSecretsKept(value: unknown, stored: unknown, place: string): unknown {
    const storedEntries = Array.isArray(stored) ? stored.filter(isPlainObject) : [];
    const entries = Array.isArray(value) ? value : [];
    return mapSubscriptionSecrets(value, ({ entry, header, value: secret }) => {
      if (secret !== MASKED_SECRET && !SecretBox.isEncrypted(secret)) return secret;
      const where = `destination.config.subscriptions[${entry}].mapping.headers.${header}`;
      const incoming = entries[entry] as Record<string, unknown>;
      const counterpart = counterpartOf(incoming, storedEntries);
      const storedValue = counterpart === undefined ? undefined : storedHeader(counterpart, header);
      if (storedValue === undefined) {
        throw ConfigApiError.invalidArgument(
          `${where}: the mask keeps a stored value, and this subscription has none for "${header}"; enter it`,
        );
      }
      const moved = movedMappingTarget(incoming, counterpart!);
      if (moved !== undefined) {
        throw ConfigApiError.invalidArgument(
          `destination.config.subscriptions[${entry}].mapping.${moved} changes where the subscription sends; ` +
            `re-enter headers.${header} in the same request (stored secrets are never sent to a new target)`,
        );
      }
      return this.secretBox.decrypt(storedValue, place);
    });
  }

  private encryptSecretParts(secrecy: SettingSecrecy, value: unknown, place: string): unknown {
    switch (secrecy) {
      case 'subscription-headers':
        return mapSubscriptionSecrets(value, ({ value: secret }) => this.secretBox.encrypt(secret, place));
      case 'whole':
        return value === '' ? value : this.secretBox.encrypt(String(value), place);
      case 'url-credentials':
        return typeof value === 'string' && urlHasCredentials(value)
          ? this.secretBox.encrypt(value, place)
          : value;
      case 'map-values':
        if (!isPlainObject(value)) return value;
        return Object.fromEntries(
          Object.entries(value).map(([name, inner]) => [
            name,
            typeof inner === 'string' && inner !== '' ? this.secretBox.encrypt(inner, place) : inner,
          ]),
        );
    }
  }
}

/** `incoming` with a user name or password equal to the mask taken from `storedUrl`. */
function restoreMaskedUrlCredentials(incoming: string, storedUrl: string): string {
  let url: URL;
  let previous: URL;
  try {
    url = new URL(incoming.trim());
    previous = new URL(storedUrl.trim());
  } catch {
    return incoming;
  }
  if (url.username !== MASKED_SECRET && url.password !== MASKED_SECRET) return incoming;
  if (url.username === MASKED_SECRET) url.username = previous.username;
  if (url.password === MASKED_SECRET) url.password = previous.password;
  return url.href;
}

/**
 * Settings that say where a destination sends: a URL with credentials in it, and settings named as
 * an address (`url`, `endpoint`, `apiEndpoint`, `baseUrl`, `host`, `domain`, `region`, ...).
 */
const TARGET_SETTING_NAME =
  /(url|uri|endpoint|host|hostname|domain|subdomain|server|region|datacenter|connection_string)$/i;

function isTargetSetting(key: string, secrecy: SettingSecrecy | undefined): boolean {
  return secrecy === 'url-credentials' || TARGET_SETTING_NAME.test(key);
}

/** Where a value sends to: a URL's origin (scheme, host, port), any other value as written. */
function targetOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value.trim() : JSON.stringify(value);
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.host}`;
  } catch {
    return text;
  }
}

/** Whether a value (or any part of it: a header, a URL's user name or password) is the mask. */
function containsMask(secrecy: SettingSecrecy, value: unknown): boolean {
  if (value === MASKED_SECRET) return true;
  if (secrecy === 'subscription-headers') {
    let kept = false;
    mapSubscriptionSecrets(value, ({ value: secret }) => {
      kept ||= secret === MASKED_SECRET || SecretBox.isEncrypted(secret);
      return secret;
    });
    return kept;
  }
  if (isPlainObject(value)) return Object.values(value).some((inner) => inner === MASKED_SECRET);
  if (typeof value === 'string' && value.includes(MASKED_SECRET)) {
    try {
      const url = new URL(value.trim());
      return url.username === MASKED_SECRET || url.password === MASKED_SECRET;
    } catch {
      return false;
    }
  }
  return false;
}

/** Whether a stored value holds a secret (a non-empty encrypted value, in whole or in a map). */
function hasSecret(stored: unknown): boolean {
  if (SecretBox.isEncrypted(stored)) return true;
  if (Array.isArray(stored)) {
    let found = false;
    mapSubscriptionSecrets(stored, ({ value }) => {
      found ||= SecretBox.isEncrypted(value);
      return value;
    });
    return found;
  }
  return isPlainObject(stored) && Object.values(stored).some((inner) => SecretBox.isEncrypted(inner));
}

/**
 * Subscription ids are kept from creation on (Terraform and the Public API name subscriptions by
 * them): an entry written without an id keeps the id of the stored entry with the same action and
 * trigger, so a client that does not know ids (v1beta's) cannot change them.
 */
function withKeptSubscriptionIds(value: unknown, stored: unknown): unknown {
  if (!Array.isArray(value) || !Array.isArray(stored)) return value;
  return value.map((entry: unknown) => {
    if (!isPlainObject(entry) || entry.id !== undefined) return entry;
    const same = stored.find(
      (candidate: unknown) =>
        isPlainObject(candidate) &&
        typeof candidate.id === 'string' &&
        candidate.partnerAction === entry.partnerAction &&
        candidate.subscribe === entry.subscribe,
    ) as { id: string } | undefined;
    return same ? { id: same.id, ...entry } : entry;
  });
}

/** The stored subscription an incoming one continues: the same id, else the same action and trigger. */
function counterpartOf(
  incoming: Record<string, unknown>,
  storedEntries: Record<string, unknown>[],
): Record<string, unknown> | undefined {
  if (typeof incoming.id === 'string') {
    const byId = storedEntries.find((candidate) => candidate.id === incoming.id);
    if (byId) return byId;
  }
  return storedEntries.find(
    (candidate) =>
      candidate.partnerAction === incoming.partnerAction && candidate.subscribe === incoming.subscribe,
  );
}

/** The stored value of a header (names compared case-insensitively), when it is a string. */
function storedHeader(entry: Record<string, unknown>, header: string): string | undefined {
  const mapping = isPlainObject(entry.mapping) ? entry.mapping : {};
  const headers = isPlainObject(mapping.headers) ? mapping.headers : {};
  const found = Object.entries(headers).find(([name]) => name.toLowerCase() === header.toLowerCase());
  return found && typeof found[1] === 'string' && found[1] !== '' ? found[1] : undefined;
}

/** The first address field (`url`, `endpoint`, ...) of the incoming mapping whose target differs. */
function movedMappingTarget(
  incoming: Record<string, unknown>,
  stored: Record<string, unknown>,
): string | undefined {
  const now = isPlainObject(incoming.mapping) ? incoming.mapping : {};
  const before = isPlainObject(stored.mapping) ? stored.mapping : {};
  return [...new Set([...Object.keys(now), ...Object.keys(before)])]
    .filter((key) => TARGET_SETTING_NAME.test(key))
    .find((key) => targetOf(now[key]) !== targetOf(before[key]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function settingDefinitionsOf(catalogEntry: CatalogDestinationDefinition): SettingDefinition[] {
  return catalogEntry.settings.map((setting) => ({
    name: setting.key,
    required: setting.required,
    defaultValue: setting.defaultValue,
  }));
}

function settingKeyOf(entryName: string): string {
  const marker = entryName.lastIndexOf('/config/');
  return marker >= 0 ? entryName.slice(marker + '/config/'.length) : entryName;
}
