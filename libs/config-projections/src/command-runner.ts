import { Inject, Injectable } from '@nestjs/common';
import { Decider, DomainError, DomainEvent, fold } from '@tributary/config-domain';
import {
  EVENT_STORE,
  EventMetadata,
  EventStore,
  RecordedEvent,
  WrongExpectedRevisionError,
} from '@tributary/event-store';
import { ConfigReadModel } from './config-read-model';

/** The event store could not be read or written; nothing of the command was stored. */
export class EventStoreUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the event store is unavailable: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'EventStoreUnavailableError';
  }
}

/**
 * Runs one command against one aggregate: read its stream, fold, decide, append with the revision
 * the decision was based on, then wait until the read model holds the new events so the caller's
 * next read sees its write. A concurrent writer makes the append fail (409, code 10) rather than
 * overwrite; nothing is half-written because an append is all-or-nothing. Used by the Config API
 * for operators' commands and by the router for what it records (finished replays, redrives).
 */
@Injectable()
export class CommandRunner {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly readModel: ConfigReadModel,
  ) {}

  async execute<State, Command, Event extends DomainEvent>(
    streamName: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    metadata: EventMetadata,
  ): Promise<{ state: State; events: Event[] }> {
    const history = await this.unavailableOnFailure(() => this.store.readStream(streamName));
    const current = fold(decider, history.map(asDomainEvent) as Event[]);
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
    await this.readModel.waitFor(result.position);
    return { state, events };
  }

  /**
   * Resolves once the read model holds every event the stream has in the store now. Another process
   * may have written to it a moment ago (a router replica that just finished a job): a fresh view
   * before acting on what the stream says.
   */
  async catchUp(streamName: string): Promise<void> {
    const history = await this.unavailableOnFailure(() => this.store.readStream(streamName));
    if (history.length > 0) await this.readModel.waitFor(history[history.length - 1].position);
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
