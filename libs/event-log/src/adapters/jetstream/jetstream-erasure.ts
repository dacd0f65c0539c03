import { DeliverPolicy, JetStreamApiCodes, type JsMsg } from '@nats-io/jetstream';
import type { ErasedMessages, MessagesToErase } from '../../event-log.port';
import { ATTEMPT_STREAM, ATTEMPT_SUBJECT_PREFIX } from './attempt-history';
import { PROTOCOLS_STREAM } from './jetstream-protocols-outcomes';
import { isApiError, type JetStreamSession } from './jetstream-session';
import {
  DEAD_LETTER_STREAM,
  DEAD_LETTER_SUBJECT_PREFIX,
  TRACKING_STREAM,
  TRACKING_SUBJECT_PREFIX,
} from './jetstream-streams';

/** Messages of one scan pulled at once. */
const SCAN_BATCH = 500;

/**
 * A regulation's erasure on JetStream (docs/regulations.md §4). Each stream that holds messages is
 * read over the subjects in scope with an ordered consumer, up to its last message when the scan
 * began, and every message of a subject is deleted with `erase` (its bytes overwritten, not only
 * marked deleted): the subjects' messages in `TRACKING`, their dead letters in `DEADLETTER`, their
 * Protocols outcomes (the message as it came in) in `PROTOCOLS`, and the `ATTEMPTS` histories of
 * every erased message. Nothing is kept between steps, so a run cut short is finished by running it
 * again; what is already erased is not found twice.
 */
export class JetStreamErasure {
  constructor(private readonly session: JetStreamSession) {}

  async erase(request: MessagesToErase): Promise<ErasedMessages> {
    const subjects = new Set(request.subjectIds);
    const isSubject = (message: Record<string, unknown> | undefined) => {
      const value = message?.[request.field];
      return typeof value === 'string' && subjects.has(value);
    };
    const scopes = request.sourceIds?.map((sourceId) => `${request.workspaceId}.${sourceId}`) ?? [
      `${request.workspaceId}.>`,
    ];
    const inScope = (workspaceId: string, sourceId: string) =>
      workspaceId === request.workspaceId && (!request.sourceIds || request.sourceIds.includes(sourceId));

    const erasedSequences: number[] = [];
    const messageIds: string[] = [];
    let messages = 0;
    for (const scope of scopes) {
      const found = await this.scan(TRACKING_STREAM, `${TRACKING_SUBJECT_PREFIX}.${scope}`, (stored) => {
        const payload = stored.json<Record<string, unknown>>();
        if (!isSubject(payload)) return false;
        messageIds.push(String(payload.messageId));
        return true;
      });
      messages += await this.eraseAll(TRACKING_STREAM, found);
      erasedSequences.push(...found);
    }

    let deadLetters = 0;
    const letters = await this.scan(DEAD_LETTER_STREAM, `${DEAD_LETTER_SUBJECT_PREFIX}.>`, (stored) => {
      const { message } = stored.json<{ message: DeadLetteredBody }>();
      if (!inScope(message.workspaceId, message.sourceId) || !isSubject(message.payload)) return false;
      erasedSequences.push(message.sequence);
      return true;
    });
    deadLetters += await this.eraseAll(DEAD_LETTER_STREAM, letters);

    let protocolsOutcomes = 0;
    for (const scope of scopes) {
      const outcomes = await this.scan(PROTOCOLS_STREAM, `protocols.${scope}`, (stored) =>
        isSubject(stored.json<{ sample?: Record<string, unknown> }>().sample),
      );
      protocolsOutcomes += await this.eraseAll(PROTOCOLS_STREAM, outcomes);
    }

    for (const sequence of new Set(erasedSequences)) {
      await this.session.manager.streams.purge(ATTEMPT_STREAM, {
        filter: `${ATTEMPT_SUBJECT_PREFIX}.*.${sequence}`,
      });
    }
    return { messages, messageIds, deadLetters, protocolsOutcomes };
  }

  /** The sequences of the subject's messages (up to its last one now) that `select` picks. */
  private async scan(stream: string, subject: string, select: (stored: JsMsg) => boolean): Promise<number[]> {
    const { client, manager } = this.session;
    const last = await manager.streams
      .getMessage(stream, { last_by_subj: subject })
      .catch((error: unknown) => {
        if (isApiError(error, JetStreamApiCodes.NoMessageFound)) return null;
        throw error;
      });
    if (!last) return [];
    const selected: number[] = [];
    const consumer = await client.consumers.get(stream, {
      filter_subjects: subject,
      deliver_policy: DeliverPolicy.All,
    });
    const messages = await consumer.consume({ max_messages: SCAN_BATCH });
    try {
      for await (const message of messages) {
        let picked = false;
        try {
          picked = select(message);
        } catch {
          // A body that is not the JSON we wrote is not a subject's message.
        }
        if (picked) selected.push(message.seq);
        if (message.seq >= last.seq) break;
      }
    } finally {
      await messages.close();
    }
    return selected;
  }

  private async eraseAll(stream: string, sequences: readonly number[]): Promise<number> {
    let erased = 0;
    for (const sequence of sequences) {
      try {
        if (await this.session.manager.streams.deleteMessage(stream, sequence, true)) erased += 1;
      } catch (error) {
        // Gone meanwhile (retention, or an earlier run of this erasure that was cut short).
        if (!isApiError(error, JetStreamApiCodes.NoMessageFound)) throw error;
      }
    }
    return erased;
  }
}

interface DeadLetteredBody {
  workspaceId: string;
  sourceId: string;
  sequence: number;
  payload: Record<string, unknown>;
}
