import { JetStreamApiCodes, type StoredMsg } from '@nats-io/jetstream';
import { DEFAULT_SEEN_ONCE_CAPACITY, SeenOnceCapacityError } from '../../event-log.port';
import { assertSeenOnce } from '../../event-log.validation';
import { isApiError, type JetStreamSession } from './jetstream-session';
import { SEEN_ONCE_STREAM, SEEN_ONCE_SUBJECT_PREFIX } from './jetstream-streams';

/** JetStream's answer to a publish into a stream at its `max_msgs` with `discard: new`. */
const STREAM_STORE_FAILED = 10077;

/**
 * One-time keys: stream `SEEN_ONCE`, subjects `seen.<key>`, one message per subject holding its
 * expiry, `max_age` = `MAX_SEEN_ONCE_TTL_MS`, `max_msgs` = the capacity with `discard: new` (full:
 * refuse, never evict a live key); recorded by the same compare-and-set as leases.
 */
export class JetStreamSeenOnce {
  constructor(
    private readonly session: JetStreamSession,
    private readonly capacity: number = DEFAULT_SEEN_ONCE_CAPACITY,
  ) {}

  async markSeenOnce(key: string, ttlMs: number): Promise<boolean> {
    assertSeenOnce(key, ttlMs);
    this.session.assertUsable();
    const subject = `${SEEN_ONCE_SUBJECT_PREFIX}.${key}`;
    // Expected last sequence 0: the key was never recorded (or its record aged out of the stream).
    let expectedSequence = 0;
    // Each turn either records the key or learns why not; a record that ages out between the two
    // calls sends it round once more, so three turns are plenty.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.session.client.publish(subject, JSON.stringify({ expiresAt: Date.now() + ttlMs }), {
          expect: { lastSubjectSequence: expectedSequence },
          timeout: this.session.publishTimeoutMs,
        });
        return true;
      } catch (error) {
        if (isApiError(error, STREAM_STORE_FAILED)) {
          throw new SeenOnceCapacityError(this.capacity);
        }
        if (!isApiError(error, JetStreamApiCodes.StreamWrongLastSequence)) {
          throw this.session.translate(error, `seen-once record of ${key}`);
        }
        // Another record exists. Written by someone else since we last looked: it is theirs.
        if (expectedSequence !== 0) return false;
      }
      let stored: StoredMsg | null;
      try {
        stored = await this.session.manager.streams.getMessage(SEEN_ONCE_STREAM, { last_by_subj: subject });
      } catch (error) {
        throw this.session.translate(error, `seen-once read of ${key}`);
      }
      if (!stored) continue;
      const { expiresAt } = stored.json<{ expiresAt: number }>();
      if (expiresAt > Date.now()) return false;
      // Expired but not yet removed by max_age: replace it, unless another writer does first.
      expectedSequence = stored.seq;
    }
    return false;
  }
}
