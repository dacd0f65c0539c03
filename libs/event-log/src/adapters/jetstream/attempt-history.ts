import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import {
  fromStoredAttempts,
  withFailedAttempt,
  withStartedAttempt,
  type StoredAttempt,
} from '../../attempt-history.validation';
import type { DeliveryAttempt, FailedAttempts, StartedAttempt } from '../../event-log.port';
import type { JetStreamSession } from './jetstream-session';

export const ATTEMPT_STREAM = 'ATTEMPTS';
export const ATTEMPT_SUBJECT_PREFIX = 'attempts';
/**
 * How long a read or write of a history is tried again while `ATTEMPTS` elects a leader: elections
 * take 4-9 s on a busy machine (docs/operations.md, section 3). The router's in-progress signals keep
 * the message from being redelivered meanwhile.
 */
const RETRY_MS = 10_000;
/** Compare-and-set rounds before giving up; two replicas racing on one message settle in one or two. */
const MAX_WRITE_ROUNDS = 8;

const subjectOf = (consumerName: string, sequence: number) =>
  `${ATTEMPT_SUBJECT_PREFIX}.${consumerName}.${sequence}`;

/**
 * Failed and started attempts on JetStream: stream `ATTEMPTS`, one subject per consumer and message
 * (`attempts.<consumer>.<sequence>`) keeping only its last message, the whole history. A write is a
 * publish expecting the subject's last sequence, as leases are, so two writers never lose an attempt.
 * A settled message's subject is purged; one never purged (a crash between ack and purge) goes with
 * the stream's `max_age`.
 */
export class JetStreamAttemptHistory {
  constructor(private readonly session: JetStreamSession) {}

  /**
   * Tried again while `ATTEMPTS` elects a leader when the attempt names its delivery: a write whose
   * answer was lost may have been stored, and only a delivery's failure can tell itself from one
   * recorded already (`withFailedAttempt`).
   */
  record(consumerName: string, sequence: number, attempt: DeliveryAttempt): Promise<FailedAttempts> {
    const next = (stored: StoredAttempt[]) => withFailedAttempt(stored, attempt);
    if (attempt.deliveryCount === undefined)
      return this.change(consumerName, sequence, this.session.manager, next);
    return this.changeAcrossElections(
      `record of an attempt at ${sequence} for ${consumerName}`,
      consumerName,
      sequence,
      next,
    );
  }

  /** Tried again while `ATTEMPTS` elects a leader: a delivery's start is recorded once however often it is sent. */
  recordStarted(consumerName: string, sequence: number, started: StartedAttempt): Promise<FailedAttempts> {
    return this.changeAcrossElections(
      `record of an attempt started at ${sequence} for ${consumerName}`,
      consumerName,
      sequence,
      (stored) => withStartedAttempt(stored, started),
    );
  }

  /** `change` in short tries, sent again until `ATTEMPTS` has a leader that answers (`next` must be idempotent). */
  private changeAcrossElections(
    what: string,
    consumerName: string,
    sequence: number,
    next: (stored: StoredAttempt[]) => StoredAttempt[] | null,
  ): Promise<FailedAttempts> {
    return this.session.retryingElections(what, RETRY_MS, () =>
      this.change(consumerName, sequence, this.session.quickManager, next),
    );
  }

  /** Compare-and-set of the history as `next` makes it from the stored one; `next` answers null for no change. */
  private async change(
    consumerName: string,
    sequence: number,
    manager: JetStreamManager,
    next: (stored: StoredAttempt[]) => StoredAttempt[] | null,
  ): Promise<FailedAttempts> {
    const subject = subjectOf(consumerName, sequence);
    for (let round = 0; round < MAX_WRITE_ROUNDS; round += 1) {
      const last = await this.readLast(subject, manager);
      const stored = last?.attempts ?? [];
      const attempts = next(stored);
      if (!attempts) return fromStoredAttempts(stored);
      try {
        await this.session.client.publish(subject, JSON.stringify(attempts), {
          expect: { lastSubjectSequence: last?.revision ?? 0 },
          timeout: this.session.publishTimeoutMs,
        });
        return fromStoredAttempts(attempts);
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence))
          throw error;
      }
    }
    throw new Error(`attempt history of ${subject} kept changing under ${MAX_WRITE_ROUNDS} writes`);
  }

  /**
   * Tried again in short tries while `ATTEMPTS` elects a leader: every message redelivered after a
   * NATS node's loss reads its history first, and a read that failed would leave the message for its
   * ack wait, adding seconds to the outage (the chaos test measured 13 s instead of 7).
   */
  async read(consumerName: string, sequence: number): Promise<FailedAttempts | null> {
    const subject = subjectOf(consumerName, sequence);
    const last = await this.session.retryingElections(
      `read of the attempts at ${sequence} for ${consumerName}`,
      RETRY_MS,
      () => this.readLast(subject, this.session.quickManager),
    );
    return last ? fromStoredAttempts(last.attempts) : null;
  }

  async forget(consumerName: string, sequence: number): Promise<void> {
    await this.session.manager.streams.purge(ATTEMPT_STREAM, { filter: subjectOf(consumerName, sequence) });
  }

  async forgetConsumer(consumerName: string): Promise<void> {
    await this.session.manager.streams.purge(ATTEMPT_STREAM, {
      filter: `${ATTEMPT_SUBJECT_PREFIX}.${consumerName}.*`,
    });
  }

  private async readLast(
    subject: string,
    manager: JetStreamManager,
  ): Promise<{ attempts: StoredAttempt[]; revision: number } | null> {
    const stored = await manager.streams.getMessage(ATTEMPT_STREAM, { last_by_subj: subject });
    if (!stored) return null;
    return { attempts: stored.json<StoredAttempt[]>(), revision: stored.seq };
  }
}
