/**
 * Function versions in isolated-vm isolates (specs/functions.md §3, §6, §8): one `Isolate` and context
 * per version (workspace, function, version), never shared, kept in a bounded LRU; the memory limit on
 * every isolate; a wall-time limit on every invocation, awaited `fetch` included. An invocation that
 * passes its time, or runs its isolate out of memory, ends the isolate; the next invocation of that
 * version builds it again (running the code's top-level statements again, under the same limits).
 *
 * Invocations of one version run one at a time (a queue per version), in batches: one call into the
 * isolate runs several invocations, each reported back as it settles, which keeps the cost per
 * invocation to a few microseconds. What ended an isolate is then known exactly: the invocation under
 * way gets the timeout or the memory outcome, those after it in the queue are `unavailable` (they only
 * waited on an isolate another exhausted), those before it keep their results.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import ivm from 'isolated-vm';
import type {
  CodeCheck,
  FunctionEntry,
  FunctionInvocation,
  FunctionKind,
  FunctionResult,
  FunctionVersion,
} from '../../function-runner.port';
import { MESSAGE_HANDLERS } from '../../function-runner.port';
import { declaredEntries, ENTRIES_OF, statementsOf } from '../../function-code';
import {
  decodeResult,
  encodeInvocations,
  type EncodedInvocation,
  type EncodedInvocations,
  type EncodedResult,
  type EncodedValue,
} from '../../function-lane.codec';
import type { SandboxFetcher, SandboxFetchRequest } from './sandbox-fetch';
import { sandboxRuntime, type SandboxRuntimeConfig } from './sandbox.runtime';

export interface SandboxLimits {
  readonly timeoutMs: number;
  readonly memoryMb: number;
  readonly maxCodeBytes: number;
  /** Isolates kept at once; past it the least recently used one is disposed. */
  readonly maxIsolates: number;
}

export const SANDBOX_LOG_LINES = 100;
export const SANDBOX_LOG_LINE_BYTES = 4 * 1024;
export const SANDBOX_MAX_FETCHES = 20;
export const SANDBOX_MAX_EMITTED = 500;

const SANDBOX_RUNTIME_SOURCE = `(${sandboxRuntime.toString()})`;
const LODASH_SOURCE = readFileSync(require.resolve('lodash/lodash.min.js'), 'utf8');
const ALL_ENTRIES: readonly FunctionEntry[] = ['onRequest', 'onBatch', ...Object.values(MESSAGE_HANDLERS)];

interface Run {
  /** What the isolate reported, as it reported it (JSON text, and its value's beside it). */
  readonly results: (EncodedResult | undefined)[];
  /** The invocation under way: the first without a result. */
  next: number;
  timer?: NodeJS.Timeout;
  /**
   * While a batch runs in one synchronous call (`runAtOnce`), when the invocation under way began:
   * no timer can fire during the call, so its limit is armed once the call returned, not per report.
   */
  atOnceSince?: number;
  ended?: 'timeout' | 'memory_exceeded';
}

/** One function version's isolate, its context and the runtime's functions in it. */
class LoadedVersion {
  readonly isolate: ivm.Isolate;
  readonly abort = new AbortController();
  runBatch!: ivm.Reference<
    (json: string, payloadsAt: number[], first?: number, atOnce?: boolean) => Promise<void>
  >;
  settled!: ivm.Reference<() => Promise<void>>;
  run: Run | undefined;
  /** The tail of the version's queue. */
  queue: Promise<unknown> = Promise.resolve();
  loadFailure: FunctionResult | undefined;
  loaded!: Promise<void>;

  constructor(memoryMb: number) {
    this.isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  }

  get ended(): boolean {
    return this.isolate.isDisposed;
  }

  private signalEnd!: (error: Error) => void;
  /** Rejects when the isolate is ended by the host (time limit, eviction, close). */
  readonly endedSignal = new Promise<never>((_, reject) => {
    this.signalEnd = reject;
  });

