import { Decider, DomainError, DomainErrorKind, DomainEvent, fold } from '../shared/decider';

/**
 * given / when / then for pure deciders (docs/architecture.md), with no framework beyond jest's `expect`.
 *
 *   given(sourceDecider, [sourceCreated]).when({ type: 'DeleteSource' }).then([sourceDeleted]);
 *   given(sourceDecider).when(deleteSource).thenThrows('not_found', 'source not found');
 *
 * Events are stored as JSON, so the history is replayed the way the store hands it back (through a
 * JSON round trip), and `then` checks that the new events mean the same after that round trip as
 * before it: a decision that only holds in memory (an `undefined` value, a shared object) would
 * change meaning on the next replay.
 */
export function given<State, Command, Event extends DomainEvent>(
  decider: Decider<State, Command, Event>,
  history: readonly Event[] = [],
) {
  const stateBefore = () => fold(decider, throughStorage(history));

  return {
    when(command: Command) {
      return {
        /** Asserts the decided events; returns them and the state after them, for further checks. */
        then(expectedEvents: Event[]): { events: Event[]; state: State } {
          const events = decider.decide(stateBefore(), command);
          expect(events).toEqual(expectedEvents);
          const stateInMemory = fold(decider, [...history, ...events]);
          const stateReplayed = fold(decider, throughStorage([...history, ...events]));
          expect(stateReplayed).toEqual(stateInMemory);
          return { events, state: stateReplayed };
        },

        /** Asserts the command is refused with a DomainError of `kind` whose message contains `messagePart`. */
        thenThrows(kind: DomainErrorKind, messagePart: string): DomainError {
          let refusal: unknown;
          try {
            const events = decider.decide(stateBefore(), command);
            refusal = new Error(`expected a ${kind} refusal, got events ${JSON.stringify(events)}`);
          } catch (error) {
            refusal = error;
          }
          // Rethrown as is, so an unexpected success or a non-domain error shows its own message.
          if (!(refusal instanceof DomainError)) throw refusal;
          expect({ kind: (refusal as DomainError).kind, message: (refusal as DomainError).message }).toEqual({
            kind,
            message: expect.stringContaining(messagePart),
          });
          return refusal as DomainError;
        },
      };
    },
  };
}

/** The state after a history, as a reader that loads the stream would see it. */
export function stateAfter<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  history: readonly Event[],
): State {
  return fold(decider, throughStorage(history));
}

function throughStorage<Event>(events: readonly Event[]): Event[] {
  return JSON.parse(JSON.stringify(events));
}
