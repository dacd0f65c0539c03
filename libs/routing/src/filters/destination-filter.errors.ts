/**
 * Thrown when a destination filter's `if` or `actions` cannot be used. The Config API calls the compilers
 * at create and update time and answers 400 with `message`; the router never sees such a filter unless it
 * was stored before validation existed, and then treats it as failing closed (see `decideDelivery`).
 */
export class InvalidDestinationFilterError extends Error {
  constructor(
    /** Which part of the filter is wrong, to name in a 400 answer. */
    readonly field: 'if' | 'actions',
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class InvalidFilterConditionError extends InvalidDestinationFilterError {
  constructor(
    readonly condition: string,
    /** What is wrong, without the condition text. */
    readonly reason: string,
    /** Zero-based character offset in `condition` where the problem was found, when there is one. */
    readonly position?: number,
  ) {
    super(
      'if',
      `Invalid filter condition ${JSON.stringify(condition)}: ${reason}` +
        (position === undefined ? '' : ` (at character ${position + 1})`),
    );
  }
}

export class InvalidFilterActionError extends InvalidDestinationFilterError {
  constructor(
    /** Index of the action in the filter's `actions` list, when the problem is in one action. */
    readonly actionIndex: number | undefined,
    readonly reason: string,
  ) {
    super(
      'actions',
      actionIndex === undefined
        ? `Invalid filter actions: ${reason}`
        : `Invalid filter action ${actionIndex}: ${reason}`,
    );
  }
}
