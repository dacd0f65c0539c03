import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { catalogSlugOf, type DestinationRecord } from '@tributary/config-domain';
import { NormalizedMessage } from '@tributary/contracts';
import {
  createDeliveryAdapterRegistry,
  DeliveryAdapterRegistry,
  AttemptResult,
  DestinationSuspension,
  findDestinationDefinition,
  parseEgressPolicy,
  UserDeletionOutcome,
  UserDeletionRequest,
} from '@tributary/destinations';
import {
  type DecidedFunctionOutcome,
  declaredEntries,
  decidedOutcomeOf,
  decideDeletionOutcome,
  decideDestinationOutcome,
  decideInsertOutcome,
  FUNCTION_MAX_BATCH,
  FunctionInvoker,
  type FunctionResult,
  type FunctionVersion,
  MESSAGE_HANDLERS,
} from '@tributary/functions';
import { ConcurrencyLimiter, Environment, ENVIRONMENT } from '@tributary/platform';
import { crashNow, crashOnMessageFromEnvironment } from './crash-on-message.fault';
import { callsAtOnceOf, DeliveryGatherer } from './delivery-gatherer';
import type { DeliveryTarget } from './delivery-targets.service';
import { FunctionGatherers } from './function-gatherers';

/**
 * What a destination's consumer holds at once (the log's `maxInFlight`), and of those, how many it
 * sends to the destination at once: fewer than it holds with an insert function in front (messages in
 * its lane call), and in a replay (messages waiting for their checkpoint).
 */
export interface DeliveryBudget {
  readonly held: number;
  readonly requests: number;
}

/**
 * What keeps a consumer to its budget's `requests` when it holds more (one per consumer, shared by its
 * messages); none when it holds no more than it sends. Nothing is refused: the consumer's budget bounds
 * what waits.
 */
export function requestLimiterOf(budget: DeliveryBudget): ConcurrencyLimiter | undefined {
  return budget.requests < budget.held
    ? new ConcurrencyLimiter(budget.requests, Number.MAX_SAFE_INTEGER)
    : undefined;
}

/**
 * Sends messages to a destination as its target says: through its insert function first when it has
 * an enabled one (docs/functions.md §2), then with the delivery adapter of its catalog entry or by
 * invoking its destination function (§5.2; gathered into `onBatch` calls when it declares one).
 * Catalog entries without an adapter in this build are discarded with that reason, so an operator
 * sees why. Results go back as the adapter gave them (a
 * `Retry-After` as asked): what they mean for the message is `decideSettlement`'s to say.
 */
@Injectable()
export class DestinationDeliveries implements OnApplicationShutdown {
  private readonly registry: DeliveryAdapterRegistry;
  /** Deliveries under way, which closing waits for (see `onApplicationShutdown`). */
  private readonly inFlight = new Set<Promise<AttemptResult>>();
  /** Per destination whose definition gathers messages into calls (see `DeliveryGatherer`). */
  private readonly gatherers = new Map<string, DeliveryGatherer>();
  /** Destination functions that declare `onBatch`, whose messages are gathered into its calls. */
  private readonly gatheringFunctions: FunctionGatherers;
  /** Tests only: the message whose delivery kills the process (see `crashOnMessageFromEnvironment`). */
  private readonly crashOnMessage = crashOnMessageFromEnvironment(process.env);

  constructor(
    @Inject(ENVIRONMENT) environment: Environment,
    private readonly functions: FunctionInvoker,
  ) {
    this.gatheringFunctions = new FunctionGatherers(functions);
    this.registry = createDeliveryAdapterRegistry({
      postgres: {
        maxEventTables: environment.POSTGRES_DESTINATION_MAX_TABLES,
        maxColumnsPerTable: environment.POSTGRES_DESTINATION_MAX_COLUMNS,
        maxPools: environment.POSTGRES_DESTINATION_MAX_POOLS,
      },
      egressPolicy: parseEgressPolicy(environment.TRIBUTARY_EGRESS, environment.TRIBUTARY_EGRESS_ALLOW),
    });
  }

  /** Why the destination's lane stopped running it, or `undefined` (see `DeliveryAdapterRegistry`). */
  suspensionOf(sourceId: string, catalogSlug: string): DestinationSuspension | undefined {
    return this.registry.suspensionOf?.(sourceId, catalogSlug);
  }

