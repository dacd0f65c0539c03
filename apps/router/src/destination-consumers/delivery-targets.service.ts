import { Injectable } from '@nestjs/common';
import { SecretBox } from '@tributary/auth';
import {
  destinationSecretsOwner,
  insertFunctionSecretsOwner,
  type DestinationRecord,
} from '@tributary/config-domain';
import { ConfigReadModel } from '@tributary/config-projections';
import type { FunctionVersion } from '@tributary/functions';
import {
  type Deliverer,
  type DestinationDeliveryPlan,
  type FunctionLookup,
  isPlanCurrent,
  planDestinationDelivery,
} from './destination-delivery.planner';

/** Everything sending one message to a destination needs, with its secrets decrypted. */
export interface DeliveryTarget {
  readonly deliverer: Deliverer;
  /** The destination's settings (the adapter's, or the destination function's), decrypted. Frozen. */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly insertFunction?: {
    readonly fn: FunctionVersion;
    readonly settings: Readonly<Record<string, unknown>>;
    readonly instance: string;
  };
  readonly source: { readonly sourceId: string; readonly sourceSlug: string };
  /** Routing's view of the destination (`RoutableDestination`'s name and capabilities). */
  readonly displayName: string;
  readonly capabilities: DestinationDeliveryPlan['capabilities'];
}

/**
 * The delivery target of each destination, made once per config version rather than per message:
 * the read model replaces a destination's record whenever its config changes and never mutates one,
 * and replaces a function's record when it is deployed, which `isPlanCurrent` notices. Saves the
 * catalog lookup and the decryption of every password setting per message. The consumers and the
 * dead-letter redrives share it, so both deliver the same way (insert function included).
 */
@Injectable()
export class DeliveryTargets {
  private readonly targets = new WeakMap<object, { plan: DestinationDeliveryPlan; target: DeliveryTarget }>();
  private readonly functionOf: FunctionLookup;

  constructor(
    readModel: ConfigReadModel,
    private readonly secretBox: SecretBox,
  ) {
    this.functionOf = (workspaceSlug, functionId) => readModel.function(workspaceSlug, functionId)?.function;
  }

  /** Undefined when nothing in this build can deliver for the destination (see `planDestinationDelivery`). */
  targetOf(record: DestinationRecord): DeliveryTarget | undefined {
    const cached = this.targets.get(record);
    if (cached && isPlanCurrent(cached.plan, record, this.functionOf)) return cached.target;
    const plan = planDestinationDelivery(record, this.functionOf);
    if (!plan) return undefined;
    const insert = plan.insertFunction;
    const target: DeliveryTarget = {
      deliverer: plan.deliverer,
      // Frozen, since every delivery shares them.
      settings:
        cached?.target.settings ??
        Object.freeze(this.secretBox.revealAll(record.config, destinationSecretsOwner(record))),
      insertFunction: insert && {
        fn: insert.fn,
        settings: Object.freeze(this.secretBox.revealAll(insert.config, insertFunctionSecretsOwner(record))),
        instance: insert.instance,
      },
      source: { sourceId: record.sourceId, sourceSlug: record.sourceSlug },
      displayName: plan.displayName,
      capabilities: plan.capabilities,
    };
    this.targets.set(record, { plan, target });
    return target;
  }
}
