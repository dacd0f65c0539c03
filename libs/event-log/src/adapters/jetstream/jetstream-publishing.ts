import type { MessageToPublish, PublishOutcome } from '../../event-log.port';
import { assertValidMessages } from '../../event-log.validation';
import { PipelinedJetStreamPublisher, type PublishPath } from './pipelined-publisher';
import type { JetStreamSession } from './jetstream-session';
import { TRACKING_SUBJECT_PREFIX } from './jetstream-streams';

/**
 * Tracking messages into `TRACKING`: subjects `tracking.<workspaceId>.<sourceId>`, `Nats-Msg-Id` =
 * messageId, through the pipelined publisher. While the connection is down a publish fails at once
 * with `EventLogUnavailableError` instead of being buffered, so the HTTP layer can answer 503 quickly.
 */
export class JetStreamTrackingPublisher {
  private readonly publisher: PipelinedJetStreamPublisher;

  constructor(private readonly session: JetStreamSession) {
    this.publisher = new PipelinedJetStreamPublisher(session.connection, session.publishTimeoutMs);
  }

  /** How batches reach the server (see `PipelinedJetStreamPublisher#path`). */
  get path(): PublishPath {
    return this.publisher.path;
  }

  async publishBatch(messages: MessageToPublish[]): Promise<PublishOutcome[]> {
    assertValidMessages(messages);
    this.session.assertUsable();
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
      const acks = await this.publisher.publishAll(publishes);
      return acks.map((ack, index) => ({
        messageId: messages[index].messageId,
        duplicate: ack.duplicate,
        sequence: ack.sequence,
      }));
    } catch (error) {
      throw this.session.translate(error, `publish of ${messages.length} messages`);
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
