import type { AttemptResult } from '@tributary/destinations';
import type { FunctionLogEntry, FunctionLogStore } from '@tributary/event-log';
import { randomUUID } from 'node:crypto';
import type { FunctionMetrics } from './function-metrics';
import type {
  FunctionEntry,
  FunctionInvocation,
  FunctionResult,
  FunctionRunner,
  FunctionVersion,
} from './function-runner.port';

/** What the caller made of an invocation, for the metrics; timeouts and memory overruns are counted as such. */
export type DecidedFunctionOutcome = 'success' | 'filtered' | 'discarded' | 'retried';

/** The function metrics' word for a delivery outcome a function's answer led to. */
export function decidedOutcomeOf(outcome: AttemptResult['outcome'] | 'continue'): DecidedFunctionOutcome {
  switch (outcome) {
    case 'continue':
    case 'delivered':
      return 'success';
    case 'filtered':
      return 'filtered';
    case 'discard':
      return 'discarded';
    case 'retry':
      return 'retried';
  }
}

export interface InvokeFunction {
  readonly fn: FunctionVersion;
  readonly entry: FunctionEntry;
  readonly payload: FunctionInvocation['payload'];
  readonly payloadJson?: string;
  readonly settings: FunctionInvocation['settings'];
  /** The instance's resource name, for the logs (docs/functions.md §5). */
  readonly instance?: string;
  readonly messageId?: string;
}

/**
 * How a process runs a tenant's function for real (the router, the tracking API): through the
 * runner, with the invocation's log lines appended to the function log store and its outcome counted
 * in the function metrics. A log write never holds up or fails the invocation's caller: it is not
 * awaited, and a failure is only a warning (the message's delivery matters more than its logs).
 */
export class FunctionInvoker {
  constructor(
    private readonly runner: FunctionRunner,
    private readonly metrics: FunctionMetrics,
    private readonly logStore: FunctionLogStore | undefined,
    private readonly warn: (message: string) => void,
  ) {}

  async invoke(request: InvokeFunction): Promise<FunctionResult> {
    const invocationId = randomUUID();
    const result = await this.runner.invoke({
      fn: request.fn,
      entry: request.entry,
      payload: request.payload,
      ...(request.payloadJson !== undefined && { payloadJson: request.payloadJson }),
      settings: request.settings,
      context: { invocationId, instance: request.instance, messageId: request.messageId },
    });
    if (result.logs.length > 0 && this.logStore) this.keepLogs(request, invocationId, result);
    return result;
  }

  /** Counts one invocation under what its caller decided, or as a timeout or memory overrun. */
  record(fn: FunctionVersion, result: FunctionResult, decided: DecidedFunctionOutcome): void {
    const outcome =
      result.status === 'timeout'
        ? 'timeout'
        : result.status === 'memory_exceeded'
          ? 'memory_exceeded'
          : decided;
    this.metrics.record(fn.workspaceId, fn.functionId, fn.kind, outcome, result.durationMs);
  }

  private keepLogs(request: InvokeFunction, invocationId: string, result: FunctionResult): void {
    const { fn } = request;
    const entries: FunctionLogEntry[] = result.logs.map((line) => ({
      workspaceId: fn.workspaceId,
      functionId: fn.functionId,
      time: line.time,
      level: line.level,
      message: line.message,
      ...(request.instance !== undefined && { instance: request.instance }),
      ...(request.messageId !== undefined && { messageId: request.messageId }),
      version: fn.version,
      invocationId,
    }));
    this.logStore!.appendFunctionLogs(entries).catch((error: Error) =>
      this.warn(`could not keep ${entries.length} log lines of function ${fn.functionId}: ${error.message}`),
    );
  }
}
