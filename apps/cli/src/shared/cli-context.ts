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
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * The exit codes every command keeps (docs/cli.md), so a script can tell "fix the command line" from
 * "the server said no" from "try again later".
 */
export const EXIT = {
  ok: 0,
  /** The command line or a local file is wrong: an unknown option, a missing token, an unreadable file. */
  usage: 1,
  /** The server answered, and refused: any non-2xx answer, a replay that failed. */
  refused: 2,
  /** The import finished, but some lines were not imported (bad JSON, rejected, a batch refused). */
  incomplete: 2,
  /** No answer from the server: connection refused, a name that does not resolve, a timeout. */
  unreachable: 3,
  interrupted: 130,
} as const;
