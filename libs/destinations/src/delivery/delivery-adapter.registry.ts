/**
 * The adapters Tributary delivers with, one per destination definition (`DESTINATION_DEFINITIONS`).
 * Adapters are created on first use and shared, so each keeps its pools and connections across calls.
 * Every adapter is handed the registry's one egress guard: a definition has no other way to build an
 * adapter, so an adapter added later goes through the policy too.
 */
import { findDestinationDefinition } from '../definitions';
import type { AdapterDependencies, DeliveryAdapterOptions } from '../destination-definition';
import type {
  DeliveryAdapter,
  DeliveryAdapterRegistry,
  DestinationSuspension,
} from './delivery-adapter.port';
import { EgressGuard } from './egress/egress-guard';
import { OPEN_EGRESS_POLICY, type EgressPolicy } from './egress/egress-policy';

export interface DeliveryAdapterRegistryOptions extends DeliveryAdapterOptions {
  /** Where destinations may connect (`TRIBUTARY_EGRESS`, `TRIBUTARY_EGRESS_ALLOW`). Default: `open`. */
  egressPolicy?: EgressPolicy;
  /** Instead of `egressPolicy`: a guard of the caller's (tests inject a resolver this way). */
  egressGuard?: EgressGuard;
}

export function createDeliveryAdapterRegistry(
  options: DeliveryAdapterRegistryOptions = {},
): DeliveryAdapterRegistry {
  const created = new Map<string, DeliveryAdapter>();
  /** What several adapters share (the Actions lane: its workers' guards keep the same policy). */
  const shared = new Map<string, { close(): Promise<void> }>();
  const dependencies: AdapterDependencies = {
    egressGuard: options.egressGuard ?? new EgressGuard(options.egressPolicy ?? OPEN_EGRESS_POLICY),
    options,
    shared<T extends { close(): Promise<void> }>(key: string, create: () => T): T {
      let resource = shared.get(key) as T | undefined;
      if (!resource) {
        resource = create();
        shared.set(key, resource);
      }
      return resource;
    },
  };
  return {
    deliveryAdapterFor(slug: string): DeliveryAdapter | undefined {
      const existing = created.get(slug);
      if (existing) return existing;
      const definition = findDestinationDefinition(slug);
      if (!definition) return undefined;
      const adapter = definition.createAdapter(dependencies);
      created.set(slug, adapter);
      return adapter;
    },
    async close(): Promise<void> {
      const adapters = [...created.values()];
      created.clear();
      await Promise.allSettled(adapters.map((adapter) => adapter.close()));
      const resources = [...shared.values()];
      shared.clear();
      await Promise.allSettled(resources.map((resource) => resource.close()));
    },
    suspensionOf(sourceId: string, slug: string): DestinationSuspension | undefined {
      return created.get(slug)?.suspensionOf?.(sourceId);
    },
  };
}
