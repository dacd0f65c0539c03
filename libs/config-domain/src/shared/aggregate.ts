import { Decider, DomainEvent } from './decider';

/**
 * One aggregate as command handling needs it: the stream that holds an instance's events, named
 * from the instance's id, travelling with the decider that folds and decides over that stream.
 * Whoever handles a command names the aggregate and the id, never a stream by hand, so an
 * aggregate's events cannot end up in another's stream.
 */
export interface Aggregate<Id, State, Command, Event extends DomainEvent> {
  streamName(id: Id): string;
  decider: Decider<State, Command, Event>;
}
