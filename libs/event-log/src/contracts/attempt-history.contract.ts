import { UNSETTLED_ATTEMPT_OUTCOME } from '../event-log.port';
import { eventLogHarness, type EventLogContractFactory } from './event-log-harness.contract';

/** What every engine's `AttemptHistory` must do (see the port's documentation). */
export function describeAttemptHistoryContract(
  adapterName: string,
  getFactory: () => EventLogContractFactory,
): void {
  describe(`AttemptHistory contract: ${adapterName}`, () => {
    const { newStore, open, openFresh, record } = eventLogHarness(getFactory);

    describe('failed attempts', () => {
      const at = (iso: string) => new Date(iso);

      it('remembers nothing until an attempt fails', async () => {
        const log = await openFresh();
        expect(await log.readFailedAttempts('destination-a', 7)).toBeNull();
        await log.forgetFailedAttempts('destination-a', 7);
        expect(await log.readFailedAttempts('destination-a', 7)).toBeNull();
      });

      it('appends each failed attempt and answers the whole history, first failure first', async () => {
        const log = await openFresh();
        const first = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        expect(first).toEqual({
          firstFailedAt: at('2026-03-10T08:00:00.000Z'),
          attempts: [{ at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' }],
        });
        const second = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:02.000Z'),
          outcome: 'timeout after 5000 ms',
        });
        expect(second.firstFailedAt).toEqual(at('2026-03-10T08:00:00.000Z'));
        expect(second.attempts.map((attempt) => attempt.outcome)).toEqual([
          'HTTP 500',
          'timeout after 5000 ms',
        ]);
        expect(await log.readFailedAttempts('destination-a', 7)).toEqual(second);
      });

      it('keeps histories apart by consumer and message, and forgets one when asked', async () => {
        const log = await openFresh();
        const attempt = { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 503' };
        await log.recordFailedAttempt('destination-a', 1, attempt);
        await log.recordFailedAttempt('destination-a', 2, attempt);
        await log.recordFailedAttempt('destination-b', 1, attempt);
        await log.forgetFailedAttempts('destination-a', 1);
        expect(await log.readFailedAttempts('destination-a', 1)).toBeNull();
        expect((await log.readFailedAttempts('destination-a', 2))?.attempts).toHaveLength(1);
        expect((await log.readFailedAttempts('destination-b', 1))?.attempts).toHaveLength(1);
        // A history started again after being forgotten starts a new window.
        const again = await log.recordFailedAttempt('destination-a', 1, {
          at: at('2026-03-10T09:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        expect(again.firstFailedAt).toEqual(at('2026-03-10T09:00:00.000Z'));
      });

      it('survives a reopen (another process continues the history)', async () => {
        const store = await newStore();
        const log = await open(store);
        // Recent times: a history older than the retention may be dropped with its message.
        const firstFailure = new Date(Date.now() - 1_000);
        await log.recordFailedAttempt('destination-a', 3, { at: firstFailure, outcome: 'HTTP 500' });
        await log.close();
        const reopened = await open(store);
        const history = await reopened.recordFailedAttempt('destination-a', 3, {
          at: new Date(),
          outcome: 'HTTP 502',
        });
        expect(history.attempts.map((attempt) => attempt.outcome)).toEqual(['HTTP 500', 'HTTP 502']);
        expect(history.firstFailedAt).toEqual(firstFailure);
      });

      it('loses no attempt when two writers record at once', async () => {
        const store = await newStore();
        const one = await open(store);
        const other = await open(store);
        await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            (index % 2 === 0 ? one : other).recordFailedAttempt('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 0, index)),
              outcome: `attempt ${index}`,
            }),
          ),
        );
        const history = await one.readFailedAttempts('destination-a', 9);
        expect(history?.attempts.map((attempt) => attempt.outcome).sort()).toEqual(
          Array.from({ length: 6 }, (_, index) => `attempt ${index}`),
        );
      });

      it('records a started attempt as unsettled until a failure of the same delivery settles it', async () => {
        const log = await openFresh();
        const started = await log.recordAttemptStarted('destination-a', 7, {
          at: at('2026-03-10T08:00:00.000Z'),
          deliveryCount: 2,
        });
        expect(started).toEqual({
          firstFailedAt: at('2026-03-10T08:00:00.000Z'),
          attempts: [
            {
              at: at('2026-03-10T08:00:00.000Z'),
              outcome: UNSETTLED_ATTEMPT_OUTCOME,
              deliveryCount: 2,
              unsettled: true,
            },
          ],
        });
        // A failure of another delivery (one that recorded no start) is appended beside it.
        await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:01.000Z'),
          outcome: 'HTTP 503',
          deliveryCount: 1,
        });
        const settled = await log.recordFailedAttempt('destination-a', 7, {
          at: at('2026-03-10T08:00:05.000Z'),
          outcome: 'timeout after 5000 ms',
          deliveryCount: 2,
        });
        expect(settled.attempts).toEqual([
          { at: at('2026-03-10T08:00:05.000Z'), outcome: 'timeout after 5000 ms', deliveryCount: 2 },
          { at: at('2026-03-10T08:00:01.000Z'), outcome: 'HTTP 503', deliveryCount: 1 },
        ]);
        expect(await log.readFailedAttempts('destination-a', 7)).toEqual(settled);
      });

      it("records a delivery's failure once however often it is written (a write repeated after its answer was lost)", async () => {
        const log = await openFresh();
        await log.recordAttemptStarted('destination-a', 9, {
          at: at('2026-03-10T08:00:00.000Z'),
          deliveryCount: 3,
        });
        const failure = { at: at('2026-03-10T08:00:01.000Z'), outcome: 'HTTP 502', deliveryCount: 3 };
        const first = await log.recordFailedAttempt('destination-a', 9, failure);
        const again = await log.recordFailedAttempt('destination-a', 9, {
          ...failure,
          at: at('2026-03-10T08:00:03.000Z'),
        });
        expect(again).toEqual(first);
        expect(again.attempts).toEqual([
          { at: at('2026-03-10T08:00:01.000Z'), outcome: 'HTTP 502', deliveryCount: 3 },
        ]);
        // The next delivery's failure is its own.
        const next = await log.recordFailedAttempt('destination-a', 9, { ...failure, deliveryCount: 4 });
        expect(next.attempts.map((attempt) => attempt.deliveryCount)).toEqual([3, 4]);
        expect(await log.readFailedAttempts('destination-a', 9)).toEqual(next);
      });

      it('keeps the attempts of deliveries that never settled, each once, across a reopen', async () => {
        const store = await newStore();
        const log = await open(store);
        const firstStart = new Date(Date.now() - 2_000);
        await log.recordAttemptStarted('destination-a', 4, { at: firstStart, deliveryCount: 2 });
        // The same delivery starting again (a handler called twice for it) is not a second attempt.
        await log.recordAttemptStarted('destination-a', 4, { at: new Date(), deliveryCount: 2 });
        await log.close();
        // The process died there: the next delivery, in another process, finds the start unsettled.
        const reopened = await open(store);
        const history = await reopened.recordAttemptStarted('destination-a', 4, {
          at: new Date(),
          deliveryCount: 3,
        });
        expect(history.firstFailedAt).toEqual(firstStart);
        expect(history.attempts.map((attempt) => [attempt.deliveryCount, attempt.unsettled])).toEqual([
          [2, true],
          [3, true],
        ]);
        // A start of a delivery whose failure is recorded already changes nothing.
        await reopened.recordFailedAttempt('destination-a', 5, {
          at: new Date(),
          outcome: 'HTTP 500',
          deliveryCount: 2,
        });
        const after = await reopened.recordAttemptStarted('destination-a', 5, {
          at: new Date(),
          deliveryCount: 2,
        });
        expect(after.attempts.map((attempt) => attempt.outcome)).toEqual(['HTTP 500']);
        await reopened.forgetFailedAttempts('destination-a', 4);
        expect(await reopened.readFailedAttempts('destination-a', 4)).toBeNull();
      });

      it('loses no start when replicas record starts and failures of one message at once', async () => {
        const store = await newStore();
        const one = await open(store);
        const other = await open(store);
        await Promise.all(
          Array.from({ length: 6 }, (_, index) =>
            (index % 2 === 0 ? one : other).recordAttemptStarted('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 0, index)),
              deliveryCount: index + 2,
            }),
          ),
        );
        await Promise.all(
          [2, 3, 4].map((deliveryCount) =>
            (deliveryCount % 2 === 0 ? one : other).recordFailedAttempt('destination-a', 9, {
              at: new Date(Date.UTC(2026, 2, 10, 8, 1, deliveryCount)),
              outcome: `failure ${deliveryCount}`,
              deliveryCount,
            }),
          ),
        );
        const history = await one.readFailedAttempts('destination-a', 9);
        const byDelivery = [...(history?.attempts ?? [])].sort(
          (a, b) => (a.deliveryCount ?? 0) - (b.deliveryCount ?? 0),
        );
        expect(byDelivery.map((attempt) => [attempt.deliveryCount, attempt.unsettled ?? false])).toEqual([
          [2, false],
          [3, false],
          [4, false],
          [5, true],
          [6, true],
          [7, true],
        ]);
      });

      it('drops every history of a consumer when the consumer is deleted', async () => {
        const log = await openFresh();
        const consumer = await record(log, 'doomed', {}, () => undefined);
        await consumer.subscription.stop();
        await log.recordFailedAttempt('doomed', 1, {
          at: at('2026-03-10T08:00:00.000Z'),
          outcome: 'HTTP 500',
        });
        await log.recordFailedAttempt('kept', 1, { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' });
        await log.deleteConsumer('doomed');
        expect(await log.readFailedAttempts('doomed', 1)).toBeNull();
        expect(await log.readFailedAttempts('kept', 1)).not.toBeNull();
      });

      it('refuses invalid keys and attempts', async () => {
        const log = await openFresh();
        const attempt = { at: at('2026-03-10T08:00:00.000Z'), outcome: 'HTTP 500' };
        await expect(log.recordFailedAttempt('a.b', 1, attempt)).rejects.toThrow(TypeError);
        await expect(log.recordFailedAttempt('ok', 0, attempt)).rejects.toThrow(RangeError);
        await expect(
          log.recordFailedAttempt('ok', 1, { at: new Date('x'), outcome: 'HTTP 500' }),
        ).rejects.toThrow(TypeError);
        await expect(log.recordFailedAttempt('ok', 1, { ...attempt, deliveryCount: 0 })).rejects.toThrow(
          RangeError,
        );
        await expect(log.readFailedAttempts('ok', 1.5)).rejects.toThrow(RangeError);
        await expect(
          log.recordAttemptStarted('a.b', 1, { at: attempt.at, deliveryCount: 2 }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.recordAttemptStarted('ok', 1, { at: new Date('x'), deliveryCount: 2 }),
        ).rejects.toThrow(TypeError);
        await expect(
          log.recordAttemptStarted('ok', 1, { at: attempt.at, deliveryCount: 1.5 }),
        ).rejects.toThrow(RangeError);
        expect(await log.readFailedAttempts('ok', 1)).toBeNull();
      });
    });
  });
}
