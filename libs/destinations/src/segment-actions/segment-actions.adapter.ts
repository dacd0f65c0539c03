/**
 * Runs Segment's open-source Actions destinations (`@segment/action-destinations`) behind the delivery
 * port. One adapter per catalog slug; they share one `SegmentActionsRuntime` (the egress agents and the
 * destinations loaded so far).
 *
 * - The destination's code is loaded on its first delivery, not at start.
 * - A destination config is prepared once (settings checked, every `subscribe` parsed, every mapping
 *   frozen so that mapping-kit checks it once) and kept for as
 *   long as the router hands over the same frozen settings object, which it does until the config
 *   changes; messages then only run the FQL matchers and the actions.
 * - A message no subscription takes is `filtered`. A subscription whose action has `performBatch` and
 *   whose mapping sets `enable_batching` runs through `executeBatch`, with per-message outcomes from its
 *   multistatus; the others run `executeAction` per message.
 * - Every request goes through the egress guard's agents, with `redirect: 'manual'`, a timeout and a
 *   response size cap per request, and the whole message is bounded by `messageTimeoutMs` even if an
 *   action ignores its signal. A failure after a request to an internal address (`open` mode) keeps
 *   its status only: destinations copy response bodies into their errors.
 */
import type { NormalizedMessage } from '@tributary/contracts';
import type { JsonValue } from '../catalog/catalog-entry.types';
import type { ActionsDestinationData, ActionsSubscription } from './actions-catalog.types';
import { SUBSCRIPTIONS_SETTING } from './actions-catalog.entries';
import {
  deletionOutcomeOf,
  delivered,
  discard,
  filtered,
  retry,
  sameOutcomeForAll,
  type DeliveryAdapter,
  type AttemptResult,
  type DeliveryRequest,
  type DeliveryResult,
  type UserDeletionOutcome,
  type UserDeletionRequest,
} from '../delivery/delivery-adapter.port';
import { createEgressAgents, type EgressAgents } from '../delivery/egress/egress-agents';
import { EgressGuard } from '../delivery/egress/egress-guard';
import { contactedHosts, loadActionsDestination } from './actions-destination.loader';
import { classifyActionsError, classifyMultiStatus } from './actions-error.classifier';
import type { ParsedFql, RunnableActionsDestination } from './actions-core.types';
import { parseSubscriptionFql, subscriptionMatches } from './actions-subscriptions';
import { frozenMapping } from './actions-mapping-validation.cache';

/** Per HTTP request an action makes: Segment's webhook timeout (docs/tracking-api.md §12.3). */
export const ACTIONS_REQUEST_TIMEOUT_MS = 5_000;
/** Per message, over all the requests its subscriptions make. */
export const ACTIONS_MESSAGE_TIMEOUT_MS = 15_000;

export interface SegmentActionsRuntimeOptions {
  egressGuard?: EgressGuard;
  requestTimeoutMs?: number;
  messageTimeoutMs?: number;
  /** Extra CAs the HTTPS agent trusts (tests: a CA generated for the fake vendor). */
  ca?: string | Buffer;
  /** See `EgressAgentsOptions.portMap`: tests only. */
  portMap?: Readonly<Record<number, number>>;
}

/** What every Actions adapter of a registry shares. */
export class SegmentActionsRuntime {
  readonly agents: EgressAgents;
  readonly requestTimeoutMs: number;
  readonly messageTimeoutMs: number;
  private readonly loaded = new Map<string, RunnableActionsDestination>();

  constructor(options: SegmentActionsRuntimeOptions = {}) {
    this.agents = createEgressAgents(options.egressGuard ?? new EgressGuard(), {
      ...(options.ca !== undefined && { ca: options.ca }),
      ...(options.portMap !== undefined && { portMap: options.portMap }),
    });
    this.requestTimeoutMs = options.requestTimeoutMs ?? ACTIONS_REQUEST_TIMEOUT_MS;
    this.messageTimeoutMs = options.messageTimeoutMs ?? ACTIONS_MESSAGE_TIMEOUT_MS;
  }

  /** The destination of a catalog entry, loaded on first use. */
  destination(data: ActionsDestinationData): RunnableActionsDestination {
    let destination = this.loaded.get(data.dir);
    if (!destination) {
      destination = loadActionsDestination(data.dir, {
        agents: this.agents,
        requestTimeoutMs: this.requestTimeoutMs,
      });
      this.loaded.set(data.dir, destination);
    }
    return destination;
  }

