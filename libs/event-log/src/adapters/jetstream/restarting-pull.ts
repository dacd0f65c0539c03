import type { ConsumeOptions, Consumer, ConsumerMessages, ConsumerNotification } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';

/** `ROUTER_PULL_EXPIRES` when not set: how long one pull request may wait on the server. */
export const DEFAULT_PULL_EXPIRES_MS = 2_000;

/**
 * The pull settings of every consume: a short expiry and a heartbeat at half of it. The client's
 * defaults (30 s, heartbeat 15 s) let a pull held by a consumer leader that died go unnoticed for two
 * missed heartbeats, 30 s; with these it is noticed within one expiry.
 */
export function pullSettings(expiresMs: number): Pick<ConsumeOptions, 'expires' | 'idle_heartbeat'> {
  return { expires: expiresMs, idle_heartbeat: Math.max(500, Math.floor(expiresMs / 2)) };
}

/**
 * Consume notifications after which the pull in flight can no longer bring messages: its consumer
 * leader stopped answering (missed heartbeats: killed, or a leader election moved the consumer), the
 * consumer went away or no JetStream server answered the pull. On each the pull is issued again at
 * once instead of after the client's own recovery, which first asks for the consumer's info and backs
 * off a whole expiry when that fails, as it does during an election.
 */
const RESTART_ON: ReadonlySet<ConsumerNotification['type']> = new Set([
  'heartbeats_missed',
  'consumer_deleted',
  'consumer_not_found',
  'stream_not_found',
  'no_responders',
]);

/**
 * Restarts that follow each other without a message in between (the consumer has no leader yet: the
 * pull finds no responders) wait this long, doubling up to `MAX_PAUSE_MS`: a new leader is found
 * within a second of its election, and a leaderless consumer costs one pull a second per replica.
 */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 1_000;
/**
 * A loss this long after the previous one (with no message between) is a new outage and is told
 * again: an idle consumer's loss is otherwise the last thing it says.
 */
const OUTAGE_QUIET_MS = 30_000;

/** The longest a closing pull waits for the server to confirm it sends nothing more (`drainInbox`). */
const DRAIN_TIMEOUT_MS = 1_000;

/** What a pull watches beside its own notifications, and whom it tells. */
export interface PullWatch {
  /**
   * The subject of the consumer's leader-elected advisory
   * (`$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.<stream>.<consumer>`): a pull sent while the consumer
   * had no leader is never answered, and waiting for its missed heartbeats cost 1-4 s after each
   * election in the chaos test, so the new leader's advisory has the pull issued again at once.
   */
  leaderElected?: string;
  /** Told when the pull is lost and when messages arrive again after it (once per outage). */
  notice?: (message: string) => void;
}

/**
 * A durable consumer's `consume` that re-issues its pull at once when the pull in flight is lost (see
 * `RESTART_ON`) and when the connection comes back after a drop (the server that held the pull may be
 * the one that went away). Re-issuing is cheap and safe: a pull is a request for the next messages of
 * the consumer, which the new consumer leader keeps; messages the old pull had already handed out and
 * not yet acknowledged come back after the ack wait.
 */
export class RestartingPull {
  private closed = false;
  private restarting = false;
  private restarts = 0;
  private pauseMs = 0;
  private connectionStatus: { stop(): void } | undefined;
  private elections: Subscription | undefined;
  /** The outage under way: when its first loss came, and how many pulls were issued again since. */
  private outage: { since: number; lastLoss: number; pulls: number } | undefined;

  private constructor(
    private messages: ConsumerMessages,
    private readonly consumer: Consumer,
    private readonly options: PullConsumeOptions,
    private readonly expiresMs: number,
    private readonly connection: NatsConnection,
    private readonly notice: ((message: string) => void) | undefined,
  ) {}

  /** Starts consuming; `options` are the consume options but the pull settings, which come from `expiresMs`. */
  static async start(
    consumer: Consumer,
    options: PullConsumeOptions,
    connection: NatsConnection,
    expiresMs: number,
    watch: PullWatch = {},
  ): Promise<RestartingPull> {
    // The first pull's messages reach the instance made just after it.
    const started: { pull?: RestartingPull } = {};
    const messages = await consume(consumer, options, expiresMs, () => started.pull?.messageArrived());
    const pull = new RestartingPull(messages, consumer, options, expiresMs, connection, watch.notice);
    started.pull = pull;
    pull.follow(pull.messages);
    const status = connection.status();
    pull.connectionStatus = status as unknown as { stop(): void };
    void pull.followConnection(status);
    if (watch.leaderElected) {
      pull.elections = connection.subscribe(watch.leaderElected, {
        callback: () => pull.onLeaderElected(),
      });
    }
    return pull;
  }

  /** How many times the pull was issued again since the start. */
  get restartCount(): number {
    return this.restarts;
  }

