// What tests and the bench need of the event log, kept out of the production barrel: a nats-server
// launcher. The build leaves this folder out.
export { NatsServerProcess } from './nats-server.process';
