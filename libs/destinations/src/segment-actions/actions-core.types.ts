/**
 * The parts of `@segment/actions-core` and `@segment/destination-subscriptions` the adapter uses, typed
 * here: the packages' own declarations pull in DOM fetch types that clash with Node's.
 */
export interface ActionsRequestContext {
  readonly settings?: unknown;
  readonly payload?: unknown;
}

export interface ActionsDefinition {
  readonly name: string;
  readonly extendRequest?: (context: ActionsRequestContext) => Record<string, unknown>;
  readonly [key: string]: unknown;
}

/** One entry of `executeBatch`'s per-event result. */
export interface ActionsMultiStatusEntry {
  readonly status: number;
  readonly errormessage?: string;
  readonly errortype?: string;
  readonly body?: unknown;
}

export interface ActionBundle {
  readonly mapping: Record<string, unknown>;
  readonly settings: Record<string, unknown>;
  readonly auth: Record<string, unknown>;
  readonly signal?: AbortSignal;
}

export interface RunnableActionsDestination {
  readonly actions: Record<string, { removeAllListeners(event: string): unknown }>;
  validateSettings(settings: Record<string, unknown>): void;
  executeAction(action: string, bundle: ActionBundle & { event: unknown }): Promise<unknown>;
  executeBatch(
    action: string,
    bundle: ActionBundle & { events: unknown[] },
  ): Promise<ActionsMultiStatusEntry[]>;
  testAuthentication(settings: Record<string, unknown>): Promise<unknown>;
  /** Present only when the destination's definition has `onDelete`. */
  onDelete?(event: Record<string, unknown>, settings: Record<string, unknown>): Promise<unknown>;
}

export interface ActionsRuntime {
  readonly Destination: new (definition: ActionsDefinition) => RunnableActionsDestination;
}

export interface ParsedFql {
  readonly error?: Error;
}

export interface DestinationSubscriptions {
  parseFql(fql: string): ParsedFql;
  validate(parsed: ParsedFql, event: unknown): boolean;
}
