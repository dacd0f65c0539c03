// What tests and the bench need of the event log, kept out of the production barrel: a nats-server
// launcher and a kit that starts one per spec file, and the publisher the JetStream adapter uses, which the bench drives on its own to
// measure the publishing ceiling. The build leaves this folder out.
export { freePort, NatsServerProcess } from './nats-server.process';
export { JETSTREAM_STREAMS, withNatsServer, type NatsServerForTests } from './nats-server.kit';
export { PipelinedJetStreamPublisher } from '../adapters/jetstream/pipelined-publisher';