  end(): void {
    this.endedSignal.catch(() => undefined);
    this.signalEnd(new Error('the isolate was ended'));
    this.abort.abort();
    if (!this.isolate.isDisposed) this.isolate.dispose();
  }
}

/**
 * How long one batch may run on the lane process's own thread (`runAtOnce`) before it is stopped
 * and its version runs on isolated-vm's threads from then on. Bounds how long a function can hold up
 * the others of its process; far above what a batch of a function that reshapes its events takes.
 */
export const SANDBOX_AT_ONCE_SLICE_MS = 20;
/** Versions remembered as needing more than a slice: past it, the oldest are forgotten. */
const MAX_PATIENT_VERSIONS = 10_000;

export class IsolatedVmSandboxes {
  private readonly versions = new Map<string, LoadedVersion>();
  /** Versions that ran past `SANDBOX_AT_ONCE_SLICE_MS`: they run on isolated-vm's threads. */
  private readonly patientVersions = new Set<string>();
  private readonly counts = { built: 0, timeouts: 0, memoryExceeded: 0, slicesOverrun: 0 };

  constructor(
    private readonly limits: SandboxLimits,
    private readonly fetcher: SandboxFetcher,
  ) {}

  get stats() {
    return { isolates: this.versions.size, ...this.counts };
  }

  /** Runs invocations (any versions); answers in the same order. Never rejects. */
  async invokeAll(invocations: readonly FunctionInvocation[]): Promise<FunctionResult[]> {
    const results = await this.invokeEncoded(encodeInvocations(invocations));
    return results.map((result, index) => decodeResult(result, invocations[index]!));
  }

  /**
   * `invokeAll` as the lane carries it (`function-lane.codec.ts`): results the isolate reported stay
   * the JSON text it reported them as, for the caller to read.
   */
  async invokeEncoded(batch: EncodedInvocations): Promise<EncodedResult[]> {
    const groups = new Map<string, { fn: FunctionVersion; indexes: number[] }>();
    batch.calls.forEach((call, index) => {
      const fn = batch.versions[call.version]!;
      const key = keyOf(fn);
      const group = groups.get(key);
      if (group) group.indexes.push(index);
      else groups.set(key, { fn, indexes: [index] });
    });
    const results: EncodedResult[] = new Array(batch.calls.length);
    await Promise.all(
      [...groups.values()].map(async ({ fn, indexes }) => {
        const answered = await this.invokeVersion(
          fn,
          indexes.map((index) => batch.calls[index]!),
        );
        indexes.forEach((index, at) => (results[index] = answered[at]!));
      }),
    );
    return results;
  }

  /** Compiles `code` in a throwaway isolate (nothing of it runs) and finds its entry points. */
  check(kind: FunctionKind, code: string): CodeCheck {
    const problem = problemWithCode(code, this.limits.maxCodeBytes);
    if (problem) return { ok: false, message: problem };
    const isolate = new ivm.Isolate({ memoryLimit: Math.max(16, this.limits.memoryMb) });
    try {
      isolate.compileScriptSync(code, { filename: 'function.js' }).release();
    } catch (error) {
      return { ok: false, message: syntaxMessage(error) };
    } finally {
      isolate.dispose();
    }
    const handlers = declaredEntries(kind, code);
    if (kind === 'SOURCE' && !handlers.includes('onRequest')) {
      return {
        ok: false,
        message: 'a source function must declare `async function onRequest(request, settings)`',
      };
    }
    if (handlers.length === 0) {
      return {
        ok: false,
        message: `the function declares no handler: one of ${ENTRIES_OF[kind].join(', ')} is needed`,
      };
    }
    return { ok: true, handlers };
  }

  close(): void {
    for (const loaded of this.versions.values()) loaded.end();
    this.versions.clear();
  }

