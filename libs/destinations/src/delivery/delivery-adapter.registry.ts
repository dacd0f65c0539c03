/**
 * The adapters Tributary delivers with, one per catalog entry it can deliver to. Adapters are created on
 * first use and shared, so each keeps its pools and connections across calls. Every adapter is handed
 * the registry's one egress guard: a factory has no other way to build an adapter, so an adapter added
 * later goes through the policy too.
 */
import { listCatalogDestinations } from '../catalog';
import type { DeliveryAdapter, DeliveryAdapterRegistry } from './delivery-adapter.port';
import { PostgresDeliveryAdapter, type PostgresAdapterOptions } from './adapters/postgres/postgres.adapter';
import { WebhooksDeliveryAdapter, type WebhooksAdapterOptions } from './adapters/webhooks/webhooks.adapter';
import {
  ActionsLane,
  type ActionsLaneOptions,
  type ActionsSuspension,
} from './adapters/segment-actions/actions-lane';
import { findActionsDestination } from '../catalog/actions/actions-catalog.entries';
import { EgressGuard } from './egress/egress-guard';
import { OPEN_EGRESS_POLICY, type EgressPolicy } from './egress/egress-policy';

export interface DeliveryAdapterRegistryOptions {
  /** Where destinations may connect (`TRIBUTARY_EGRESS`, `TRIBUTARY_EGRESS_ALLOW`). Default: `open`. */
  egressPolicy?: EgressPolicy;
  /** Instead of `egressPolicy`: a guard of the caller's (tests inject a resolver this way). */
  egressGuard?: EgressGuard;
  webhooks?: Omit<WebhooksAdapterOptions, 'egressGuard'>;
  postgres?: Omit<PostgresAdapterOptions, 'egressGuard'>;
  /** Segment Actions destinations (every `actions-*` catalog entry), run in the Actions lane. */
  segmentActions?: Omit<ActionsLaneOptions, 'egressGuard'>;
}

type AdapterFactory = (options: DeliveryAdapterRegistryOptions, egressGuard: EgressGuard) => DeliveryAdapter;

const adapterFactories: Readonly<Record<string, AdapterFactory>> = {
  webhooks: (options, egressGuard) => new WebhooksDeliveryAdapter({ ...options.webhooks, egressGuard }),
  postgres: (options, egressGuard) => new PostgresDeliveryAdapter({ ...options.postgres, egressGuard }),
};

/** The catalog slugs that have a delivery adapter, in catalog order. */
export const DELIVERABLE_DESTINATION_SLUGS: readonly string[] = Object.freeze(
  listCatalogDestinations()
    .map((destination) => destination.slug)
    .filter((slug) => Object.hasOwn(adapterFactories, slug) || findActionsDestination(slug) !== undefined),
);

export function createDeliveryAdapterRegistry(
  options: DeliveryAdapterRegistryOptions = {},
): DeliveryAdapterRegistry {
  const created = new Map<string, DeliveryAdapter>();
  const egressGuard = options.egressGuard ?? new EgressGuard(options.egressPolicy ?? OPEN_EGRESS_POLICY);
  // Shared by every Actions adapter, made with the first: its workers' guards keep the same policy and
  // resolve through this one.
  let actionsLane: ActionsLane | undefined;
  const createAdapter = (slug: string): DeliveryAdapter => {
    const actions = findActionsDestination(slug);
    if (actions) {
      actionsLane ??= new ActionsLane({ ...options.segmentActions, egressGuard });
      return actionsLane.deliveryAdapter(actions);
    }
    return adapterFactories[slug]!(options, egressGuard);
  };
  return {
    deliverableSlugs: DELIVERABLE_DESTINATION_SLUGS,
    deliveryAdapterFor(slug: string): DeliveryAdapter | undefined {
      const existing = created.get(slug);
      if (existing) return existing;
      if (!DELIVERABLE_DESTINATION_SLUGS.includes(slug)) return undefined;
      const adapter = createAdapter(slug);
      created.set(slug, adapter);
      return adapter;
    },
    async close(): Promise<void> {
      const adapters = [...created.values()];
      created.clear();
      await Promise.allSettled(adapters.map((adapter) => adapter.close()));
      await actionsLane?.close();
      actionsLane = undefined;
    },
    suspensionOf(sourceId: string, slug: string): ActionsSuspension | undefined {
      return actionsLane?.suspensionOf(sourceId, slug);
    },
  };
}
