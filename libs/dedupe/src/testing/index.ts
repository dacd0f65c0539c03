// What tests need of the dedupe index, kept out of the production barrel: its fault points.
export { DEDUPE_WRITE_STEPS, type DedupeWriteStep } from '../write-steps.fault';
export { CRASH_AT_STEP_VARIABLE } from '../crash-at-step.fault';
