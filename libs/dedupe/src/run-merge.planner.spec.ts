import { levelOfSize, MERGE_FANOUT, planMerge, TOP_LEVEL, type PlannedRun } from './run-merge.planner';

function runs(level: number, numbers: number[], merging = false): PlannedRun[] {
  return numbers.map((number) => ({ number, level, merging }));
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, index) => from + index);

describe('planMerge', () => {
  it('plans nothing while no level holds MERGE_FANOUT runs', () => {
    expect(planMerge([...runs(1, [1, 2]), ...runs(0, range(3, MERGE_FANOUT - 1))])).toBeUndefined();
  });

  it('merges the oldest MERGE_FANOUT runs of a full level into one run of the next level', () => {
    expect(planMerge(runs(0, range(10, MERGE_FANOUT + 2)))).toEqual({
      level: 1,
      inputs: range(10, MERGE_FANOUT),
    });
  });

  it('plans the lowest full level first', () => {
    expect(planMerge([...runs(1, range(1, MERGE_FANOUT)), ...runs(0, range(20, MERGE_FANOUT))])).toEqual({
      level: 1,
      inputs: range(20, MERGE_FANOUT),
    });
  });

  it('leaves out the runs a merge under way reads, and plans the level again once enough others arrive', () => {
    const underWay = runs(0, range(1, MERGE_FANOUT), true);
    expect(planMerge([...underWay, ...runs(0, range(20, MERGE_FANOUT - 1))])).toBeUndefined();
    expect(planMerge([...underWay, ...runs(0, range(20, MERGE_FANOUT))])).toEqual({
      level: 1,
      inputs: range(20, MERGE_FANOUT),
    });
  });

  it('never merges runs of the top level', () => {
    expect(planMerge(runs(TOP_LEVEL, range(1, MERGE_FANOUT * 2)))).toBeUndefined();
  });
});

describe('levelOfSize', () => {
  it('places a run where merging group commits of that size would have put it, up to the top level', () => {
    expect(levelOfSize(0, 100)).toBe(0);
    expect(levelOfSize(100 * MERGE_FANOUT - 1, 100)).toBe(0);
    expect(levelOfSize(100 * MERGE_FANOUT, 100)).toBe(1);
    expect(levelOfSize(100 * MERGE_FANOUT ** 2, 100)).toBe(2);
    expect(levelOfSize(100 * MERGE_FANOUT ** (TOP_LEVEL + 3), 100)).toBe(TOP_LEVEL);
  });
});
