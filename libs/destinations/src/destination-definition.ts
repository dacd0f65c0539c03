/**
 * Everything Tributary knows about one built-in destination, declared once in the destination's own
 * folder (`webhooks/`, `postgres/`, `segment-actions/`): its catalog entry, which settings hold
 * secrets, the values its adapter would refuse, whether the router gathers its messages into calls,
 * and how its adapter is made. The catalog, the Config API's settings checks and the adapter registry
 * are all built from `DESTINATION_DEFINITIONS` (`definitions.ts`), so none of them switches on a slug.
 */
import type { CatalogDestinationDefinition } from './catalog/catalog-entry.types';
import type { DeliveryAdapter } from './delivery/delivery-adapter.port';
import type { EgressGuard } from './delivery/egress/egress-guard';
import type { PostgresAdapterOptions } from './postgres/postgres.adapter';
import type { ActionsLaneOptions } from './segment-actions/actions-lane';
import type { WebhooksAdapterOptions } from './webhooks/webhooks.adapter';

/**
 * Which part of a setting is a secret, encrypted before it enters an event and masked in responses
 * and the audit trail:
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
 * How the router gathers a destination's messages into multi-message calls, for a destination where
 * several messages per call cost much less than one call each (a warehouse writes them in one
 * transaction): calls of up to `maxMessages`, with up to `callsAtOnce` calls under way (two when not
 * set), and the destination's consumer holds that many calls' worth.
 */
export interface Gathering {
  readonly maxMessages: number;
  readonly callsAtOnce?: number;
}

/** What a deployment may tune per built-in destination (`createDeliveryAdapterRegistry`'s options). */
export interface DeliveryAdapterOptions {
  webhooks?: Omit<WebhooksAdapterOptions, 'egressGuard'>;
  /** Connections per pool follow the definition's gathering, one per call under way. */
  postgres?: Omit<PostgresAdapterOptions, 'egressGuard' | 'maxConnectionsPerPool'>;
  /** Segment Actions destinations (every `actions-*` catalog entry), run in the Actions lane. */
  segmentActions?: Omit<ActionsLaneOptions, 'egressGuard'>;
}

/** What a definition is given to make its adapter. */
export interface AdapterDependencies {
  /** The registry's one egress guard: every adapter connects through it (docs/egress.md). */
  readonly egressGuard: EgressGuard;
  readonly options: DeliveryAdapterOptions;
  /**
   * A resource several adapters of one registry share (the Actions lane), made by the first that asks
   * for `key` and closed with the registry, after its adapters.
   */
  shared<T extends { close(): Promise<void> }>(key: string, create: () => T): T;
}

export interface DestinationDefinition {
  /** Settings and capabilities, as the catalog lists them; its `slug` names the definition. */
  readonly catalog: CatalogDestinationDefinition;
  /** Settings that are secrets though not of type `password` (those are always secrets), by key. */
  readonly secrets?: Readonly<Record<string, SettingSecrecy>>;
  /**
   * Why the adapter could never use this value of setting `key`, or `null`: checked once when the
   * destination is written (400 code 3) rather than on every delivery. Never quotes the value.
   */
  checkSetting?(key: string, value: unknown): string | null;
  /** Set when the router should gather messages into calls; absent: one message per call. */
  readonly gathering?: Gathering;
  /** The destination's adapter; made once per registry, on first use, and shared. */
  createAdapter(dependencies: AdapterDependencies): DeliveryAdapter;
}
