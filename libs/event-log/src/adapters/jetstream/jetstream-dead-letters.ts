import type { MsgRequest, StoredMsg } from '@nats-io/jetstream';
import type {
  DeadLetter,
  DeadLetterOutcome,
  ListDeadLettersOptions,
  NewDeadLetter,
} from '../../event-log.port';
import { assertConsumerName, assertPositiveInteger } from '../../event-log.validation';
import type { JetStreamSession } from './jetstream-session';
import { DEAD_LETTER_STREAM, DEAD_LETTER_SUBJECT_PREFIX } from './jetstream-streams';

const DEFAULT_DEAD_LETTER_PAGE = 100;

/** The JSON body of a message on `deadletter.<consumerName>`; the stored time is the dead-letter time. */
interface DeadLetterBody {
  consumerName: string;
  reason: string;
  attempts: { at: string; outcome: string }[];
  message: {
    workspaceId: string;
    sourceId: string;
    messageId: string;
    sequence: number;
    publishedAt: string;
    payload: Record<string, unknown>;
  };
}

/** Dead letters: stream `DEADLETTER`, subjects `deadletter.<consumerName>`, `Nats-Msg-Id` = `<consumer>:<sequence>`. */
export class JetStreamDeadLetters {
  constructor(private readonly session: JetStreamSession) {}

  async deadLetter(letter: NewDeadLetter): Promise<DeadLetterOutcome> {
    assertConsumerName(letter.consumerName);
    this.session.assertUsable();
    const { message } = letter;
    const body: DeadLetterBody = {
      consumerName: letter.consumerName,
      reason: letter.reason,
      attempts: letter.attempts.map((attempt) => ({
        at: attempt.at.toISOString(),
        outcome: attempt.outcome,
      })),
      message: { ...message, publishedAt: message.publishedAt.toISOString() },
    };
    try {
      const ack = await this.session.client.publish(
        `${DEAD_LETTER_SUBJECT_PREFIX}.${letter.consumerName}`,
        JSON.stringify(body),
        {
          // A router that crashes between dead-lettering and acking will dead-letter again: dedupe it.
          msgID: `${letter.consumerName}:${message.sequence}`,
          timeout: this.session.publishTimeoutMs,
        },
      );
      return { deadLetterSequence: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      throw this.session.translate(error, `dead letter of ${message.messageId}`);
    }
  }

  async listDeadLetters(options: ListDeadLettersOptions = {}): Promise<DeadLetter[]> {
    const limit = options.limit ?? DEFAULT_DEAD_LETTER_PAGE;
    assertPositiveInteger('limit', limit);
    if (options.consumerName !== undefined) assertConsumerName(options.consumerName);
    this.session.assertUsable();
    const subject = `${DEAD_LETTER_SUBJECT_PREFIX}.${options.consumerName ?? '>'}`;
    const letters: DeadLetter[] = [];
    let nextSequence = (options.afterSequence ?? 0) + 1;
    try {
      // One "next message on this subject from this sequence" request per letter: simple, and dead
      // letters are read by operators, not on a hot path.
      while (letters.length < limit) {
        const request = { seq: nextSequence, next_by_subj: subject } as unknown as MsgRequest;
        const stored = await this.session.manager.streams.getMessage(DEAD_LETTER_STREAM, request);
        if (!stored) break;
        letters.push(toDeadLetter(stored));
        nextSequence = stored.seq + 1;
      }
    } catch (error) {
      throw this.session.translate(error, 'dead-letter listing');
    }
    return letters;
  }
}

function toDeadLetter(stored: StoredMsg): DeadLetter {
  const body = stored.json<DeadLetterBody>();
  return {
    deadLetterSequence: stored.seq,
    deadLetteredAt: stored.time,
    consumerName: body.consumerName,
    reason: body.reason,
    attempts: body.attempts.map((attempt) => ({ at: new Date(attempt.at), outcome: attempt.outcome })),
    message: { ...body.message, publishedAt: new Date(body.message.publishedAt) },
  };
}
