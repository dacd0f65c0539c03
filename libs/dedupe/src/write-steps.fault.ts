/**
 * The steps of the write path where a test may make the process crash: after the index lookup
 * (nothing stored), while the append is in flight (stored or not), after the log acknowledged it (not
 * yet indexed, no answer), and around the index commit of the log follower.
 */
export const DEDUPE_WRITE_STEPS = [
  'after-lookup',
  'during-append',
  'after-append',
  'before-index-commit',
  'after-index-commit',
] as const;
export type DedupeWriteStep = (typeof DEDUPE_WRITE_STEPS)[number];

/**
 * Called at each step; throwing (or killing the process) there is the crash. Tests only. With an
 * index that follows the log itself, the two index-commit steps happen on its thread and this hook is
 * not called for them (the worker reads TRIBUTARY_TEST_DEDUPE_CRASH_AT itself).
 */
export type DedupeFaultHook = (step: DedupeWriteStep) => void | Promise<void>;