  /**
   * Stops pulling without leaving a message behind: every message the server sent before it learnt
   * that the pull is gone still reaches the callback (see `drainInbox`).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.connectionStatus?.stop();
    this.elections?.unsubscribe();
    await drainInbox(this.messages);
    await this.messages.close();
  }

  private messageArrived(): void {
    this.pauseMs = 0;
    if (this.outage) {
      const { since, pulls } = this.outage;
      this.outage = undefined;
      this.notice?.(
        `messages arrive again, ${((Date.now() - since) / 1000).toFixed(1)} s after the pull was lost ` +
          `(pulls issued again: ${pulls})`,
      );
    }
  }

  private follow(messages: ConsumerMessages): void {
    void (async () => {
      for await (const notification of messages.status()) {
        if (this.closed || this.messages !== messages) return;
        if (RESTART_ON.has(notification.type)) return this.restart(notification.type);
      }
    })();
  }

  private async followConnection(status: AsyncIterable<{ type: string }>): Promise<void> {
    for await (const event of status) {
      if (this.closed) return;
      if (event.type === 'reconnect') await this.restart('the connection came back');
    }
  }

  /** A new leader holds none of the pulls sent before: the next one goes at once, without a pause. */
  private onLeaderElected(): void {
    if (this.closed) return;
    this.pauseMs = 0;
    void this.restart('its consumer elected a leader');
  }

  private async restart(why: string): Promise<void> {
    if (this.closed || this.restarting) return;
    const now = Date.now();
    if (!this.outage || now - this.outage.lastLoss > OUTAGE_QUIET_MS) {
      this.outage = { since: now, lastLoss: now, pulls: 0 };
      this.notice?.(`the pull was lost (${why}); issuing it again`);
    }
    this.outage.lastLoss = now;
    this.outage.pulls += 1;
    this.restarting = true;
    try {
      void this.messages.close().catch(() => undefined);
      // The first restart of a run goes at once; more without a message between (an election still
      // under way) are paced.
      const pauseMs = this.pauseMs;
      this.pauseMs = Math.min(Math.max(pauseMs * 2, FIRST_PAUSE_MS), MAX_PAUSE_MS, this.expiresMs);
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
      if (this.closed) return;
      this.restarts += 1;
      this.messages = await consume(this.consumer, this.options, this.expiresMs, () => this.messageArrived());
      this.follow(this.messages);
    } catch (error) {
      // The client refuses a pull only when its connection is closed or draining: the log is closing.
      // Anything else must not leave the consumer without a pull, nor reject a restart nobody awaits.
      if (this.closed || this.connection.isClosed() || this.connection.isDraining()) return;
      const pauseMs = Math.max(this.pauseMs, FIRST_PAUSE_MS);
      setTimeout(() => void this.restart(`it could not be issued: ${(error as Error).message}`), pauseMs);
    } finally {
      this.restarting = false;
    }
  }
}

/**
 * Drains the inbox of a pull before it is closed. Closing alone unsubscribes at once in the client, so
 * a message the server sent before the unsubscription reached it (an ack just sent had made room for
 * it, or it was just published) was dropped on arrival: the server counts it delivered and sends it
 * again only after the ack wait. That cost a replay handed over by a replica stopping gracefully a
 * whole ack wait (30 s) now and then. Draining tells the server first and waits for its answer to a
 * ping (`Subscription.drain`): what it sent before arrives before that answer, and it sends the pull
 * nothing after, since it gives a pull a message only while someone subscribes to its inbox. What
 * remains is nats-server's own moment between that check and the message's routing: in a loop made
 * to hit it (stops among fast acks), 2 stops in 30 left a message behind, against 12 in 30 before.
 *
 * The inbox's subscription is internal to the client (`sub` of its consume); without it (a future
 * client) the pull is closed as before.
 */
async function drainInbox(messages: ConsumerMessages): Promise<void> {
  const inbox = (messages as ConsumerMessages & { sub?: Partial<Subscription> }).sub;
  if (typeof inbox?.drain !== 'function' || inbox.isClosed?.() !== false) return;
  // The answer comes only once connected: a stop during an outage must not wait for the server's return.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    inbox.drain().catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, DRAIN_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

type PullConsumeOptions = ConsumeOptions & { callback: NonNullable<ConsumeOptions['callback']> };

/** One pull: consuming a consumer the client already knows sends the pull request and nothing else. */
function consume(
  consumer: Consumer,
  options: PullConsumeOptions,
  expiresMs: number,
  onMessage: () => void,
): Promise<ConsumerMessages> {
  const { callback } = options;
  return consumer.consume({
    ...options,
    ...pullSettings(expiresMs),
    callback: (message) => {
      onMessage();
      return callback(message);
    },
  });
}
