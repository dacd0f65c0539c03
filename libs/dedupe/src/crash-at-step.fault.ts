import { DEDUPE_WRITE_STEPS, type DedupeFaultHook, type DedupeWriteStep } from './write-steps.fault';

/** The environment variable the crash tests set; never set in a deployment. */
export const CRASH_AT_STEP_VARIABLE = 'TRIBUTARY_TEST_DEDUPE_CRASH_AT';

/**
 * `TRIBUTARY_TEST_DEDUPE_CRASH_AT=<step>:<n>`: the process kills itself with SIGKILL the n-th time
 * (from 1) it reaches that step of the dedupe write path, as a power cut or OOM kill would. Absent:
 * no hook at all, so the write path pays nothing for it.
 */
export function crashAtStepFromEnvironment(
  environment: Record<string, string | undefined>,
): DedupeFaultHook | undefined {
  const setting = environment[CRASH_AT_STEP_VARIABLE]?.trim();
  if (!setting) return undefined;
  const [step, countText = '1'] = setting.split(':');
  const count = Number(countText);
  if (!(DEDUPE_WRITE_STEPS as readonly string[]).includes(step) || !Number.isInteger(count) || count < 1) {
    throw new Error(
      `${CRASH_AT_STEP_VARIABLE}: "${setting}" is not <step>:<n> with a step of ${DEDUPE_WRITE_STEPS.join(', ')}`,
    );
  }
  let reached = 0;
  return (current: DedupeWriteStep) => {
    if (current !== step) return;
    reached += 1;
    if (reached === count) process.kill(process.pid, 'SIGKILL');
  };
}
