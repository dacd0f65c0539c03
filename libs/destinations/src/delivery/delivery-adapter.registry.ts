/**
 * The adapters Tributary delivers with, one per catalog entry it can deliver to. Adapters are created on
 * first use and shared, so each keeps its pools and connections across calls.
 */
import { listCatalogDestinations } from '../catalog';
import type { DeliveryAdapter, DeliveryAdapterRegistry } from './delivery-adapter.port';
import { PostgresDeliveryAdapter, type PostgresAdapterOptions } from './adapters/postgres/postgres.adapter';
import { WebhooksDeliveryAdapter, type WebhooksAdapterOptions } from './adapters/webhooks/webhooks.adapter';

export interface DeliveryAdapterRegistryOptions {
  webhooks?: WebhooksAdapterOptions;
  postgres?: PostgresAdapterOptions;
}

const adapterFactories: Readonly<
  Record<string, (options: DeliveryAdapterRegistryOptions) => DeliveryAdapter>
> = {
  webhooks: (options) => new WebhooksDeliveryAdapter(options.webhooks),
  postgres: (options) => new PostgresDeliveryAdapter(options.postgres),
};

/** The catalog slugs that have a delivery adapter, in catalog order. */
export const DELIVERABLE_DESTINATION_SLUGS: readonly string[] = Object.freeze(
  listCatalogDestinations()
    .map((destination) => destination.slug)
    .filter((slug) => Object.hasOwn(adapterFactories, slug)),
);

export function createDeliveryAdapterRegistry(
  options: DeliveryAdapterRegistryOptions = {},
): DeliveryAdapterRegistry {
  const created = new Map<string, DeliveryAdapter>();
  return {
    deliverableSlugs: DELIVERABLE_DESTINATION_SLUGS,
    deliveryAdapterFor(slug: string): DeliveryAdapter | undefined {
      const existing = created.get(slug);
      if (existing) return existing;
      if (!DELIVERABLE_DESTINATION_SLUGS.includes(slug)) return undefined;
      const adapter = adapterFactories[slug]!(options);
      created.set(slug, adapter);
      return adapter;
    },
    async close(): Promise<void> {
      const adapters = [...created.values()];
      created.clear();
      await Promise.allSettled(adapters.map((adapter) => adapter.close()));
    },
  };
}
