/**
 * `createFunctionRunner`: the `FunctionRunner` of a process (specs/functions.md §5-§8). Functions run
 * in a lane of forked processes (`FUNCTION_WORKERS`), apart from the caller's event loop and address
 * space, each holding the isolates of the versions it ran (`adapters/isolated-vm/`). The lane's
 * watchdog ends a process that stops answering (a native fault, a hung event loop); time and memory
 * limits of single invocations are kept inside the process, without ending it.
 */
import { extname, join } from 'node:path';
import { systemHostResolver, type HostResolver } from '@tributary/destinations';
import { ChildProcessLane } from '@tributary/lanes';
import {
  RESOLVE_HOST_SERVICE,
  type FunctionsLaneProgramData,
} from './adapters/isolated-vm/functions-lane.program';
import { decodeResult, encodeInvocations, type EncodedResult } from './function-lane.codec';
import type {
  CodeCheck,
  FunctionInvocation,
  FunctionKind,
  FunctionResult,
  FunctionRunner,
} from './function-runner.port';

export const FUNCTION_TIMEOUT_MS = 5_000;
export const FUNCTION_MEMORY_MB = 128;
export const FUNCTION_MAX_CODE_BYTES = 128 * 1024;
export const FUNCTION_WORKERS = 1;
/** Isolates (function versions) a process keeps at once. */
export const FUNCTION_MAX_ISOLATES = 200;
/**
 * Most invocations of one function version sent to the lane in one call: more than a destination's
 * consumer holds (`ROUTER_MAX_IN_FLIGHT`, 64 by default), so whatever gathered while the version's
 * previous call ran goes in the next, not part of it in one more round trip. A lane call costs the
 * caller CPU per call (serialising, the socket, the answer: about 60 µs) beside 5-8 µs per invocation
 * (a pass-through function, calls of 8, 22 and 64 invocations, measured alone, 2026-11-28).
 */
export const FUNCTION_MAX_BATCH = 128;

export interface FunctionRunnerOptions {
  /** `FUNCTION_TIMEOUT`: wall time per invocation, awaited `fetch` included. */
  readonly timeoutMs?: number;
  /** `FUNCTION_MEMORY_MB`: each isolate's heap. */
  readonly memoryMb?: number;
  /** `FUNCTION_MAX_CODE_BYTES`. */
  readonly maxCodeBytes?: number;
  /** `FUNCTION_WORKERS`: processes running functions. */
  readonly workers?: number;
  readonly maxIsolates?: number;
  /**
   * `TRIBUTARY_EGRESS` and `TRIBUTARY_EGRESS_ALLOW`. Default `public`: tenant code reaches only
   * public addresses unless the deployment says otherwise.
   */
  readonly egress?: { readonly mode?: string; readonly allow?: string };
  /** Resolves host names for the functions' `fetch` (tests inject their own). */
  readonly resolver?: HostResolver;
}

/** The port, plus one lane call for several invocations (what the router sends per batch of messages). */
export interface BatchingFunctionRunner extends FunctionRunner {
  /** `invoke` for each, in one call to the lane; answers in the same order; never rejects. */
  invokeAll(invocations: readonly FunctionInvocation[]): Promise<FunctionResult[]>;
}

