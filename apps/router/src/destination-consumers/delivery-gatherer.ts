import type { NormalizedMessage } from '@tributary/contracts';
import type { AttemptResult, DeliveryAdapter, DeliveryRequest, Gathering } from '@tributary/destinations';

interface Waiting {
  message: NormalizedMessage;
  /** The message's stored JSON, where the caller gave it (see `DeliveryRequest.storedPayload`). */
  storedPayload: Uint8Array | undefined;
  resolve(outcome: AttemptResult): void;
}

interface Lane {
  request: Omit<DeliveryRequest, 'messages' | 'storedPayload'>;
  waiting: Waiting[];
  /** Calls under way. */
  sending: number;
  flushTimer: NodeJS.Timeout | undefined;
}

/** How long the first message of a call waits for others: a pull from the log arrives over a few ms. */
export const GATHER_WAIT_MS = 3;
/**
 * Calls under way at once per destination and source when the definition does not say (`callsAtOnce`):
 * one writes while the next gathers.
 */
export const CALLS_AT_ONCE = 2;

/** Calls under way at once per destination and source for a destination that gathers. */
export function callsAtOnceOf(gathering: Pick<Gathering, 'callsAtOnce'>): number {
  return Math.max(1, gathering.callsAtOnce ?? CALLS_AT_ONCE);
}

/**
 * Gathers the single-message deliveries of one destination into multi-message calls of its adapter, as
 * its definition's `gathering` says: a call goes out once `maxMessages` are waiting or `GATHER_WAIT_MS`
 * after the first one arrived, with up to `callsAtOnceOf(gathering)` calls under way; messages
 * arriving while all are busy go together in the next one. Under load the calls grow to `maxMessages`; when idle a
 * message waits a few milliseconds at most.
 */
export class DeliveryGatherer {
  /** By the destination's frozen settings object (one per config version) and source. */
  private readonly lanes = new WeakMap<object, Map<string, Lane>>();

  private readonly callsAtOnce: number;

  constructor(
    private readonly adapter: DeliveryAdapter,
    private readonly gathering: Gathering,
  ) {
    this.callsAtOnce = callsAtOnceOf(gathering);
  }

  deliver(
    request: Omit<DeliveryRequest, 'messages' | 'storedPayload'>,
    message: NormalizedMessage,
    storedPayload?: Uint8Array,
  ): Promise<AttemptResult> {
    const lane = this.laneOf(request);
    return new Promise<AttemptResult>((resolve) => {
      lane.waiting.push({ message, storedPayload, resolve });
      this.schedule(lane);
    });
  }

  private schedule(lane: Lane): void {
    if (lane.waiting.length === 0 || lane.sending >= this.callsAtOnce) return;
    if (lane.waiting.length >= this.gathering.maxMessages) {
      clearTimeout(lane.flushTimer);
      lane.flushTimer = undefined;
      void this.send(lane);
    } else if (!lane.flushTimer) {
      lane.flushTimer = setTimeout(() => {
        lane.flushTimer = undefined;
        void this.send(lane);
      }, GATHER_WAIT_MS);
    }
  }

  private laneOf(request: Omit<DeliveryRequest, 'messages' | 'storedPayload'>): Lane {
    let bySource = this.lanes.get(request.settings);
    if (!bySource) {
      bySource = new Map();
      this.lanes.set(request.settings, bySource);
    }
    const key = request.sourceId ?? '';
    let lane = bySource.get(key);
    if (!lane) {
      lane = { request, waiting: [], sending: 0, flushTimer: undefined };
      bySource.set(key, lane);
    }
    return lane;
  }

  private async send(lane: Lane): Promise<void> {
    const taken = lane.waiting.splice(0, this.gathering.maxMessages);
    if (taken.length === 0) return;
    lane.sending += 1;
    let outcomes: AttemptResult[];
    try {
      const results = await this.adapter.deliver({
        ...lane.request,
        messages: taken.map((entry) => entry.message),
        ...(taken.some((entry) => entry.storedPayload !== undefined) && {
          storedPayload: taken.map((entry) => entry.storedPayload),
        }),
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
    lane.sending -= 1;
    taken.forEach((entry, index) => entry.resolve(outcomes[index]!));
    this.schedule(lane);
  }
}
