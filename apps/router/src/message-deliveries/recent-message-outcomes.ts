import type { DeliveryOutcomeKind } from '../delivery-metrics/delivery-metrics';

/** What happened to one message for one destination, as the console's debugger shows it. */
export interface MessageOutcome {
  destinationSlug: string;
  /** `retried` stays until a final outcome replaces it. */
  outcome: DeliveryOutcomeKind;
  at: string;
  /** For a discard or retry: the destination's answer, shortened. */
  detail?: string;
}

/** Messages remembered per router process; the oldest are forgotten first. */
export const MAX_REMEMBERED_MESSAGES = 50_000;

/**
 * The latest outcome of recent messages for each destination of their source, kept in memory by the
 * router that settled them (like the delivery metrics: per replica, gone after a restart). It
 * answers "where did this message go" for messages seen in the live debugger.
 */
export class RecentMessageOutcomes {
  /** By `sourceId NUL messageId`. */
  private readonly byMessage = new Map<string, StoredOutcome[]>();
  /**
   * The keys of `byMessage` in insertion order, as a ring: the slot of the next message holds the
   * oldest one's key. Evicting by key keeps each record O(1); taking a Map's first key instead walks
   * over every entry deleted before it, which costs more than the rest of a record once it is full.
   */
  private readonly order: string[] = [];
  private nextSlot = 0;

  constructor(
    private readonly capacity = MAX_REMEMBERED_MESSAGES,
    private readonly now: () => number = Date.now,
  ) {}

  record(
    sourceId: string,
    messageId: string,
    destinationSlug: string,
    outcome: DeliveryOutcomeKind,
    detail?: string,
  ): void {
    const key = `${sourceId}\u0000${messageId}`;
    let outcomes = this.byMessage.get(key);
    if (!outcomes) {
      outcomes = [];
      this.remember(key, outcomes);
    }
    // The time is formatted when read: far fewer messages are looked up than settled.
    const atMs = this.now();
    const shown = detail === undefined ? undefined : detail.slice(0, 300);
    for (const stored of outcomes) {
      if (stored.destinationSlug === destinationSlug) {
        // Updated in place: entries live long, and each replaced one would be garbage in the old
        // generation (a replay settles again every message its destination's consumer settled).
        stored.outcome = outcome;
        stored.atMs = atMs;
        stored.detail = shown;
        return;
      }
    }
    outcomes.push({ destinationSlug, outcome, atMs, detail: shown });
  }

  outcomesOf(sourceId: string, messageId: string): MessageOutcome[] {
    return (this.byMessage.get(`${sourceId}\u0000${messageId}`) ?? []).map((stored) => ({
      destinationSlug: stored.destinationSlug,
      outcome: stored.outcome,
      at: new Date(stored.atMs).toISOString(),
      ...(stored.detail === undefined ? {} : { detail: stored.detail }),
    }));
  }

  private remember(key: string, outcomes: StoredOutcome[]): void {
    if (this.capacity <= 0) return;
    if (this.order.length < this.capacity) {
      this.order.push(key);
    } else {
      this.byMessage.delete(this.order[this.nextSlot]!);
      this.order[this.nextSlot] = key;
      this.nextSlot = (this.nextSlot + 1) % this.capacity;
    }
    this.byMessage.set(key, outcomes);
  }
}

interface StoredOutcome {
  destinationSlug: string;
  outcome: DeliveryOutcomeKind;
  atMs: number;
  detail: string | undefined;
}
