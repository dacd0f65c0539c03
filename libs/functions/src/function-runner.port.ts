/**
 * The function runner port: how the tracking API (source functions), the router (destination and
 * insert functions) and the Config API (preview) run a tenant's function once (docs/functions.md,
 * specs: functions.md §5-§8). The runner owns the sandbox: one isolate per function version, in a
 * lane apart from the caller's event loop, with the time, memory and output limits of §6.
 *
 * Contract every adapter keeps:
 * - `invoke` never rejects: every failure is a `FunctionResult`, so a function cannot crash its caller.
 * - Arguments and results cross as JSON copies, never as references to the caller's objects.
 * - An invocation that only waited on an isolate another invocation exhausted is `unavailable`
 *   (retried by the caller), never given the other's outcome.
 */

import type { FunctionKind } from '@tributary/contracts';

export type { FunctionKind };

/** The handlers a destination or insert function may declare, by message type. */
export const MESSAGE_HANDLERS = {
  identify: 'onIdentify',
  track: 'onTrack',
  page: 'onPage',
  screen: 'onScreen',
  group: 'onGroup',
  alias: 'onAlias',
  delete: 'onDelete',
} as const;

export type MessageHandler = (typeof MESSAGE_HANDLERS)[keyof typeof MESSAGE_HANDLERS];
export type FunctionEntry = 'onRequest' | 'onBatch' | MessageHandler;

/** One deployed version of a function: what the runner compiles (and caches) under its key. */
export interface FunctionVersion {
  readonly workspaceId: string;
  readonly functionId: string;
  readonly version: number;
  readonly kind: FunctionKind;
  readonly code: string;
  /**
   * Run once, then forget: the isolate is disposed once the invocation answered instead of kept
   * among the compiled versions (a preview of unsaved code, which would otherwise push deployed
   * versions out of the cache and hold its memory until evicted).
   */
  readonly once?: boolean;
}

/** A source function's request, as the tracking API received it (body up to 512 KiB). */
export interface FunctionHttpRequest {
  readonly method: string;
  /** The full URL, query string included. */
  readonly url: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface FunctionInvocation {
  readonly fn: FunctionVersion;
  readonly entry: FunctionEntry;
  /**
   * The entry's first argument: the request for `onRequest`, the message for a message handler, the
   * messages for `onBatch`. JSON values only.
   */
  readonly payload: FunctionHttpRequest | unknown;
  /**
   * The payload's JSON, where the caller holds it already (a message's stored bytes): sent to the
   * isolate as it is, instead of serializing `payload` again.
   */
  readonly payloadJson?: string;
  /** The instance's settings, `sensitive` ones decrypted; passed as a copy. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** For the logs (§7): which instance and message the invocation ran for. */
  readonly context: {
    readonly invocationId: string;
    readonly instance?: string;
    readonly messageId?: string;
  };
}

/** One `console.*` line of an invocation, or an error it threw (§7). */
export interface FunctionLogLine {
  readonly time: string;
  readonly level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  /** Formatted like Node's `util.format`, cut to 4 KiB. */
  readonly message: string;
}

/** What a source function emitted with `Segment.track(...)` and the others, each with its `type`. */
export type EmittedMessage = Readonly<Record<string, unknown>> & { readonly type: string };

export type FunctionResult = (
  | {
      readonly status: 'resolved';
      /** The JSON copy of what the entry resolved to; absent for `undefined`. */
      readonly value?: unknown;
      /**
       * `value`'s JSON was the payload's as it was sent (`payloadJson`, or the JSON made of `payload`)
       * to the character: the message came back as it went in, and `value` is the invocation's
       * `payload` itself.
       */
      readonly valueUnchanged?: boolean;
      /** Source functions: the messages emitted, in order. */
      readonly emitted?: readonly EmittedMessage[];
    }
  /** The function declares no handler for the entry. */
  | { readonly status: 'no_handler' }
  /** The entry threw or rejected: `name` is the error's class name (`RetryError`, `TypeError`, ...). */
  | { readonly status: 'threw'; readonly name: string; readonly message: string }
  /** The invocation passed its wall-time limit and was terminated. */
  | { readonly status: 'timeout'; readonly limitMs: number }
  /** The isolate ran out of its memory limit and was disposed. */
  | { readonly status: 'memory_exceeded'; readonly limitMb: number }
  /** The runner could not run it (its lane ended under it, the code no longer compiles): retry. */
  | { readonly status: 'unavailable'; readonly reason: string }
) & {
  readonly logs: readonly FunctionLogLine[];
  /** How many log lines were dropped past the per-invocation cap. */
  readonly logsDropped: number;
  readonly durationMs: number;
};

/** Why code cannot be saved (§4 create checks): a syntax error with its position, a missing entry... */
export type CodeCheck =
  | { readonly ok: true; readonly handlers: readonly FunctionEntry[] }
  | { readonly ok: false; readonly message: string };

export interface FunctionRunner {
  /** Runs one entry of one function version; never rejects. */
  invoke(invocation: FunctionInvocation): Promise<FunctionResult>;
  /** Compiles the code in a sandbox (nothing runs) and lists the entries it declares. */
  check(kind: FunctionKind, code: string): Promise<CodeCheck>;
  /** Ends the runner's lane; invocations under way answer `unavailable`. */
  close(): Promise<void>;
}

/** DI token of the process's function runner. */
export const FUNCTION_RUNNER = Symbol('FunctionRunner');
