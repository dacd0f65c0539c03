/**
 * A decider is the whole behaviour of one aggregate as plain functions over plain data:
 * `decide` turns a command into events (or refuses it), `evolve` folds one event into the state.
 */
export interface Decider<State, Command, Event extends DomainEvent> {
  initialState: State;
  decide(state: State, command: Command): Event[];
  evolve(state: State, event: Event): State;
}

export interface DomainEvent {
  type: string;
  data: Record<string, any>;
}

export function fold<State, Event extends DomainEvent>(
  decider: Pick<Decider<State, unknown, Event>, 'initialState' | 'evolve'>,
  events: readonly Event[],
): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState);
}

/** Why a command was refused; the HTTP layer maps each kind to its status and gRPC code. */
export type DomainErrorKind =
  | 'invalid_argument'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  /** Valid, but not allowed in the resource's current state (cancelling a running regulation). */
  | 'failed_precondition'
  /** A per-workspace quota is reached: deleting something (or a higher limit) helps, waiting does not. */
  | 'resource_exhausted';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const invalidArgument = (message: string) => new DomainError('invalid_argument', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const alreadyExists = (message: string) => new DomainError('already_exists', message);
export const failedPrecondition = (message: string) => new DomainError('failed_precondition', message);
export const resourceExhausted = (message: string) => new DomainError('resource_exhausted', message);