  /**
   * What a destination's consumer holds and sends at once (see `DeliveryBudget`). `requests` is
   * `ROUTER_MAX_IN_FLIGHT`, or, for a destination whose definition gathers messages into calls, enough
   * for as many full calls as it takes at once (`callsAtOnceOf`) and one more gathering, so one call
   * writes while the next gathers instead of each waiting for the previous one's acks. Without the one
   * more, a call's connection stayed idle from its answer until its messages' acks were confirmed and
   * as many new ones had arrived. An enabled insert function adds a lane call's worth
   * (`FUNCTION_MAX_BATCH`) to what is held: the messages in its call are not at the destination, and
   * without that room each of the destination's places sat idle for the call's round trip.
   */
  budgetOf(destination: DestinationRecord, configured: number): DeliveryBudget {
    const gathering = findDestinationDefinition(catalogSlugOf(destination))?.gathering;
    const requests = gathering
      ? Math.max(configured, gathering.maxMessages * (callsAtOnceOf(gathering) + 1))
      : configured;
    const held = destination.insertFunction?.enabled === true ? requests + FUNCTION_MAX_BATCH : requests;
    return { held, requests };
  }

  /**
   * Not async, nor is what it calls: each async function and await of a message's way is a promise
   * and its objects, per message. (On Node 24 an AsyncLocalStorage no longer adds promise hooks to
   * them: it keeps its context in the async context frame.)
   *
   * `requests`: the consumer's limiter when it holds more than it sends at once (`requestLimiterOf`);
   * once it is closed, a message still waiting for its place rejects without being sent.
   */
  deliver(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload?: Uint8Array,
    requests?: ConcurrencyLimiter,
  ): Promise<AttemptResult> {
    if (this.crashOnMessage !== undefined && message.messageId === this.crashOnMessage) crashNow();
    const delivery = target.insertFunction
      ? this.insertThenDeliver(target, message, storedPayload, requests)
      : this.deliverInTurn(target, message, storedPayload, requests);
    this.inFlight.add(delivery);
    const forget = () => this.inFlight.delete(delivery);
    delivery.then(forget, forget);
    return delivery;
  }

  /**
   * Whether the destination can forward a regulation's deletion at all: its catalog entry's adapter
   * has one, or its destination function declares `onDelete`.
   */
  canDeleteUsers(target: DeliveryTarget): boolean {
    const { deliverer } = target;
    if (deliverer.kind === 'function')
      return declaredEntries(deliverer.fn.kind, deliverer.fn.code).includes('onDelete');
    if (deliverer.kind === 'refused') return false;
    return this.registry.deliveryAdapterFor(deliverer.catalogSlug)?.deleteUsers !== undefined;
  }

  /**
   * A regulation's deletion, forwarded with the catalog entry's adapter, or to the destination
   * function's `onDelete` once per user (docs/functions.md §2); never rejects.
   */
  deleteUsers(target: DeliveryTarget, request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    const { deliverer } = target;
    const adapter =
      deliverer.kind === 'adapter' ? this.registry.deliveryAdapterFor(deliverer.catalogSlug) : undefined;
    if (deliverer.kind !== 'function' && !adapter?.deleteUsers) {
      return Promise.resolve({ outcome: 'not_supported', reason: 'the destination has no deletion' });
    }
    const deletion = (
      deliverer.kind === 'function'
        ? this.deleteThroughFunction(deliverer.fn, deliverer.instance, request)
        : adapter!.deleteUsers!(request)
    ).catch((error: unknown): UserDeletionOutcome => ({ outcome: 'retry', reason: String(error) }));
    const tracked = deletion.then(() => ({ outcome: 'delivered' }) as AttemptResult);
    this.inFlight.add(tracked);
    const forget = () => this.inFlight.delete(tracked);
    tracked.then(forget, forget);
    return deletion;
  }

