import { EventLogUnavailableError, type MessageToPublish, type PublishOutcome } from '../../event-log.port';
import { assertValidMessages } from '../../event-log.validation';
import type { FramedPublish } from './hpub-frames';
import { PipelinedJetStreamPublisher, type PubAck, type PublishPath } from './pipelined-publisher';
import type { JetStreamSession } from './jetstream-session';
import { TRACKING_SUBJECT_PREFIX } from './jetstream-streams';

/** How long a publish is tried again by default while a leader is elected: a NATS election's few seconds. */
export const DEFAULT_PUBLISH_RETRY_MS = 6_000;
/** Between two tries of one batch. */
const RETRY_PAUSE_MS = 250;

/**
 * Tracking messages into `TRACKING`: subjects `tracking.<workspaceId>.<sourceId>`, `Nats-Msg-Id` =
 * messageId, through the pipelined publisher. While the connection is down a publish fails at once
 * with `EventLogUnavailableError` instead of being buffered, so the HTTP layer can answer 503 quickly.
 */
export class JetStreamTrackingPublisher {
  private readonly publisher: PipelinedJetStreamPublisher;

  constructor(
    private readonly session: JetStreamSession,
    /** How long a batch is tried again while JetStream elects a leader or reconnects; 0: never. */
    private readonly publishRetryMs: number = DEFAULT_PUBLISH_RETRY_MS,
  ) {
    this.publisher = new PipelinedJetStreamPublisher(session.connection, session.publishTimeoutMs);
  }

  /** How batches reach the server (see `PipelinedJetStreamPublisher#path`). */
  get path(): PublishPath {
    return this.publisher.path;
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    assertValidMessages(messages);
    // Every publish is in flight at once; the batch resolves when each has its PubAck (the durable store ack).
    let subject = '';
    let subjectOf: MessageToPublish | undefined;
    const publishes = messages.map((message) => {
      // A request's messages share one source, so its subject is built once.
      if (subjectOf?.workspaceId !== message.workspaceId || subjectOf.sourceId !== message.sourceId) {
        subject = `${TRACKING_SUBJECT_PREFIX}.${message.workspaceId}.${message.sourceId}`;
        subjectOf = message;
      }
      return { subject, payload: JSON.stringify(message.payload), messageId: message.messageId };
    });
    try {
      const acks = await this.publishRetryingElections(publishes);
      return acks.map((ack, index) => ({
        messageId: messages[index].messageId,
        duplicate: ack.duplicate,
        sequence: ack.sequence,
      }));
    } catch (error) {
      throw this.session.translate(error, `publish of ${messages.length} messages`);
    }
  }

  /**
   * A stream leader killed mid-publish leaves its publishes unanswered until the replicas elect
   * another, which takes seconds; answering 503 at once would send every client into its backoff.
   * So an unanswered (or refused for want of a leader) batch is sent again, with the same
   * `Nats-Msg-Id`s, until `publishRetryMs` has passed since the first try: the guard window stores a
   * message the first try did store only once (its acknowledgement then says duplicate, so the
   * dedupe index leaves it to the follower, which indexes it from the log). A connection that is down
   * is waited for within the same time. Only then does the caller answer 503.
   */
  private async publishRetryingElections(publishes: FramedPublish[]): Promise<PubAck[]> {
    const giveUpAt = Date.now() + this.publishRetryMs;
    for (;;) {
      try {
        this.session.assertUsable();
        return await this.publisher.publishAll(publishes);
      } catch (error) {
        // A lone server that is down stays down for longer than a client should wait: 503 at once.
        // In a cluster the connection moves to another node within a second.
        const retryable =
          error instanceof EventLogUnavailableError &&
          !this.session.closed &&
          (this.session.connected || this.session.connection.info?.cluster !== undefined);
        if (!retryable || Date.now() + RETRY_PAUSE_MS >= giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }

  /** Fails every publish still waiting for its acknowledgement (the connection dropped). */
  failPending(reason: string): void {
    this.publisher.failPending(reason);
  }

  close(): void {
    this.publisher.close();
  }
}
