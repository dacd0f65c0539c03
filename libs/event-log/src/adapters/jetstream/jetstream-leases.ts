import { JetStreamApiCodes } from '@nats-io/jetstream';
import type { LeaseRecord, LeaseValue } from '../../event-log.port';
import { assertLeaseName, assertLeaseWrite } from '../../event-log.validation';
import { isApiError, type JetStreamSession } from './jetstream-session';
import { LEASE_STREAM, LEASE_SUBJECT_PREFIX } from './jetstream-streams';

/**
 * Leases: stream `LEASES`, subjects `lease.<name>`, one message kept per subject. A lease is its
 * subject's last message, its revision that message's sequence, and a write is a publish expecting
 * the subject's last sequence (JetStream's compare-and-set, as its KV buckets do it).
 */
export class JetStreamLeases {
  constructor(private readonly session: JetStreamSession) {}

  async readLease(name: string): Promise<LeaseRecord | null> {
    assertLeaseName(name);
    this.session.assertUsable();
    try {
      const stored = await this.session.manager.streams.getMessage(LEASE_STREAM, {
        last_by_subj: `${LEASE_SUBJECT_PREFIX}.${name}`,
      });
      if (!stored) return null;
      const value = stored.json<LeaseValue>();
      return { holder: value.holder, data: value.data, revision: stored.seq };
    } catch (error) {
      throw this.session.translate(error, `read of lease ${name}`);
    }
  }

  async writeLease(name: string, value: LeaseValue, expectedRevision: number): Promise<number | null> {
    assertLeaseName(name);
    assertLeaseWrite(value, expectedRevision);
    this.session.assertUsable();
    try {
      const ack = await this.session.client.publish(
        `${LEASE_SUBJECT_PREFIX}.${name}`,
        JSON.stringify({ holder: value.holder, data: value.data }),
        { expect: { lastSubjectSequence: expectedRevision }, timeout: this.session.publishTimeoutMs },
      );
      return ack.seq;
    } catch (error) {
      if (isApiError(error, JetStreamApiCodes.StreamWrongLastSequence)) return null;
      throw this.session.translate(error, `write of lease ${name}`);
    }
  }
}