  /**
   * Nest calls this at the same time as the consumers' own shutdown hook, which waits for their
   * handlers; closing the adapters at once would destroy the sockets of deliveries in flight (a
   * webhook agent's `destroy()` ends busy sockets too), turning each into a retry and a duplicate
   * after the restart. So it waits for them first; each is bounded by its adapter's timeout.
   */
  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await this.registry.close();
  }

  /**
   * The insert function's answer decides whether the message goes on, and which message: what it
   * returned (with the original's `messageId` and `type`); the stored bytes only when that is the
   * message as it came, to the character (`InsertDecision.unchanged`). `requests`, the consumer's
   * limiter when it holds more than it sends at once (`requestLimiterOf`), is taken only for the
   * destination's part.
   */
  private async insertThenDeliver(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload: Uint8Array | undefined,
    requests: ConcurrencyLimiter | undefined,
  ): Promise<AttemptResult> {
    const insert = target.insertFunction!;
    const result = await this.invokeHandler(
      insert.fn,
      insert.settings,
      insert.instance,
      message,
      storedPayload,
    );
    const decision = decideInsertOutcome(result, message);
    this.functions.record(insert.fn, result, decidedOutcomeOf(decision.outcome));
    if (decision.outcome !== 'continue') return decision;
    const next = decision.message as NormalizedMessage;
    // Returned as it came: the stored bytes are still its JSON.
    const nextPayload = decision.unchanged ? storedPayload : undefined;
    return this.deliverInTurn(target, next, nextPayload, requests);
  }

  /** Through the consumer's limiter when it has one: at most its budget's `requests` at once. */
  private deliverInTurn(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload: Uint8Array | undefined,
    requests: ConcurrencyLimiter | undefined,
  ): Promise<AttemptResult> {
    return requests
      ? requests.run(() => this.deliverNow(target, message, storedPayload))
      : this.deliverNow(target, message, storedPayload);
  }

  private deliverNow(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload: Uint8Array | undefined,
  ): Promise<AttemptResult> {
    const { deliverer, settings, source } = target;
    if (deliverer.kind === 'refused')
      return Promise.resolve({ outcome: 'discard', reason: deliverer.reason });
    if (deliverer.kind === 'function') {
      if (deliverer.gathers) return this.gatheringFunctions.deliver(target, message, storedPayload);
      return this.invokeHandler(deliverer.fn, settings, deliverer.instance, message, storedPayload).then(
        (result) => {
          const outcome = decideDestinationOutcome(result);
          this.functions.record(deliverer.fn, result, decidedOutcomeOf(outcome.outcome));
          return outcome;
        },
      );
    }
    const adapter = this.registry.deliveryAdapterFor(deliverer.catalogSlug);
    if (!adapter)
      return Promise.resolve({
        outcome: 'discard',
        reason: `Tributary has no delivery adapter for ${deliverer.catalogSlug} yet`,
      });
    const gathering = findDestinationDefinition(adapter.slug)?.gathering;
    if (gathering) {
      let gatherer = this.gatherers.get(adapter.slug);
      if (!gatherer) {
        gatherer = new DeliveryGatherer(adapter, gathering);
        this.gatherers.set(adapter.slug, gatherer);
      }
      return gatherer.deliver({ settings, ...source }, message);
    }
    return adapter
      .deliver({ settings, ...source, messages: [message], storedPayload: [storedPayload] })
      .then(([result]) => result!);
  }

  /**
   * `onDelete` with Segment's delete event, one user after another, stopping at the first that is
   * not deleted: the regulation tries the destination again as a whole, and the function sees the
   * same `messageId` for a user each time.
   */
  private async deleteThroughFunction(
    fn: FunctionVersion,
    instance: string,
    request: UserDeletionRequest,
  ): Promise<UserDeletionOutcome> {
    for (const { userId, messageId } of request.users) {
      const result = await this.functions.invoke({
        fn,
        entry: 'onDelete',
        payload: { type: 'delete', userId, messageId, timestamp: request.timestamp },
        settings: request.settings,
        instance,
        messageId,
      });
      const outcome = decideDeletionOutcome(result);
      this.functions.record(fn, result, DELETION_METRIC[outcome.outcome]);
      if (outcome.outcome !== 'deleted') return outcome;
    }
    return { outcome: 'deleted' };
  }

  /**
   * The function's handler for the message's type, given a copy of the message (the runner copies
   * it): its stored JSON where the message is the stored one, which needs no serializing.
   */
  private invokeHandler(
    fn: FunctionVersion,
    settings: Readonly<Record<string, unknown>>,
    instance: string,
    message: NormalizedMessage,
    storedPayload: Uint8Array | undefined,
  ): Promise<FunctionResult> {
    const entry = MESSAGE_HANDLERS[message.type as keyof typeof MESSAGE_HANDLERS];
    if (entry === undefined) {
      return Promise.resolve({ status: 'no_handler', logs: [], logsDropped: 0, durationMs: 0 });
    }
    return this.functions.invoke({
      fn,
      entry,
      payload: message,
      ...(storedPayload !== undefined && { payloadJson: utf8.decode(storedPayload) }),
      settings,
      instance,
      messageId: message.messageId,
    });
  }
}

const utf8 = new TextDecoder();

/** The function metrics' word for a deletion outcome. */
const DELETION_METRIC = {
  deleted: 'success',
  not_supported: 'filtered',
  retry: 'retried',
  failed: 'discarded',
} as const satisfies Record<UserDeletionOutcome['outcome'], DecidedFunctionOutcome>;