  /** Whether every host in `hosts` may have its answers shown (none reached an internal address). */
  mayShowAnswersOf(hosts: ReadonlySet<string>): boolean {
    for (const host of hosts) if (!this.agents.mayShowResponseOf(host)) return false;
    return true;
  }

  close(): void {
    this.agents.destroy();
  }
}

interface PreparedSubscription {
  readonly subscription: ActionsSubscription;
  readonly parsed: ParsedFql;
  readonly batch: boolean;
}

interface PreparedConfig {
  readonly destination: RunnableActionsDestination;
  readonly settings: Record<string, unknown>;
  readonly subscriptions: readonly PreparedSubscription[];
}

export class SegmentActionsDeliveryAdapter implements DeliveryAdapter {
  readonly slug: string;
  private readonly prepared = new WeakMap<object, PreparedConfig | string>();

  constructor(
    private readonly data: ActionsDestinationData,
    private readonly runtime: SegmentActionsRuntime,
  ) {
    this.slug = data.slug;
  }

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    let config: PreparedConfig | string;
    try {
      config = this.prepare(request.settings);
    } catch (error) {
      // Loading the destination's code failed: an installation problem, retried until fixed.
      return sameOutcomeForAll(request.messages, retry(`destination code failed to load: ${String(error)}`));
    }
    if (typeof config === 'string') {
      return sameOutcomeForAll(request.messages, discard(`destination misconfigured: ${config}`));
    }
    const prepared = config;
    // Per message, the outcome of each subscription that takes it.
    const outcomes: AttemptResult[][] = request.messages.map(() => []);
    const work: Promise<void>[] = [];
    for (const subscription of prepared.subscriptions) {
      const taken = request.messages
        .map((message, index) => ({ message, index }))
        .filter(({ message }) => subscriptionMatches(subscription.parsed, message));
      if (taken.length === 0) continue;
      if (subscription.batch) {
        work.push(
          this.runBatch(
            prepared,
            subscription,
            taken.map(({ message }) => message),
          ).then((results) =>
            results.forEach((outcome, position) => outcomes[taken[position]!.index]!.push(outcome)),
          ),
        );
      } else {
        for (const { message, index } of taken) {
          work.push(
            this.runOne(prepared, subscription, message).then(
              (outcome) => void outcomes[index]!.push(outcome),
            ),
          );
        }
      }
    }
    await Promise.all(work);
    return request.messages.map((message, index) => ({
      messageId: message.messageId,
      ...combine(outcomes[index]!),
    }));
  }

  /**
   * The destination's own `onDelete`, once per user, through the egress guard like its actions
   * (docs/regulations.md §4); not supported when its definition has none.
   */
  async deleteUsers(request: UserDeletionRequest): Promise<UserDeletionOutcome> {
    let config: PreparedConfig | string;
    try {
      config = this.prepare(request.settings);
    } catch (error) {
      return { outcome: 'retry', reason: `destination code failed to load: ${String(error)}` };
    }
    if (typeof config === 'string')
      return { outcome: 'failed', reason: `destination misconfigured: ${config}` };
    const { destination, settings } = config;
    if (!destination.onDelete) return { outcome: 'not_supported', reason: 'the destination has no deletion' };
    for (const { userId, messageId } of request.users) {
      const outcome = await this.withTimeout(async () => {
        await destination.onDelete!(
          { type: 'delete', userId, messageId, timestamp: request.timestamp },
          settings,
        );
        return delivered();
      });
      const deletion = deletionOutcomeOf(outcome);
      if (deletion.outcome !== 'deleted') return deletion;
    }
    return { outcome: 'deleted' };
  }

  async close(): Promise<void> {
    // The agents are the runtime's, shared with the other Actions adapters; the registry closes it.
  }

  /** Checks the settings and parses the subscriptions once per settings object. */
  private prepare(settings: Readonly<Record<string, unknown>>): PreparedConfig | string {
    const cached = this.prepared.get(settings);
    if (cached !== undefined) return cached;
    const result = this.prepareNow(settings);
    if (Object.isFrozen(settings)) this.prepared.set(settings, result);
    return result;
  }

  private prepareNow(settings: Readonly<Record<string, unknown>>): PreparedConfig | string {
    const destination = this.runtime.destination(this.data);
    const { [SUBSCRIPTIONS_SETTING]: rawSubscriptions, ...rest } = settings;
    const destinationSettings = withoutEmptyValues(rest);
    try {
      destination.validateSettings(destinationSettings);
    } catch (error) {
      return `settings refused: ${(error as Error).message}`;
    }
    const subscriptions = rawSubscriptions ?? this.data.presets;
    if (!Array.isArray(subscriptions)) return 'setting "subscriptions" must be a list';
    const prepared: PreparedSubscription[] = [];
    for (const [index, subscription] of (subscriptions as ActionsSubscription[]).entries()) {
      const action = this.data.actions[subscription?.partnerAction];
      if (!action) return `subscriptions[${index}]: no action "${String(subscription?.partnerAction)}"`;
      const parsed = parseSubscriptionFql(subscription.subscribe);
      if (typeof parsed === 'string') return `subscriptions[${index}].subscribe: ${parsed}`;
      // A subscription switched off stays configured but runs for no message.
      if (subscription.enabled === false) continue;
      prepared.push({
        // Frozen, so mapping-kit checks it once, not at every message (actions-mapping-validation.cache.ts).
        subscription: {
          ...subscription,
          mapping: frozenMapping(withRequiredDefaults(action.fields, subscription.mapping)),
        },
        parsed,
        // Left out of the mapping, `enable_batching` takes its field default, as Segment's editor fills it.
        batch:
          action.batch &&
          (subscription.mapping?.['enable_batching'] ?? action.fields['enable_batching']?.default) === true,
      });
    }
    return { destination, settings: destinationSettings, subscriptions: prepared };
  }

  private async runOne(
    config: PreparedConfig,
    subscription: PreparedSubscription,
    message: NormalizedMessage,
  ): Promise<AttemptResult> {
    return this.withTimeout(async (signal) => {
      await config.destination.executeAction(subscription.subscription.partnerAction, {
        event: message,
        mapping: subscription.subscription.mapping ?? {},
        settings: config.settings,
        auth: {},
        signal,
      });
      return delivered();
    });
  }

  private async runBatch(
    config: PreparedConfig,
    subscription: PreparedSubscription,
    messages: readonly NormalizedMessage[],
  ): Promise<AttemptResult[]> {
    let statuses: AttemptResult[] | undefined;
    const outcome = await this.withTimeout(async (signal) => {
      const multistatus = await config.destination.executeBatch(subscription.subscription.partnerAction, {
        events: [...messages],
        mapping: subscription.subscription.mapping ?? {},
        settings: config.settings,
        auth: {},
        signal,
      });
      statuses = messages.map((_, index) =>
        multistatus?.[index] ? classifyMultiStatus(multistatus[index]) : delivered(),
      );
      return delivered();
    });
    return statuses ?? messages.map(() => outcome);
  }

  /** Runs `work`, turning every error into an outcome and giving up after `messageTimeoutMs`. */
  private withTimeout(work: (signal: AbortSignal) => Promise<AttemptResult>): Promise<AttemptResult> {
    const controller = new AbortController();
    const hosts = new Set<string>();
    return new Promise<AttemptResult>((resolve) => {
      const timer = setTimeout(() => {
        controller.abort();
        resolve(retry(`timeout after ${this.runtime.messageTimeoutMs} ms`));
      }, this.runtime.messageTimeoutMs);
      contactedHosts()
        .run(hosts, () => work(controller.signal))
        .then(
          (outcome) => {
            clearTimeout(timer);
            resolve(outcome);
          },
          (error: unknown) => {
            clearTimeout(timer);
            resolve(classifyActionsError(error, this.runtime.mayShowAnswersOf(hosts)));
          },
        );
    });
  }
}

/** One outcome from those of a message's subscriptions: any retry wins, then any discard. */
function combine(outcomes: readonly AttemptResult[]): AttemptResult {
  if (outcomes.length === 0) return filtered('no subscription of the destination takes this message');
  return (
    outcomes.find((outcome) => outcome.outcome === 'retry') ??
    outcomes.find((outcome) => outcome.outcome === 'discard') ??
    delivered()
  );
}

/** The mapping with the default of each required field it leaves out, as Segment's editor fills them. */
function withRequiredDefaults(
  fields: ActionsDestinationData['actions'][string]['fields'],
  mapping: ActionsSubscription['mapping'] | undefined,
): ActionsSubscription['mapping'] {
  const completed: Record<string, JsonValue> = { ...(mapping ?? {}) };
  for (const [name, field] of Object.entries(fields)) {
    if (field.required && field.default !== undefined && !Object.hasOwn(completed, name)) {
      completed[name] = field.default;
    }
  }
  return completed;
}

/** Settings left empty are left out, so the destination's schema applies its own defaults. */
function withoutEmptyValues(settings: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== '' && value !== null));
}