  private invokeVersion(
    fn: FunctionVersion,
    invocations: readonly EncodedInvocation[],
  ): Promise<EncodedResult[]> {
    const key = keyOf(fn);
    let loaded = this.versions.get(key);
    if (loaded && loaded.ended && !loaded.run) {
      this.versions.delete(key);
      loaded = undefined;
    }
    if (!loaded) {
      loaded = this.load(fn);
      this.versions.set(key, loaded);
      this.evictBeyondLimit();
    } else {
      // Most recently used last.
      this.versions.delete(key);
      this.versions.set(key, loaded);
    }
    const version = loaded;
    const turn = version.queue.then(() => this.runBatch(version, fn, invocations));
    version.queue = turn.catch(() => undefined);
    if (fn.once) {
      void version.queue.then(() => {
        if (this.versions.get(key) === version) this.versions.delete(key);
        version.end();
      });
    }
    return turn;
  }

  private evictBeyondLimit(): void {
    for (const [key, loaded] of this.versions) {
      if (this.versions.size <= this.limits.maxIsolates) return;
      if (loaded.run) continue;
      this.versions.delete(key);
      // Let queued invocations of it finish first: they answer unavailable if it is already gone.
      void loaded.queue.then(() => loaded.end());
    }
  }

  private load(fn: FunctionVersion): LoadedVersion {
    const loaded = new LoadedVersion(this.limits.memoryMb);
    this.counts.built += 1;
    loaded.loaded = (async () => {
      const { isolate } = loaded;
      const context = await isolate.createContext();
      const names = hostNames();
      const jail = context.global;
      await jail.set(
        names.fetch,
        new ivm.Reference((request: SandboxFetchRequest) => this.fetch(loaded, request)),
      );
      await jail.set(names.url, new ivm.Callback(urlParts));
      await jail.set(names.hash, new ivm.Callback(hashOf));
      await jail.set(names.random, new ivm.Callback((length: number) => new Uint8Array(randomBytes(length))));
      await jail.set(
        names.done,
        new ivm.Callback(
          (index: number, json: string, value?: EncodedValue) => this.reported(loaded, index, json, value),
          { ignored: true },
        ),
      );
      await jail.set(
        names.doneNow,
        new ivm.Callback((index: number, json: string, value?: EncodedValue) =>
          this.reported(loaded, index, json, value),
        ),
      );
      const config: SandboxRuntimeConfig = {
        kind: fn.kind,
        entries: ALL_ENTRIES,
        maxLogLines: SANDBOX_LOG_LINES,
        maxLogBytes: SANDBOX_LOG_LINE_BYTES,
        maxFetches: SANDBOX_MAX_FETCHES,
        maxEmitted: SANDBOX_MAX_EMITTED,
        hostNames: names,
      };
      const start = await context.eval(SANDBOX_RUNTIME_SOURCE, { reference: true });
      const api = (await start.apply(undefined, [config], {
        arguments: { copy: true },
        result: { reference: true },
      })) as ivm.Reference<Record<string, unknown>>;
      loaded.runBatch = (await api.get('runBatch', { reference: true })) as LoadedVersion['runBatch'];
      loaded.settled = (await api.get('settled', { reference: true })) as LoadedVersion['settled'];
      const lodash = await isolate.compileScript(LODASH_SOURCE, { filename: 'lodash.js' });
      await lodash.run(context, { timeout: this.limits.timeoutMs });
      lodash.release();
      let script: ivm.Script;
      try {
        script = await isolate.compileScript(fn.code, { filename: `${fn.functionId}.js` });
      } catch (error) {
        loaded.loadFailure = unavailable(`the code does not compile: ${syntaxMessage(error)}`);
        return;
      }
      const begun = Date.now();
      try {
        await script.run(context, { timeout: this.limits.timeoutMs });
      } catch (error) {
        loaded.loadFailure = this.failureOfLoad(loaded, error, Date.now() - begun);
        return;
      } finally {
        script.release();
      }
      // Handlers may be `const` declarations: visible to later code of the context, not on its global.
      const probe = `$0.setHandlers({${ALL_ENTRIES.map((entry) => `${entry}: typeof ${entry} === 'function' ? ${entry} : undefined`).join(', ')}})`;
      await context.evalClosure(probe, [api.derefInto()], { timeout: this.limits.timeoutMs });
      api.release();
    })().catch((error: unknown) => {
      loaded.loadFailure ??= this.failureOfLoad(loaded, error, 0);
    });
    return loaded;
  }

