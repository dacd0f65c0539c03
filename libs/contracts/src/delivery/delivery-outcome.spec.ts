import { DELIVERY_OUTCOMES, FINAL_DELIVERY_OUTCOMES, isFinalOutcome } from './delivery-outcome';

describe('delivery outcomes', () => {
  it('are the Config API wire words, in the order the metrics list them', () => {
    expect(DELIVERY_OUTCOMES).toEqual([
      'delivered',
      'discarded',
      'retried',
      'filtered',
      'skipped',
      'dead_lettered',
    ]);
  });

  it('settle a message with every word but retried', () => {
    expect(FINAL_DELIVERY_OUTCOMES).toEqual([
      'delivered',
      'discarded',
      'filtered',
      'skipped',
      'dead_lettered',
    ]);
    expect(DELIVERY_OUTCOMES.filter(isFinalOutcome)).toEqual(FINAL_DELIVERY_OUTCOMES);
    expect(isFinalOutcome('retried')).toBe(false);
  });

  it('does not take a word it does not know, nor an inherited property, for a final outcome', () => {
    expect(isFinalOutcome('dead-letter')).toBe(false);
    expect(isFinalOutcome('toString')).toBe(false);
  });
});
