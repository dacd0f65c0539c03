/**
 * What a command needs from the world, passed in rather than taken from `process` so that tests can
 * run the CLI in-process with their own environment, output buffers and interrupt signal.
 */
export interface CliContext {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Record<string, string | undefined>;
  /** Aborted on SIGINT/SIGTERM: the import stops after the batch in flight and keeps its resume point. */
  interrupt?: AbortSignal;
  /** Set by a command that finished but wants a non-zero exit code (an import with lines left out). */
  exitCode?: number;
}

export interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A failure that the CLI reports as one line on stderr with its exit code, without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export const EXIT = {
  ok: 0,
  failure: 1,
  /** The import finished, but some lines were not imported (bad JSON, rejected, a batch refused). */
  incomplete: 2,
  usage: 64,
  interrupted: 130,
} as const;
