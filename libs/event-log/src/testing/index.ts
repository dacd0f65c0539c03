// What tests and the bench need of the event log, kept out of the production barrel: a nats-server
// launcher and the dedupe index's fault points. The build leaves this folder out.
export { NatsServerProcess } from './nats-server.process';
export { DEDUPE_WRITE_STEPS, type DedupeWriteStep } from '../dedupe/deduplicated-event-log';
export { CRASH_AT_STEP_VARIABLE } from '../dedupe/crash-at-step.fault';