export function createFunctionRunner(options: FunctionRunnerOptions = {}): BatchingFunctionRunner {
  const timeoutMs = options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
  const memoryMb = options.memoryMb ?? FUNCTION_MEMORY_MB;
  const programData: FunctionsLaneProgramData = {
    limits: {
      timeoutMs,
      memoryMb,
      maxCodeBytes: options.maxCodeBytes ?? FUNCTION_MAX_CODE_BYTES,
      maxIsolates: options.maxIsolates ?? FUNCTION_MAX_ISOLATES,
    },
    egress: { mode: options.egress?.mode ?? 'public', allow: options.egress?.allow ?? '' },
  };
  const resolver = options.resolver ?? systemHostResolver;
  // A call's invocations each have the time limit, one after another, after a load under it: the
  // watchdog is for a process that stopped answering, not for slow functions, so it grows with the call.
  const callTimeoutMs = (invocations: number) => Math.max(60_000, timeoutMs * (invocations + 2));
  const lane = new ChildProcessLane({
    name: 'functions',
    program: join(__dirname, 'adapters', 'isolated-vm', `functions-lane.program${extname(__filename)}`),
    programData,
    processes: options.workers ?? FUNCTION_WORKERS,
    // The process's own heap: isolates have theirs, outside it.
    heapMb: 256,
    // Each call has a watchdog for what it carries (`callTimeoutMs` below); this one is for the rest.
    callTimeoutMs: callTimeoutMs(1),
    execArgv: ['--no-node-snapshot'],
    services: { [RESOLVE_HOST_SERVICE]: (hostName: string) => resolver(hostName) },
  });
  const laneFailure = (detail: string): FunctionResult => ({
    status: 'unavailable',
    reason: `functions lane: ${detail}`,
    logs: [],
    logsDropped: 0,
    durationMs: 0,
  });
  const invokeAll = async (invocations: readonly FunctionInvocation[]): Promise<FunctionResult[]> => {
    if (invocations.length === 0) return [];
    const outcome = await lane.run<EncodedResult[]>('invokeAll', encodeInvocations(invocations), {
      timeoutMs: callTimeoutMs(invocations.length),
    });
    if (outcome.ok) return outcome.value.map((result, index) => decodeResult(result, invocations[index]!));
    return invocations.map(() => laneFailure(outcome.detail));
  };
  // Per function version: the lane calls under way and the invocations waiting for one to answer. A
  // process runs one invocation of a version at a time, so sending more before a call answers only
  // queues them there; gathered here instead, they go in the next call, as many as came meanwhile.
  // A call leaves once the event loop's turn is over, with every invocation the turn made (the
  // messages of one read from the log come in one turn), not with the first alone.
  const callsAtOnce = options.workers ?? FUNCTION_WORKERS;
  interface Version {
    calls: number;
    /** A send is due at the end of this turn (only ever with invocations waiting). */
    due: boolean;
    waiting: { invocation: FunctionInvocation; answer: (result: FunctionResult) => void }[];
  }
  const versions = new Map<string, Version>();
  const sendSoon = (key: string, version: Version) => {
    if (version.due || version.calls >= callsAtOnce) return;
    version.due = true;
    setImmediate(() => {
      version.due = false;
      send(key, version);
    });
  };
  const send = (key: string, version: Version) => {
    const batch = version.waiting.splice(0, FUNCTION_MAX_BATCH);
    version.calls += 1;
    void invokeAll(batch.map((entry) => entry.invocation)).then((results) => {
      version.calls -= 1;
      batch.forEach((entry, index) => entry.answer(results[index]!));
      if (version.waiting.length > 0) sendSoon(key, version);
      else if (version.calls === 0) versions.delete(key);
    });
  };
  return {
    invokeAll,
    invoke(invocation) {
      // A preview's version is run once and dropped: nothing to share a call with.
      if (invocation.fn.once) return invokeAll([invocation]).then((results) => results[0]!);
      const { workspaceId, functionId, version: number } = invocation.fn;
      const key = `${workspaceId}/${functionId}/${number}`;
      return new Promise<FunctionResult>((answer) => {
        let version = versions.get(key);
        if (!version) versions.set(key, (version = { calls: 0, due: false, waiting: [] }));
        version.waiting.push({ invocation, answer });
        sendSoon(key, version);
      });
    },
    async check(kind: FunctionKind, code: string): Promise<CodeCheck> {
      const outcome = await lane.run<CodeCheck>('check', { kind, code });
      if (outcome.ok) return outcome.value;
      return { ok: false, message: `the code could not be checked: ${outcome.detail}` };
    },
    close: () => lane.close(),
  };
}
