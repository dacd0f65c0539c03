import type { NormalizedMessage } from '@tributary/contracts';
import type { DeliveryAdapter, DeliveryOutcome, DeliveryRequest } from '@tributary/destinations';

interface Waiting {
  message: NormalizedMessage;
  resolve(outcome: DeliveryOutcome): void;
}

interface Lane {
  request: Omit<DeliveryRequest, 'messages'>;
  waiting: Waiting[];
  sending: boolean;
}

/**
 * Gathers the single-message deliveries of one destination into multi-message calls of an adapter
 * that asks for it (`gathering`): the first message goes out on the next turn of the event loop with
 * whatever arrived meanwhile; messages arriving while a call is under way wait for it to end and go
 * out together in the next one, up to `maxMessages`. Under load the calls grow to the consumer's
 * in-flight budget; when idle a message waits for nothing.
 */
export class DeliveryGatherer {
  /** By the destination's frozen settings object (one per config version) and source. */
  private readonly lanes = new WeakMap<object, Map<string, Lane>>();

  constructor(private readonly adapter: DeliveryAdapter & { gathering: { maxMessages: number } }) {}

  deliver(request: Omit<DeliveryRequest, 'messages'>, message: NormalizedMessage): Promise<DeliveryOutcome> {
    const lane = this.laneOf(request);
    return new Promise<DeliveryOutcome>((resolve) => {
      lane.waiting.push({ message, resolve });
      if (!lane.sending) {
        lane.sending = true;
        setImmediate(() => void this.send(lane));
      }
    });
  }

  private laneOf(request: Omit<DeliveryRequest, 'messages'>): Lane {
    let bySource = this.lanes.get(request.settings);
    if (!bySource) {
      bySource = new Map();
      this.lanes.set(request.settings, bySource);
    }
    const key = request.sourceId ?? '';
    let lane = bySource.get(key);
    if (!lane) {
      lane = { request, waiting: [], sending: false };
      bySource.set(key, lane);
    }
    return lane;
  }

  private async send(lane: Lane): Promise<void> {
    while (lane.waiting.length > 0) {
      const taken = lane.waiting.splice(0, this.adapter.gathering.maxMessages);
      let outcomes: DeliveryOutcome[];
      try {
        const results = await this.adapter.deliver({
          ...lane.request,
          messages: taken.map((entry) => entry.message),
        });
        outcomes = taken.map(
          (_, index) =>
            results[index] ?? { outcome: 'retry', reason: 'the adapter gave no result for the message' },
        );
      } catch (error) {
        // The port says adapters never reject; one that does still leaves every message retried.
        const reason = `delivery failed: ${(error as Error)?.message ?? String(error)}`;
        outcomes = taken.map(() => ({ outcome: 'retry', reason }));
      }
      taken.forEach((entry, index) => entry.resolve(outcomes[index]!));
    }
    lane.sending = false;
  }
}
