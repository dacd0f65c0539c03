/**
 * Runs merged into one: a level that holds this many runs (not already being merged) is merged into
 * one run of the next level, so each id is rewritten once per level it climbs.
 */
export const MERGE_FANOUT = 8;

/**
 * Runs of this level are not merged further. With MERGE_FANOUT 8 a top run holds 512 group commits
 * (16M ids when they are full), so an id is written at most four times, no merge copies more than
 * 16M rows (minutes of background work and as many rows of disk held twice), and an hour of 144M ids
 * keeps about 7 runs per lower level plus 9 top runs: about 30 runs, plus the inputs of merges under
 * way.
 */
export const TOP_LEVEL = 3;

/** What the planner needs to know of a run. */
export interface PlannedRun {
  number: number;
  level: number;
  /** Already the input of a merge under way. */
  merging: boolean;
}

export interface PlannedMerge {
  /** The output's level. */
  level: number;
  /** Run numbers, oldest first. */
  inputs: number[];
}

/**
 * The next merge of one bucket's runs (oldest first), size-tiered: the oldest MERGE_FANOUT runs of the
 * lowest level that holds that many runs not being merged yet. Lowest first, because merging small
 * runs is what brings the run count down fastest. Each level plans its merges on its own, so a long
 * merge of big runs under way does not hold back those of the small runs that keep arriving.
 */
export function planMerge(runs: readonly PlannedRun[]): PlannedMerge | undefined {
  const idleByLevel = new Map<number, number[]>();
  for (const run of runs) {
    if (run.merging) continue;
    const idle = idleByLevel.get(run.level) ?? [];
    idle.push(run.number);
    idleByLevel.set(run.level, idle);
  }
  const levels = [...idleByLevel.keys()].sort((left, right) => left - right);
  for (const level of levels) {
    if (level >= TOP_LEVEL) break;
    const idle = idleByLevel.get(level)!;
    if (idle.length >= MERGE_FANOUT) return { level: level + 1, inputs: idle.slice(0, MERGE_FANOUT) };
  }
  return undefined;
}

/**
 * The level a run of `ids` ids would have reached by merging runs of `idsPerFlush`: where a table
 * written before runs existed (a whole bucket in one table) takes its place among the runs.
 */
export function levelOfSize(ids: number, idsPerFlush: number): number {
  let level = 0;
  for (let size = idsPerFlush * MERGE_FANOUT; size <= ids && level < TOP_LEVEL; size *= MERGE_FANOUT) {
    level += 1;
  }
  return level;
}
