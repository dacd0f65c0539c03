/**
 * An execution lane: where a process runs work that tenants configure and that could otherwise take the
 * process down with it (Segment Actions destinations today; tenant functions later). A call runs a named
 * task of the lane's program with a cloned input and answers a cloned result, or why it did not:
 *
 * - `overrun`: the call passed the lane's time budget, or ran out of the heap budget while it was the
 *   only call running there; what ran it was ended and replaced.
 * - `ended`: what ran the call ended under it: the heap budget ran out while other calls ran beside it,
 *   the program crashed, or another call sharing it overran. Nothing says the call itself was at fault.
 * - `failed`: the task threw; `detail` is its message.
 * - `closed`: the lane was closed.
 *
 * `run` never rejects, so a caller turns every failure into an outcome of its own.
 */
export type LaneFailure = 'overrun' | 'ended' | 'failed' | 'closed';

export type LaneOutcome<Result> =
  | { readonly ok: true; readonly value: Result }
  | { readonly ok: false; readonly failure: LaneFailure; readonly detail: string };

/** What one call may ask for itself. */
export interface LaneCallOptions {
  /**
   * The call's watchdog instead of the lane's `callTimeoutMs`: a call that carries a variable amount
   * of work (a batch of invocations, each with its own time limit) is given a budget for what it carries.
   */
  readonly timeoutMs?: number;
}

export interface ExecutionLane {
  /** Runs `task` of the lane's program with `input` (structured-cloned both ways). */
  run<Result>(task: string, input: unknown, options?: LaneCallOptions): Promise<LaneOutcome<Result>>;
  /** Ends every worker; calls under way answer `closed`. */
  close(): Promise<void>;
}

/** DI token of the process's execution lane. */
export const EXECUTION_LANE = Symbol('ExecutionLane');

/**
 * What a program running in a lane may ask of the process that started the lane (resolving a host
 * name through the process's own resolver, for instance): named services the lane was given.
 */
export interface LaneServices {
  call<Result>(service: string, ...args: unknown[]): Promise<Result>;
}

/** The tasks of a program, by name. */
export type LaneTasks = Readonly<Record<string, (input: never) => Promise<unknown>>>;

/**
 * What a program module exports: a lane starts it once per worker with the lane's `programData`, and
 * runs calls through the tasks it answers.
 */
export type StartLaneProgram = (programData: never, services: LaneServices) => Promise<LaneTasks>;
