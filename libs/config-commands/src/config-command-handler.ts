import { Aggregate, DomainError, DomainEvent, fold } from '@tributary/config-domain';
import {
  EventMetadata,
  EventStore,
  EventStoreUnavailableError,
  RecordedEvent,
  WrongExpectedRevisionError,
} from '@tributary/event-store';
import { ConflictRetry, conflictRetryDelayMs, RUN_ONCE } from './conflict-retry';
import { ProjectionWaiter } from './projection-waiter.port';

export interface HandleOptions {
  /** What to do when the append loses a race: run once (the default) or decide again. */
  retry?: ConflictRetry;
}

/**
 * A command, or how to make it from the aggregate's state. A function is called on every attempt,
 * after the projections hold every event of the stream just read: a command built from the read
 * model (facts that live in other streams) then never rests on a view older than the stream.
 */
export type CommandInput<State, Command> = Command | ((state: State) => Command);

export interface HandledCommand<State, Event> {
  /** The aggregate's state after the new events. */
  state: State;
  /** What was appended; `[]` when the decision changed nothing (nothing was written). */
  events: Event[];
}

/**
 * Runs one command against one aggregate instance: read its stream, fold, decide, append with the
 * revision the decision was based on, then wait until the projections hold the new events so the
 * caller's next read sees its write (invariant 4). A concurrent writer makes the append fail rather
 * than overwrite; with a retry policy the whole read-decide-append runs again on the winner's state,
 * without one the `WrongExpectedRevisionError` goes to the caller (409, code 10). A refusal of the
 * decider (`DomainError`) is never retried: deciding again on the same state refuses again.
 * Nothing is ever half-written: an append is all-or-nothing.
 */
export class ConfigCommandHandler {
  constructor(
    private readonly store: EventStore,
    private readonly projections: ProjectionWaiter,
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  async handle<Id, State, Command, Event extends DomainEvent>(
    aggregate: Aggregate<Id, State, Command, Event>,
    id: Id,
    command: CommandInput<State, Command>,
    metadata: EventMetadata,
    options: HandleOptions = {},
  ): Promise<HandledCommand<State, Event>> {
    const retry = options.retry ?? RUN_ONCE;
    const streamName = aggregate.streamName(id);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.attempt(streamName, aggregate, command, metadata);
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= retry.attempts) throw error;
        await this.sleep(conflictRetryDelayMs(retry, attempt, Math.random()));
      }
    }
  }

  /**
   * Resolves once the projections hold every event the instance's stream has in the store now.
   * Another process may have written to it a moment ago (a router replica that just finished a
   * job): a fresh view before acting on what the stream says.
   */
  async catchUp<Id>(
    aggregate: Pick<Aggregate<Id, unknown, unknown, DomainEvent>, 'streamName'>,
    id: Id,
  ): Promise<void> {
    const history = await this.unavailableOnFailure(() => this.store.readStream(aggregate.streamName(id)));
    if (history.length > 0) await this.projections.waitFor(history[history.length - 1].position);
  }

  private async attempt<Id, State, Command, Event extends DomainEvent>(
    streamName: string,
    { decider }: Aggregate<Id, State, Command, Event>,
    input: CommandInput<State, Command>,
    metadata: EventMetadata,
  ): Promise<HandledCommand<State, Event>> {
    const history = await this.unavailableOnFailure(() => this.store.readStream(streamName));
    const current = fold(decider, history.map(asDomainEvent) as Event[]);
    let command: Command;
    if (typeof input === 'function') {
      if (history.length > 0) await this.projections.waitFor(history[history.length - 1].position);
      command = (input as (state: State) => Command)(current);
    } else {
      command = input;
    }
    const events = decider.decide(current, command);
    const state = events.reduce((folded, event) => decider.evolve(folded, event), current);
    if (events.length === 0) return { state, events };
    const expectedRevision = history.length === 0 ? 'no_stream' : history[history.length - 1].revision;
    const result = await this.unavailableOnFailure(() =>
      this.store.append(
        streamName,
        events.map((event) => ({ type: event.type, data: event.data, metadata })),
        expectedRevision,
      ),
    );
    await this.projections.waitFor(result.position);
    return { state, events };
  }

  private async unavailableOnFailure<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError || error instanceof DomainError) throw error;
      throw new EventStoreUnavailableError(error);
    }
  }
}

function asDomainEvent(recorded: RecordedEvent): DomainEvent {
  return { type: recorded.type, data: recorded.data };
}
