/**
 * How invocations and results cross the functions lane (`function-runner.ts` ↔ the lane's processes).
 *
 * Both ways they cross as JSON text, not as object graphs: the isolate takes JSON and gives JSON back
 * anyway, so the text is made once (or not at all: a message's stored bytes are its JSON) and copied
 * as a string by the lane's serializer, instead of an object graph serialized, rebuilt, stringified
 * for the isolate and the same again for the answer. A version's code crosses once per call, not once
 * per invocation, and a value returned as it came does not cross back at all (`VALUE_UNCHANGED`).
 */
import type { FunctionInvocation, FunctionResult, FunctionVersion } from './function-runner.port';

/** What one lane call carries: the versions it runs, and each invocation as JSON text. */
export interface EncodedInvocations {
  readonly versions: readonly FunctionVersion[];
  readonly calls: readonly EncodedInvocation[];
}

export interface EncodedInvocation {
  /** Index into `versions`. */
  readonly version: number;
  /** `{"entry":…,"payload":…,"settings":…}`: what the isolate's runtime parses. */
  readonly json: string;
  /** Where the payload's JSON lies in `json` (from, to): what the isolate compares a value with. */
  readonly payloadAt: readonly [from: number, to: number];
}

/**
 * A result as the isolate reported it (JSON text), or one the lane's process made itself. When the
 * entry resolved to a value, the value comes beside the report: its JSON, or `true` when that JSON is
 * the payload's to the character (a message returned as it came, which need not cross back).
 */
export type EncodedResult = FunctionResult | string | readonly [report: string, value: EncodedValue];

/** What comes beside a report whose entry resolved to a value: its JSON, or `VALUE_UNCHANGED`. */
export type EncodedValue = string | typeof VALUE_UNCHANGED;

/** In an `EncodedResult`, in place of a value's JSON: the value is the payload as it was sent. */
export const VALUE_UNCHANGED = true;

/** Settings objects are shared by every message of an instance: their JSON is made once per object. */
const settingsJson = new WeakMap<object, string>();

export function encodeInvocations(invocations: readonly FunctionInvocation[]): EncodedInvocations {
  const versions: FunctionVersion[] = [];
  const versionIndex = new Map<string, number>();
  const calls = invocations.map((invocation): EncodedInvocation => {
    const { fn } = invocation;
    const key = `${fn.workspaceId}/${fn.functionId}/${fn.version}/${fn.once === true}`;
    let version = versionIndex.get(key);
    if (version === undefined) {
      version = versions.push(fn) - 1;
      versionIndex.set(key, version);
    }
    return { version, ...invocationJson(invocation) };
  });
  return { versions, calls };
}

function invocationJson(invocation: FunctionInvocation): Omit<EncodedInvocation, 'version'> {
  const settings = invocation.settings;
  let settingsText = settingsJson.get(settings);
  if (settingsText === undefined) {
    settingsText = JSON.stringify(settings);
    settingsJson.set(settings, settingsText);
  }
  const payload = invocation.payloadJson ?? JSON.stringify(invocation.payload) ?? 'null';
  const before = `{"entry":${JSON.stringify(invocation.entry)},"payload":`;
  return {
    json: `${before}${payload},"settings":${settingsText}}`,
    payloadAt: [before.length, before.length + payload.length],
  };
}

const STATUSES = new Set<string>([
  'resolved',
  'no_handler',
  'threw',
  'timeout',
  'memory_exceeded',
  'unavailable',
]);
const LEVELS = new Set<string>(['log', 'info', 'warn', 'error', 'debug']);

/**
 * A result back from the lane, for `invocation`. The isolate's text is the tenant's code's output in
 * the end (its code can change how the isolate serializes), so it is read as untrusted: anything not
 * shaped like a result is the function's failure, never a failure of the caller. A value the isolate
 * found to be the payload as it was sent is the caller's payload, unread: an insert function that
 * returned the message as it came (`valueUnchanged`). Trusting that costs nothing: a function that
 * claims it falsely only loses its own change, which it could have done by returning the payload.
 */
export function decodeResult(encoded: EncodedResult, invocation: FunctionInvocation): FunctionResult {
  if (typeof encoded !== 'string' && !Array.isArray(encoded)) return encoded as FunctionResult;
  const [report, valueJson] = typeof encoded === 'string' ? [encoded, undefined] : encoded;
  let value: unknown;
  try {
    value = JSON.parse(report);
  } catch {
    return unreadable();
  }
  if (!isResult(value)) return unreadable();
  if (valueJson === undefined || value.status !== 'resolved') return value;
  // The report was parsed just now and nothing else holds it: the value goes in, not into a copy.
  if (valueJson === VALUE_UNCHANGED)
    return Object.assign(value, { value: invocation.payload, valueUnchanged: true as const });
  if (typeof valueJson !== 'string') return unreadable();
  try {
    return Object.assign(value, { value: JSON.parse(valueJson) as unknown });
  } catch {
    return unreadable();
  }
}

function isResult(value: unknown): value is FunctionResult {
  if (typeof value !== 'object' || value === null) return false;
  const result = value as Record<string, unknown>;
  if (typeof result.status !== 'string' || !STATUSES.has(result.status)) return false;
  if (typeof result.logsDropped !== 'number' || typeof result.durationMs !== 'number') return false;
  if (!Array.isArray(result.logs)) return false;
  for (const line of result.logs as unknown[]) {
    const entry = line as Record<string, unknown> | null;
    if (typeof entry !== 'object' || entry === null) return false;
    if (typeof entry.time !== 'string' || typeof entry.message !== 'string') return false;
    if (typeof entry.level !== 'string' || !LEVELS.has(entry.level)) return false;
  }
  if (result.status === 'threw' && (typeof result.name !== 'string' || typeof result.message !== 'string'))
    return false;
  if (result.emitted !== undefined && !Array.isArray(result.emitted)) return false;
  // The value comes beside the report, never in it.
  return !('value' in result) && !('valueUnchanged' in result);
}

function unreadable(): FunctionResult {
  return {
    status: 'threw',
    name: 'TypeError',
    message: 'the function’s result could not be read',
    logs: [],
    logsDropped: 0,
    durationMs: 0,
  };
}
