import type { EventLog, NewDeadLetter } from '../event-log.port';
import {
  eventLogHarness,
  unique,
  waitUntil,
  type EventLogContractFactory,
} from './event-log-harness.contract';

/** What every engine's `MessageErasure` must do (see the port's documentation). */
export function describeMessageErasureContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`MessageErasure contract: ${adapterName}`, () => {
    const { openFresh, record } = eventLogHarness(getFactory);

    describe('erasure of regulated users', () => {
      /** A consumer from the start of the log: every message still stored, of every source. */
      async function storedMessages(log: EventLog): Promise<Record<string, unknown>[]> {
        const consumerName = unique('everything');
        const all = await record(log, consumerName, { deliverFrom: new Date(0) });
        await waitUntil('the replay consumer is drained', async () => {
          const lag = await log.consumerLag(consumerName);
          return lag.undelivered === 0 && lag.unacknowledged === 0;
        });
        await all.subscription.stop();
        return all.received.map((entry) => entry.delivery.payload);
      }
      const userMessage = (workspaceId: string, sourceId: string, ids: Record<string, string>) => {
        const messageId = unique('msg');
        return {
          workspaceId,
          sourceId,
          messageId,
          payload: { type: 'track', event: 'Paid', messageId, ...ids },
        };
      };

      it("erases a subject's messages, dead letters, attempt histories and Protocols outcomes, in scope only", async () => {
        const log = await openFresh();
        // Protocols outcomes outlive a test's other streams on JetStream: workspaces of their own.
        const ws = unique('ws');
        const otherWs = unique('ws');
        const batch = [
          userMessage(ws, 'src-a', { userId: 'u1' }),
          userMessage(ws, 'src-a', { userId: 'u2' }),
          userMessage(ws, 'src-a', { userId: 'u1' }),
          userMessage(ws, 'src-a', { anonymousId: 'u1' }),
          userMessage(ws, 'src-b', { userId: 'u1' }),
          userMessage(otherWs, 'src-a', { userId: 'u1' }),
        ];
        const outcomes = await log.publishBatch(batch);
        const letter = (index: number): NewDeadLetter => ({
          consumerName: 'destination-a',
          reason: 'retries exhausted',
          attempts: [{ at: new Date(), outcome: 'HTTP 500' }],
          message: {
            ...batch[index],
            sequence: outcomes[index].sequence,
            publishedAt: new Date(),
          },
        });
        await log.deadLetter(letter(0));
        await log.deadLetter(letter(1));
        await log.recordFailedAttempt('destination-a', outcomes[2].sequence, {
          at: new Date(),
          outcome: 'HTTP 503',
        });
        await log.recordFailedAttempt('destination-a', outcomes[1].sequence, {
          at: new Date(),
          outcome: 'HTTP 503',
        });
        await log.recordProtocolsOutcomes(
          [0, 1].map((index) => ({
            workspaceId: ws,
            sourceId: 'src-a',
            messageId: batch[index].messageId,
            outcome: { violations: [], sample: batch[index].payload },
          })),
        );

        const request = {
          workspaceId: ws,
          sourceIds: ['src-a'],
          field: 'userId' as const,
          subjectIds: ['u1'],
        };
        expect(await log.eraseMessages(request)).toEqual({
          messages: 2,
          messageIds: [batch[0].messageId, batch[2].messageId],
          deadLetters: 1,
          protocolsOutcomes: 1,
        });

        const kept = (await storedMessages(log)).map((payload) => payload.messageId);
        expect(kept).toEqual([1, 3, 4, 5].map((index) => batch[index].messageId));
        expect((await log.listDeadLetters()).map((entry) => entry.message.messageId)).toEqual([
          batch[1].messageId,
        ]);
        expect(await log.readFailedAttempts('destination-a', outcomes[2].sequence)).toBeNull();
        expect(await log.readFailedAttempts('destination-a', outcomes[1].sequence)).not.toBeNull();
        const recorded = await log.readProtocolsOutcomes('src-a', new Date(Date.now() - 60_000));
        expect(recorded.map((outcome) => outcome.messageId)).toEqual([batch[1].messageId]);
        // The ids stay known: a client's retry of an erased message is still a duplicate.
        expect((await log.publishBatch([batch[0]]))[0].duplicate).toBe(true);

        // Idempotent: a second run (after a crash midway) finds nothing more.
        expect(await log.eraseMessages(request)).toEqual({
          messages: 0,
          messageIds: [],
          deadLetters: 0,
          protocolsOutcomes: 0,
        });

        // The whole workspace, by anonymousId and then by userId: the other workspace keeps its own.
        expect(
          await log.eraseMessages({ workspaceId: ws, field: 'anonymousId', subjectIds: ['u1'] }),
        ).toMatchObject({ messages: 1 });
        expect(
          await log.eraseMessages({ workspaceId: ws, field: 'userId', subjectIds: ['u1', 'u2'] }),
        ).toMatchObject({
          messages: 2,
          deadLetters: 1,
          protocolsOutcomes: 1,
        });
        expect((await storedMessages(log)).map((payload) => payload.messageId)).toEqual([batch[5].messageId]);
      });

      it('refuses an invalid request', async () => {
        const log = await openFresh();
        await expect(
          log.eraseMessages({ workspaceId: 'a.b', field: 'userId', subjectIds: ['u1'] }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.eraseMessages({ workspaceId: 'ws1', field: 'email' as 'userId', subjectIds: ['u1'] }),
        ).rejects.toThrow(TypeError);
      });
    });
  });
}