  /** Top-level code that passed the limits is the function's outcome; anything else is `unavailable`. */
  private failureOfLoad(loaded: LoadedVersion, error: unknown, elapsedMs: number): FunctionResult {
    const message = (error as Error)?.message ?? String(error);
    if (loaded.isolate.isDisposed || /memory limit/i.test(message)) {
      loaded.end();
      return { ...emptyLogs(elapsedMs), status: 'memory_exceeded', limitMb: this.limits.memoryMb };
    }
    if (/timed out/i.test(message)) {
      loaded.end();
      return { ...emptyLogs(elapsedMs), status: 'timeout', limitMs: this.limits.timeoutMs };
    }
    // The top-level statements threw: every invocation of this version would throw the same.
    loaded.end();
    return {
      ...emptyLogs(elapsedMs),
      status: 'threw',
      name: (error as Error)?.name ?? 'Error',
      message: message.replace(/ \[[^\]]*\]$/, ''),
    };
  }

  private async runBatch(
    loaded: LoadedVersion,
    fn: FunctionVersion,
    invocations: readonly EncodedInvocation[],
  ): Promise<EncodedResult[]> {
    await loaded.loaded;
    if (loaded.loadFailure) return invocations.map(() => loaded.loadFailure!);
    if (loaded.ended) {
      return invocations.map(() => unavailable('the isolate ended under another invocation of this version'));
    }
    const run: Run = { results: new Array(invocations.length), next: 0 };
    loaded.run = run;
    const begun = Date.now();
    const key = keyOf(fn);
    let failure: string | undefined;
    if (!this.patientVersions.has(key)) {
      const atOnce = await this.runAtOnce(loaded, run, invocations);
      if (atOnce.sliceOverrun !== undefined) {
        // Stopped in the middle: no host work of it was started (a `fetch` it asked for finds the
        // isolate's signal aborted), so it and those after it run again, on a new isolate.
        this.counts.slicesOverrun += 1;
        this.remember(key);
        clearTimeout(run.timer);
        loaded.run = undefined;
        loaded.end();
        const from = atOnce.sliceOverrun;
        const rest = await this.invokeVersion(fn, invocations.slice(from));
        return invocations.map((_, index) => (index < from ? run.results[index]! : rest[index - from]!));
      }
      failure = atOnce.failure;
    } else {
      this.arm(loaded, run);
      try {
        // An isolate ended while it waits on the host (a `fetch`) settles its call only when the host
        // does: the end of the isolate answers at once.
        await Promise.race([
          loaded.runBatch.apply(undefined, batchArguments(invocations), {
            arguments: { copy: true },
            result: { promise: true },
          }),
          loaded.endedSignal,
        ]);
      } catch (error) {
        failure = (error as Error)?.message ?? String(error);
      }
    }
    clearTimeout(run.timer);
    // Results the isolate reported before it ended are still on their way through the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    loaded.run = undefined;
    if (failure !== undefined && !run.ended) {
      run.ended = loaded.isolate.isDisposed || /memory limit/i.test(failure) ? 'memory_exceeded' : undefined;
      if (run.ended === 'memory_exceeded') this.counts.memoryExceeded += 1;
      loaded.end();
    }
    const elapsed = Date.now() - begun;
    return invocations.map((_, index) => {
      const reported = run.results[index];
      if (reported) return reported;
      if (index === run.next && run.ended === 'timeout') {
        return { ...emptyLogs(elapsed), status: 'timeout', limitMs: this.limits.timeoutMs };
      }
      if (index === run.next && run.ended === 'memory_exceeded') {
        return { ...emptyLogs(elapsed), status: 'memory_exceeded', limitMb: this.limits.memoryMb };
      }
      return unavailable(
        run.ended
          ? 'the isolate ended under another invocation of this version'
          : `the sandbox failed: ${failure ?? 'no result'}`,
      );
    });
  }

  /**
   * Runs a batch on this thread, in one synchronous call into the isolate, each invocation reporting
   * before the next starts: no hop to isolated-vm's threads and back, which is most of what a quick
   * function costs. An invocation still waiting on the host when the call returns (a `fetch`)
   * finishes on isolated-vm's threads with those after it, as a patient batch does. A call that runs
   * past the slice is stopped: `sliceOverrun` is the index of the invocation it stopped in.
   */
  private async runAtOnce(
    loaded: LoadedVersion,
    run: Run,
    invocations: readonly EncodedInvocation[],
  ): Promise<{ failure?: string; sliceOverrun?: number }> {
    // The wall-time limit counts from here; its timer can fire only once the call below returned.
    this.arm(loaded, run);
    run.atOnceSince = Date.now();
    try {
      loaded.runBatch.applySync(undefined, [...batchArguments(invocations), 0, true], {
        arguments: { copy: true },
        timeout: SANDBOX_AT_ONCE_SLICE_MS,
      });
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (!loaded.isolate.isDisposed && /timed out/i.test(message)) return { sliceOverrun: run.next };
      return { failure: message };
    } finally {
      const since = run.atOnceSince ?? Date.now();
      run.atOnceSince = undefined;
      // The invocation under way when the call returned has what is left of its limit.
      if (run.next > 0 && run.next < invocations.length) {
        this.arm(loaded, run, this.limits.timeoutMs - (Date.now() - since));
      }
    }
    if (run.next < invocations.length) {
      // Waiting on the host: the rest runs on isolated-vm's threads, where running out of memory
      // rejects this wait, and the time limit ends the isolate.
      try {
        await Promise.race([
          loaded.settled.apply(undefined, [], { result: { promise: true } }),
          loaded.endedSignal,
        ]);
      } catch (error) {
        return { failure: (error as Error)?.message ?? String(error) };
      }
    }
    return {};
  }

  private remember(key: string): void {
    this.patientVersions.add(key);
    if (this.patientVersions.size > MAX_PATIENT_VERSIONS) {
      this.patientVersions.delete(this.patientVersions.values().next().value!);
    }
  }

  /** The wall-time limit of the invocation under way: re-armed as each one settles. */
  private arm(loaded: LoadedVersion, run: Run, delayMs = this.limits.timeoutMs): void {
    clearTimeout(run.timer);
    run.timer = setTimeout(
      () => {
        if (loaded.run !== run || run.ended) return;
        run.ended = 'timeout';
        this.counts.timeouts += 1;
        loaded.end();
      },
      Math.max(0, delayMs),
    );
  }

  private reported(loaded: LoadedVersion, index: number, json: string, value?: EncodedValue): void {
    const run = loaded.run;
    if (!run || run.ended) return;
    // Read, the value included, by `decodeResult`.
    run.results[index] = value === undefined ? json : [json, value];
    run.next = index + 1;
    if (run.next >= run.results.length) return;
    if (run.atOnceSince !== undefined) run.atOnceSince = Date.now();
    else this.arm(loaded, run);
  }

  /**
   * Answers `{ error }` rather than rejecting: a promise the host rejects before isolated-vm has taken
   * it counts as unhandled, which would end this process.
   */
  private async fetch(loaded: LoadedVersion, request: SandboxFetchRequest) {
    try {
      return await this.fetcher.fetch(request, loaded.abort.signal);
    } catch (error) {
      return { error: (error as Error)?.message ?? String(error) };
    }
  }
}

