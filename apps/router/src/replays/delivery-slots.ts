/**
 * How many of a replay's messages are being delivered at once, apart from how many its consumer
 * holds. A replayed message stays unacknowledged after its outcome is known: it waits for its
 * checkpoint to be saved in the lease and for its ack to be confirmed (`ReplayTally`), two NATS
 * round trips. With one budget for both, the destination saw fewer requests at a time than the
 * budget allows while those round trips ran, and the router sat idle (29 % of the replay phase's
 * profile). So the consumer holds the delivery budget plus room for the messages settling, and these
 * slots keep the deliveries themselves at the budget: a destination sees no more requests at a time
 * from a replay than from its live consumer.
 *
 * A message takes a slot when its delivery starts and gives it back when its outcome is known
 * (`release`, from the replay's settle hook) or, at the latest, when its handling ends.
 */
export class DeliverySlots {
  private free: number;
  /** The messages holding a slot: `release` gives a slot back once per message, whoever calls it first. */
  private readonly holders = new Set<object>();
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`slots: ${size} is not a positive integer`);
    this.free = size;
  }

  /**
   * Runs `deliver` for `message` once a slot is free (at once when one is), and gives the slot back
   * when the promise it returns settles, if `release` has not done so before.
   */
  run(message: object, deliver: () => Promise<void>): Promise<void> {
    if (this.free > 0) return this.start(message, deliver);
    return new Promise<void>((resolve, reject) => {
      this.waiting.push(() => this.start(message, deliver).then(resolve, reject));
    });
  }

  /** The message's outcome is known: its slot goes to the next message. */
  release(message: object): void {
    if (!this.holders.delete(message)) return;
    this.free += 1;
    // The slot passes straight on to the message waiting longest.
    this.waiting.shift()?.();
  }

  private start(message: object, deliver: () => Promise<void>): Promise<void> {
    this.free -= 1;
    this.holders.add(message);
    let delivered: Promise<void>;
    try {
      delivered = deliver();
    } catch (error) {
      this.release(message);
      return Promise.reject(error);
    }
    const release = () => this.release(message);
    delivered.then(release, release);
    return delivered;
  }
}
