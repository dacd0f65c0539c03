import fc from 'fast-check';
import { IndexedSequences } from './indexed-sequences';

describe('IndexedSequences', () => {
  it('moves the contiguous mark only over sequences it was told of', () => {
    const indexed = new IndexedSequences(10);
    indexed.addAll([13, 14, 15]);
    expect(indexed.contiguous).toBe(10);
    expect(indexed.highest).toBe(15);
    indexed.addAll([11]);
    expect(indexed.contiguous).toBe(11);
    indexed.addAll([12]);
    expect(indexed.contiguous).toBe(15);
  });

  it('takes the follower reading past ranges added before', () => {
    const indexed = new IndexedSequences(0);
    indexed.add(5, 8);
    indexed.add(20, 21);
    indexed.coverUpTo(6);
    expect(indexed.contiguous).toBe(8);
    indexed.coverUpTo(19);
    expect(indexed.contiguous).toBe(21);
    indexed.coverUpTo(3);
    expect(indexed.contiguous).toBe(21);
  });

  it('agrees with a set of sequences whatever the order of what it is told', () => {
    const event = fc.oneof(
      fc.record({ kind: fc.constant('cover' as const), sequence: fc.integer({ min: 0, max: 200 }) }),
      fc.record({
        kind: fc.constant('add' as const),
        sequences: fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 12 }),
      }),
      fc.record({
        kind: fc.constant('run' as const),
        from: fc.integer({ min: 1, max: 200 }),
        length: fc.integer({ min: 1, max: 30 }),
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 50 }), fc.array(event, { maxLength: 40 }), (start, events) => {
        const indexed = new IndexedSequences(start);
        const model = new Set<number>();
        for (let sequence = 1; sequence <= start; sequence += 1) model.add(sequence);
        for (const step of events) {
          if (step.kind === 'cover') {
            indexed.coverUpTo(step.sequence);
            for (let sequence = 1; sequence <= step.sequence; sequence += 1) model.add(sequence);
          } else if (step.kind === 'add') {
            indexed.addAll(step.sequences);
            for (const sequence of step.sequences) model.add(sequence);
          } else {
            indexed.add(step.from, step.from + step.length - 1);
            for (let sequence = step.from; sequence < step.from + step.length; sequence += 1)
              model.add(sequence);
          }
          let contiguous = 0;
          while (model.has(contiguous + 1)) contiguous += 1;
          expect(indexed.contiguous).toBe(contiguous);
          expect(indexed.highest).toBe(Math.max(contiguous, ...model));
        }
      }),
      { numRuns: 500 },
    );
  });
});