/**
 * What the runtime's `runBatch` takes for `invocations`: their JSON as one array, and where each
 * payload's JSON lies in it (from, to, from, to, …), for it to tell a value returned as it came.
 */
function batchArguments(invocations: readonly EncodedInvocation[]): [string, number[]] {
  const payloadsAt: number[] = [];
  let at = 1;
  for (const { json, payloadAt } of invocations) {
    payloadsAt.push(at + payloadAt[0], at + payloadAt[1]);
    at += json.length + 1;
  }
  return [`[${invocations.map((invocation) => invocation.json).join(',')}]`, payloadsAt];
}

function keyOf(fn: FunctionVersion): string {
  return `${fn.workspaceId}/${fn.functionId}/${fn.version}`;
}

function emptyLogs(durationMs: number) {
  return { logs: [], logsDropped: 0, durationMs };
}

function unavailable(reason: string): FunctionResult {
  return { status: 'unavailable', reason, ...emptyLogs(0) };
}

/** Global names the host functions have until the runtime takes them: unguessable by the code. */
function hostNames(): SandboxRuntimeConfig['hostNames'] {
  const tag = randomBytes(8).toString('hex');
  return {
    fetch: `__fetch_${tag}`,
    url: `__url_${tag}`,
    hash: `__hash_${tag}`,
    random: `__random_${tag}`,
    done: `__done_${tag}`,
    doneNow: `__doneNow_${tag}`,
  };
}

