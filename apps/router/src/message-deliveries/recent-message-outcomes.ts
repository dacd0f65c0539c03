import { DELIVERY_OUTCOMES, type DeliveryOutcome } from '@tributary/contracts';

/** What happened to one message for one destination, as the console's debugger shows it. */
export interface MessageOutcome {
  destinationSlug: string;
  /** `retried` stays until a final outcome replaces it. */
  outcome: DeliveryOutcome;
  at: string;
  /** For a discard or retry: the destination's answer, shortened. */
  detail?: string;
}

/** Outcomes remembered per router process (one per message and destination settled); the oldest go first. */
export const MAX_REMEMBERED_OUTCOMES = 100_000;

/**
 * The latest outcome of recent messages for each destination of their source, kept in memory by the
 * router that settled them (like the delivery metrics: per replica, gone after a restart). It
 * answers "where did this message go" for messages seen in the live debugger.
 *
 * Recorded for every message settled, read only when someone looks one up: so a record writes into
 * slots of a ring of columns and makes no object (no key string, entry, array or record per message,
 * which all lived long enough to be promoted and then collected from the old generation), and a lookup
 * walks the ring, once for all the messages it asks about.
 */
export class RecentMessageOutcomes {
  private readonly sourceIds: string[];
  private readonly messageIds: string[];
  private readonly destinationSlugs: string[];
  /** Index into `DELIVERY_OUTCOMES`. */
  private readonly outcomes: Uint8Array;
  private readonly atMs: Float64Array;
  private readonly details: (string | undefined)[];
  /** The slot of the next record, which holds the oldest one once the ring is full. */
  private nextSlot = 0;
  private filled = 0;

  constructor(
    private readonly capacity = MAX_REMEMBERED_OUTCOMES,
    private readonly now: () => number = Date.now,
  ) {
    const slots = Math.max(0, capacity);
    this.sourceIds = new Array<string>(slots).fill('');
    this.messageIds = new Array<string>(slots).fill('');
    this.destinationSlugs = new Array<string>(slots).fill('');
    this.outcomes = new Uint8Array(slots);
    this.atMs = new Float64Array(slots);
    this.details = new Array<string | undefined>(slots).fill(undefined);
  }

  record(
    sourceId: string,
    messageId: string,
    destinationSlug: string,
    outcome: DeliveryOutcome,
    detail?: string,
  ): void {
    if (this.capacity <= 0) return;
    const slot = this.nextSlot;
    this.sourceIds[slot] = sourceId;
    this.messageIds[slot] = messageId;
    this.destinationSlugs[slot] = destinationSlug;
    this.outcomes[slot] = DELIVERY_OUTCOMES.indexOf(outcome);
    // The time is formatted when read: far fewer messages are looked up than settled.
    this.atMs[slot] = this.now();
    this.details[slot] = detail === undefined ? undefined : detail.slice(0, 300);
    this.nextSlot = (slot + 1) % this.capacity;
    if (this.filled < this.capacity) this.filled += 1;
  }

  /** Per destination, in the order it was first settled, its latest outcome. */
  outcomesOf(sourceId: string, messageId: string): MessageOutcome[] {
    return this.outcomesOfMessages(sourceId, [messageId]).get(messageId) ?? [];
  }

  /**
   * `outcomesOf` for several messages of one source, in one walk of the ring whatever their number
   * (a walk per message made a request for 100 of them 100 walks of the whole ring). Messages with no
   * outcome remembered are absent from the answer.
   */
  outcomesOfMessages(sourceId: string, messageIds: readonly string[]): Map<string, MessageOutcome[]> {
    const wanted = new Set(messageIds);
    /** Per message, per destination (in the order first settled), the slot of its latest outcome. */
    const latest = new Map<string, Map<string, number>>();
    const oldest = this.filled < this.capacity ? 0 : this.nextSlot;
    for (let step = 0; step < this.filled; step += 1) {
      const slot = (oldest + step) % this.capacity;
      const messageId = this.messageIds[slot]!;
      if (!wanted.has(messageId) || this.sourceIds[slot] !== sourceId) continue;
      let byDestination = latest.get(messageId);
      if (!byDestination) latest.set(messageId, (byDestination = new Map()));
      byDestination.set(this.destinationSlugs[slot]!, slot);
    }
    const answer = new Map<string, MessageOutcome[]>();
    for (const [messageId, byDestination] of latest) {
      answer.set(
        messageId,
        [...byDestination.values()].map((slot) => this.outcomeAt(slot)),
      );
    }
    return answer;
  }

  private outcomeAt(slot: number): MessageOutcome {
    const detail = this.details[slot];
    return {
      destinationSlug: this.destinationSlugs[slot]!,
      outcome: DELIVERY_OUTCOMES[this.outcomes[slot]!]!,
      at: new Date(this.atMs[slot]!).toISOString(),
      ...(detail === undefined ? {} : { detail }),
    };
  }

  /** Forgets every outcome of these messages of the source (a regulation erased them). */
  forget(sourceIds: ReadonlySet<string> | undefined, messageIds: ReadonlySet<string>): void {
    if (messageIds.size === 0) return;
    for (let slot = 0; slot < this.filled; slot += 1) {
      if (!messageIds.has(this.messageIds[slot]!)) continue;
      if (sourceIds && !sourceIds.has(this.sourceIds[slot]!)) continue;
      this.messageIds[slot] = '';
      this.sourceIds[slot] = '';
      this.details[slot] = undefined;
    }
  }
}
