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
  /** Insertion-ordered, so the first key is the oldest message. */
  private readonly byMessage = new Map<string, MessageOutcome[]>();

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
      this.byMessage.set(key, outcomes);
      if (this.byMessage.size > this.capacity) {
        this.byMessage.delete(this.byMessage.keys().next().value as string);
      }
    }
    const entry: MessageOutcome = {
      destinationSlug,
      outcome,
      at: new Date(this.now()).toISOString(),
      ...(detail === undefined ? {} : { detail: detail.slice(0, 300) }),
    };
    const existing = outcomes.findIndex((known) => known.destinationSlug === destinationSlug);
    if (existing >= 0) outcomes[existing] = entry;
    else outcomes.push(entry);
  }

  outcomesOf(sourceId: string, messageId: string): MessageOutcome[] {
    return [...(this.byMessage.get(`${sourceId}\u0000${messageId}`) ?? [])];
  }
}