const URL_PART_NAMES = [
  'href',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
] as const;

/** The sandbox's URL parser: Node's WHATWG parser on copies; `null` for an invalid URL. */
function urlParts(href: string, base: string | null, key: string | null, value: string | null) {
  let url: URL;
  try {
    url = base === null ? new URL(href) : new URL(href, base);
  } catch {
    return null;
  }
  if (key !== null && (URL_PART_NAMES as readonly string[]).includes(key)) {
    try {
      (url as unknown as Record<string, string>)[key] = String(value);
    } catch {
      return null;
    }
  }
  const parts: Record<string, string> = { origin: url.origin };
  for (const name of URL_PART_NAMES) parts[name] = url[name];
  return parts;
}

const HASHES = new Set(['sha1', 'sha256', 'sha512', 'md5']);

function hashOf(
  algorithm: string,
  key: Uint8Array | null,
  data: Uint8Array,
  encoding: 'hex' | 'base64',
): string {
  if (!HASHES.has(algorithm)) throw new Error(`Digest method not supported: ${algorithm}`);
  const digest = key === null ? createHash(algorithm) : createHmac(algorithm, key);
  return digest.update(data).digest(encoding);
}

/** §6 and §1: size, and a script rather than a module. */
export function problemWithCode(code: string, maxCodeBytes: number): string | undefined {
  if (typeof code !== 'string' || code.trim() === '') return 'the code is empty';
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > maxCodeBytes) return `the code is ${bytes} bytes, more than the ${maxCodeBytes} allowed`;
  const moduleStatement = statementsOf(code).find(({ text }) =>
    /^(?:import(?:[ {*'"]|$)|export[ {*])/.test(text),
  );
  if (moduleStatement) {
    return `a function is a script, not a module: \`import\` and \`export\` are not allowed (line ${moduleStatement.line})`;
  }
  return undefined;
}

/** isolated-vm's compile errors end with ` [function.js:line:column]`: said in words. */
function syntaxMessage(error: unknown): string {
  const message = (error as Error)?.message ?? String(error);
  const position = / \[[^\]]*?:(\d+):(\d+)\]$/.exec(message);
  const name =
    (error as Error)?.name && (error as Error).name !== 'Error' ? `${(error as Error).name}: ` : '';
  if (!position) return `${name}${message}`;
  return `${name}${message.slice(0, position.index)} (line ${position[1]}, column ${position[2]})`;
}
