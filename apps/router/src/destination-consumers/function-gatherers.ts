import type { NormalizedMessage } from '@tributary/contracts';
import type {
  AttemptResult,
  DeliveryAdapter,
  DeliveryRequest,
  DeliveryResult,
} from '@tributary/destinations';
import {
  BATCH_MAX_MESSAGES,
  decidedOutcomeOf,
  decideBatchOutcomes,
  FunctionInvoker,
} from '@tributary/functions';
import { DeliveryGatherer } from './delivery-gatherer';
import type { DeliveryTarget } from './delivery-targets.service';
import type { Deliverer } from './destination-delivery.planner';

type GatheringFunction = Extract<Deliverer, { kind: 'function' }>;

/**
 * Delivers the messages of destination functions that declare `onBatch` (docs/functions.md §2): each
 * instance's messages are gathered as a gathering destination's are (`DeliveryGatherer`: a call once
 * `BATCH_MAX_MESSAGES` wait or a few milliseconds after the first arrived, two calls under way), and
 * each call is one `onBatch(events, settings)` invocation, whatever the messages' types. Its answer
 * becomes one outcome per message (`decideBatchOutcomes`); the invocation is counted once in the
 * function's metrics, and its log lines name the instance but no one message.
 */
export class FunctionGatherers {
  /**
   * By deliverer: one per destination and deployed version, since a plan is made again when either
   * changes. Messages still waiting in a replaced one's gatherer go out with the version they came with.
   */
  private readonly gatherers = new WeakMap<GatheringFunction, DeliveryGatherer>();

  constructor(private readonly functions: FunctionInvoker) {}

  deliver(
    target: DeliveryTarget,
    message: NormalizedMessage,
    storedPayload: Uint8Array | undefined,
  ): Promise<AttemptResult> {
    const deliverer = target.deliverer as GatheringFunction;
    let gatherer = this.gatherers.get(deliverer);
    if (!gatherer) {
      gatherer = new DeliveryGatherer(this.onBatchOf(deliverer), { maxMessages: BATCH_MAX_MESSAGES });
      this.gatherers.set(deliverer, gatherer);
    }
    return gatherer.deliver({ settings: target.settings, ...target.source }, message, storedPayload);
  }

  /** The function's `onBatch` as a delivery adapter, the shape a gatherer calls. */
  private onBatchOf({ fn, instance }: GatheringFunction): DeliveryAdapter {
    return {
      slug: fn.functionId,
      deliver: async ({ messages, storedPayload, settings }: DeliveryRequest): Promise<DeliveryResult[]> => {
        const result = await this.functions.invoke({
          fn,
          entry: 'onBatch',
          payload: messages,
          // The stored JSON of the messages that have it, which needs no serializing again.
          ...(storedPayload !== undefined && {
            payloadJson: `[${messages
              .map((message, index) => {
                const stored = storedPayload[index];
                return stored !== undefined ? utf8.decode(stored) : JSON.stringify(message);
              })
              .join(',')}]`,
          }),
          settings,
          instance,
        });
        const decision = decideBatchOutcomes(result, messages.length);
        this.functions.record(fn, result, decidedOutcomeOf(decision.invocation));
        return decision.outcomes.map((outcome, index) => ({
          ...outcome,
          messageId: messages[index]!.messageId,
        }));
      },
      close: () => Promise.resolve(),
    };
  }
}

const utf8 = new TextDecoder();
