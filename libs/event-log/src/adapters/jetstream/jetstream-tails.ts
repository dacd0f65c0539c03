import { DeliverPolicy, ReplayPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { TailHandler, TailOptions, TailSubscription } from '../../event-log.port';
import { assertTailOptions } from '../../event-log.validation';
import { startTail } from '../../tail-loop';
import type { JetStreamSession } from './jetstream-session';
import { TRACKING_STREAM, trackingFilter } from './jetstream-streams';
import { pullSettings } from './restarting-pull';

/** Messages a tail's ordered consumer keeps buffered ahead of its handler. */
const TAIL_BUFFER = 256;

/** Tails of `TRACKING`: what is stored from now on, read by ordered consumers. */
export class JetStreamTails {
  private readonly tails = new Set<TailSubscription>();

  constructor(private readonly session: JetStreamSession) {}

  /**
   * An ordered consumer: ephemeral, flow-controlled, recreated by the client after a gap, and removed
   * by the server once unused, so a tail leaves nothing durable behind. "Now" is the stream's last
   * sequence when the tail starts, so a message stored after `tail` resolved is never missed.
   */
  async tail(options: TailOptions, handler: TailHandler): Promise<TailSubscription> {
    assertTailOptions(options);
    this.session.assertUsable();
    let messages: ConsumerMessages;
    try {
      const { state } = await this.session.manager.streams.info(TRACKING_STREAM);
      const after = options.afterSequence;
      const startSequence = after === undefined || after > state.last_seq ? state.last_seq + 1 : after + 1;
      const consumer = await this.session.client.consumers.get(TRACKING_STREAM, {
        // One subject as a string: a list needs nats-server 2.10, and Debian ships older servers.
        filter_subjects: trackingFilter(options.sourceId),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: startSequence,
        replay_policy: ReplayPolicy.Instant,
      });
      // Short pulls with a heartbeat: the client recreates an ordered consumer as soon as two
      // heartbeats are missed (its server died), rather than after the default 30 s.
      messages = await consumer.consume({
        max_messages: TAIL_BUFFER,
        ...pullSettings(this.session.pullExpiresMs),
      });
    } catch (error) {
      throw this.session.translate(error, `tail of source ${options.sourceId}`);
    }
    const subscription = startTail(
      async (deliver, isStopped) => {
        for await (const message of messages) {
          if (isStopped()) return;
          await deliver(toTailedMessage(message));
        }
      },
      handler,
      async () => {
        await messages.close();
      },
    );
    this.tails.add(subscription);
    void subscription.ended.then(() => this.tails.delete(subscription));
    return subscription;
  }

  /** Stops every tail (the log is closing). */
  async stopAll(): Promise<void> {
    await Promise.allSettled([...this.tails].map((subscription) => subscription.stop()));
  }
}

function toTailedMessage(message: JsMsg) {
  const [, workspaceId, sourceId] = message.subject.split('.');
  return {
    workspaceId,
    sourceId,
    messageId: message.headers?.get('Nats-Msg-Id') ?? '',
    sequence: message.seq,
    publishedAt: message.time,
    payload: message.json<Record<string, unknown>>(),
  };
}
