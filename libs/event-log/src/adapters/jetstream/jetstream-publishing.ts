import type { MessageToPublish, PublishOutcome } from '../../event-log.port';
import { assertValidMessages } from '../../event-log.validation';
import { PipelinedJetStreamPublisher, type PublishPath } from './pipelined-publisher';
import type { JetStreamSession } from './jetstream-session';
import { TRACKING_SUBJECT_PREFIX } from './jetstream-streams';

/** How long a publish is tried again by default while a leader is elected: a NATS election's few seconds. */
export const DEFAULT_PUBLISH_RETRY_MS = 6_000;

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
    // A stream leader killed mid-publish leaves its publishes unanswered until the replicas elect
    // another; answering 503 at once would send every client into its backoff. So the batch is sent
    // again with the same `Nats-Msg-Id`s until `publishRetryMs` has passed: the guard window stores a
    // message the first try did store only once (its acknowledgement then says duplicate, so the dedupe
    // index leaves it to the follower, which indexes it from the log). Only then does the caller answer 503.
    const acks = await this.session.retryingElections(
      `publish of ${messages.length} messages`,
      this.publishRetryMs,
      () => this.publisher.publishAll(publishes),
    );
    return acks.map((ack, index) => ({
      messageId: messages[index].messageId,
      duplicate: ack.duplicate,
      sequence: ack.sequence,
    }));
  }

  /** Fails every publish still waiting for its acknowledgement (the connection dropped). */
  failPending(reason: string): void {
    this.publisher.failPending(reason);
  }

  close(): void {
    this.publisher.close();
  }
}
