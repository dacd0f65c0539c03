import {
  decidePoison,
  isPoisonReason,
  MAX_UNSETTLED_DELIVERIES,
  unsettledDeliveriesBefore,
} from './poison.decider';

const failed = (deliveryCount: number) => ({ deliveryCount });
const unsettled = (deliveryCount: number) => ({ deliveryCount, unsettled: true });

describe('decidePoison', () => {
  it('attempts a first delivery without looking at anything', () => {
    expect(decidePoison({ deliveryCount: 1, attempts: [] })).toEqual({
      action: 'attempt',
      unsettledDeliveries: 0,
      suspect: false,
    });
  });

  it('attempts a retry after failures that all settled, not as a suspect', () => {
    expect(decidePoison({ deliveryCount: 4, attempts: [failed(1), failed(2), failed(3)] })).toEqual({
      action: 'attempt',
      unsettledDeliveries: 0,
      suspect: false,
    });
  });

  it('charges a first delivery that recorded no failure as unsettled: it ended without an outcome', () => {
    expect(decidePoison({ deliveryCount: 2, attempts: [] })).toEqual({
      action: 'attempt',
      unsettledDeliveries: 1,
      suspect: true,
    });
  });

  it('dead-letters as poison once three deliveries never settled', () => {
    const check = decidePoison({ deliveryCount: 4, attempts: [unsettled(2), unsettled(3)] });
    expect(check).toEqual({
      action: 'dead-letter',
      unsettledDeliveries: MAX_UNSETTLED_DELIVERIES,
      reason: 'poison: 3 deliveries never settled (the process delivering it stopped or stalled each time)',
    });
    expect(check.action === 'dead-letter' && isPoisonReason(check.reason)).toBe(true);
  });

  it('counts unsettled deliveries among settled failures, from any replica, in any order', () => {
    const attempts = [failed(1), unsettled(3), failed(2), unsettled(5), failed(4)];
    expect(decidePoison({ deliveryCount: 6, attempts })).toMatchObject({
      action: 'attempt',
      unsettledDeliveries: 2,
      suspect: true,
    });
    expect(decidePoison({ deliveryCount: 7, attempts: [...attempts, unsettled(6)] })).toMatchObject({
      action: 'dead-letter',
    });
  });

  it('does not charge a redelivery that never reached the destination (no start recorded)', () => {
    // Deliveries 2 to 5 waited behind other suspects in a process that died: they never started.
    expect(unsettledDeliveriesBefore({ deliveryCount: 6, attempts: [] })).toBe(1);
  });

  it('ignores the start of the delivery being decided and of later ones (a stalled replica racing)', () => {
    expect(
      unsettledDeliveriesBefore({ deliveryCount: 3, attempts: [failed(1), unsettled(3), unsettled(4)] }),
    ).toBe(0);
  });

  it('reads a history kept before attempts carried a delivery count as settled failures', () => {
    expect(decidePoison({ deliveryCount: 9, attempts: [{}, {}, {}] })).toEqual({
      action: 'attempt',
      unsettledDeliveries: 0,
      suspect: false,
    });
  });

  it('refuses a delivery count that is not a positive integer', () => {
    expect(() => decidePoison({ deliveryCount: 0, attempts: [] })).toThrow(RangeError);
    expect(() => decidePoison({ deliveryCount: 1.5, attempts: [] })).toThrow(RangeError);
    expect(() => decidePoison({ deliveryCount: Number.NaN, attempts: [] })).toThrow(RangeError);
  });

  it('tells poison reasons from others', () => {
    expect(isPoisonReason('retries exhausted after 3 attempts: HTTP 500')).toBe(false);
    expect(isPoisonReason('poisonous: not ours')).toBe(false);
  });
});
