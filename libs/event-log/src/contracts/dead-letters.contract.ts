import type { NewDeadLetter } from '../event-log.port';
import { eventLogHarness, type EventLogContractFactory } from './event-log-harness.contract';

/** What every engine's `DeadLetters` must do (see the port's documentation). */
export function describeDeadLettersContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`DeadLetters contract: ${adapterName}`, () => {
    const { openFresh } = eventLogHarness(getFactory);

    describe('dead letters', () => {
      function deadLetterOf(consumerName: string, sequence: number, messageId: string): NewDeadLetter {
        return {
          consumerName,
          reason: 'retries exhausted after 4 h',
          attempts: [
            { at: new Date('2024-05-01T10:00:00.000Z'), outcome: 'HTTP 500' },
            { at: new Date('2024-05-01T10:00:05.000Z'), outcome: 'timeout after 5000 ms' },
          ],
          message: {
            workspaceId: 'ws1',
            sourceId: 'src-a',
            messageId,
            sequence,
            publishedAt: new Date('2024-05-01T09:59:59.123Z'),
            payload: { type: 'track', event: 'Signed Up', messageId },
          },
        };
      }

      it('stores dead letters with reason and attempts, lists them by consumer and pages through them', async () => {
        const log = await openFresh();
        const first = await log.deadLetter(deadLetterOf('destination-a', 11, 'm-11'));
        const second = await log.deadLetter(deadLetterOf('destination-b', 12, 'm-12'));
        const third = await log.deadLetter(deadLetterOf('destination-a', 13, 'm-13'));
        expect([first.duplicate, second.duplicate, third.duplicate]).toEqual([false, false, false]);
        expect(second.deadLetterSequence).toBeGreaterThan(first.deadLetterSequence);
        expect(third.deadLetterSequence).toBeGreaterThan(second.deadLetterSequence);

        const all = await log.listDeadLetters();
        expect(all.map((letter) => letter.message.messageId)).toEqual(['m-11', 'm-12', 'm-13']);
        const { deadLetterSequence, deadLetteredAt, ...stored } = all[0];
        expect(stored).toEqual(deadLetterOf('destination-a', 11, 'm-11'));
        expect(deadLetterSequence).toBe(first.deadLetterSequence);
        expect(Math.abs(deadLetteredAt.getTime() - Date.now())).toBeLessThan(10_000);

        const ofA = await log.listDeadLetters({ consumerName: 'destination-a' });
        expect(ofA.map((letter) => letter.message.messageId)).toEqual(['m-11', 'm-13']);
        const page = await log.listDeadLetters({ afterSequence: first.deadLetterSequence, limit: 1 });
        expect(page.map((letter) => letter.message.messageId)).toEqual(['m-12']);
        const pastTheEnd = await log.listDeadLetters({ afterSequence: third.deadLetterSequence });
        expect(pastTheEnd).toEqual([]);

        // A page reads a letter back whole, as it was listed.
        expect(await log.listDeadLetters({ afterSequence: second.deadLetterSequence, limit: 1 })).toEqual([
          all[2],
        ]);
      });

      it('stores a message dead-lettered twice by the same consumer once', async () => {
        const log = await openFresh();
        const first = await log.deadLetter(deadLetterOf('destination-a', 21, 'm-21'));
        const again = await log.deadLetter(deadLetterOf('destination-a', 21, 'm-21'));
        const otherConsumer = await log.deadLetter(deadLetterOf('destination-b', 21, 'm-21'));
        expect(again).toEqual({ deadLetterSequence: first.deadLetterSequence, duplicate: true });
        expect(otherConsumer.duplicate).toBe(false);
        expect(await log.listDeadLetters()).toHaveLength(2);
      });
    });
  });
}
