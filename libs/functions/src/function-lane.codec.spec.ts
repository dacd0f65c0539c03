import { decodeResult, encodeInvocations, VALUE_UNCHANGED } from './function-lane.codec';
import type { FunctionInvocation } from './function-runner.port';

const fn = {
  workspaceId: 'ws',
  functionId: 'ifn_1',
  version: 2,
  kind: 'INSERT_DESTINATION' as const,
  code: 'x',
};
const invocation = (payload: unknown, extra: Partial<FunctionInvocation> = {}): FunctionInvocation => ({
  fn,
  entry: 'onTrack',
  payload,
  settings: { apiKey: 'k' },
  context: { invocationId: 'i' },
  ...extra,
});

describe('the functions lane codec', () => {
  it('sends each version once per call, and each invocation as the JSON the isolate parses', () => {
    const settings = { apiKey: 'k' };
    const encoded = encodeInvocations([
      invocation({ a: 1 }, { settings }),
      invocation(undefined, { payloadJson: '{"stored":true}', settings }),
      invocation({ b: 2 }, { fn: { ...fn, version: 3 } }),
    ]);
    expect(encoded.versions.map((version) => version.version)).toEqual([2, 3]);
    expect(encoded.calls.map((call) => call.version)).toEqual([0, 0, 1]);
    expect(encoded.calls.map((call) => JSON.parse(call.json))).toEqual([
      { entry: 'onTrack', payload: { a: 1 }, settings: { apiKey: 'k' } },
      { entry: 'onTrack', payload: { stored: true }, settings: { apiKey: 'k' } },
      { entry: 'onTrack', payload: { b: 2 }, settings: { apiKey: 'k' } },
    ]);
    expect(encoded.calls.map(({ json, payloadAt: [from, to] }) => json.slice(from, to))).toEqual([
      '{"a":1}',
      '{"stored":true}',
      '{"b":2}',
    ]);
  });

  it('keeps a preview apart from the deployed version of the same number', () => {
    const encoded = encodeInvocations([invocation({}), invocation({}, { fn: { ...fn, once: true } })]);
    expect(encoded.versions).toHaveLength(2);
  });

  it('reads a reported result with its value beside it, and passes a result the lane made as it is', () => {
    const reported = { status: 'resolved', logs: [], logsDropped: 0, durationMs: 1 };
    const sent = invocation({ a: 0 }, { payloadJson: '{"a":0}' });
    expect(decodeResult([JSON.stringify(reported), '{"a":1}'], sent)).toEqual({
      ...reported,
      value: { a: 1 },
    });
    expect(decodeResult(JSON.stringify(reported), sent)).toEqual(reported);
    const made = { status: 'unavailable' as const, reason: 'r', logs: [], logsDropped: 0, durationMs: 0 };
    expect(decodeResult(made, sent)).toBe(made);
  });

  it('gives back the payload itself, unread, for a value the isolate reported unchanged', () => {
    const payload = { type: 'track', messageId: 'm-1', event: 'Signed Up' };
    const sent = invocation(payload, { payloadJson: JSON.stringify(payload) });
    const report = '{"status":"resolved","logs":[],"logsDropped":0,"durationMs":0}';
    const unchanged = decodeResult([report, VALUE_UNCHANGED], sent);
    expect(unchanged).toMatchObject({ status: 'resolved', valueUnchanged: true });
    expect(unchanged.status === 'resolved' && unchanged.value).toBe(payload);
    // A value's JSON is read, even when it is the payload's: the isolate is the one that compares.
    const read = decodeResult([report, JSON.stringify(payload)], sent);
    expect(read).toEqual({ status: 'resolved', logs: [], logsDropped: 0, durationMs: 0, value: payload });
    expect(read.status === 'resolved' && read.value).not.toBe(payload);
    // Unchanged is said of a value only: a function that threw has none.
    const threw = '{"status":"threw","name":"Error","message":"m","logs":[],"logsDropped":0,"durationMs":0}';
    expect(decodeResult([threw, VALUE_UNCHANGED], sent)).not.toHaveProperty('value');
  });

  it.each([
    ['text that is not JSON', 'not json'],
    ['a number', '5'],
    ['null', 'null'],
    ['an unknown status', '{"status":"ok","logs":[],"logsDropped":0,"durationMs":0}'],
    ['logs that are not a list', '{"status":"resolved","logs":"none","logsDropped":0,"durationMs":0}'],
    [
      'a log line of another shape',
      '{"status":"resolved","logs":[{"level":"x","time":"t","message":"m"}],"logsDropped":0,"durationMs":0}',
    ],
    ['a duration that is not a number', '{"status":"resolved","logs":[],"logsDropped":0,"durationMs":"1"}'],
    ['a throw without its name', '{"status":"threw","logs":[],"logsDropped":0,"durationMs":0}'],
    [
      'emitted messages that are not a list',
      '{"status":"resolved","emitted":{},"logs":[],"logsDropped":0,"durationMs":0}',
    ],
    [
      'a value inside the report',
      '{"status":"resolved","value":{},"logs":[],"logsDropped":0,"durationMs":0}',
    ],
    [
      'a report claiming the value unchanged',
      '{"status":"resolved","valueUnchanged":true,"logs":[],"logsDropped":0,"durationMs":0}',
    ],
  ])('reads %s as the function failing', (_, text) => {
    expect(decodeResult(text, invocation({}))).toMatchObject({
      status: 'threw',
      name: 'TypeError',
      message: 'the function’s result could not be read',
    });
  });

  it.each([
    ['text that is not JSON', '{"a":'],
    ['neither JSON text nor unchanged', false],
    ['a number', 1],
  ])('reads a value beside the report that is %s as the function failing', (_, value) => {
    const report = '{"status":"resolved","logs":[],"logsDropped":0,"durationMs":0}';
    expect(decodeResult([report, value as string], invocation({}))).toMatchObject({
      status: 'threw',
      name: 'TypeError',
    });
  });
});
