import {
  type BatchDecision,
  decideBatchOutcomes,
  decideDeletionOutcome,
  decideDestinationOutcome,
  decideInsertOutcome,
  decideSourceAnswer,
  INSERT_FUNCTION_DROPPED,
} from './function-outcome.decider';
import type { FunctionResult } from './function-runner.port';

const base = { logs: [], logsDropped: 0, durationMs: 3 };
const resolved = (value?: unknown, emitted?: { type: string }[]): FunctionResult => ({
  ...base,
  status: 'resolved',
  ...(value !== undefined && { value }),
  ...(emitted !== undefined && { emitted }),
});
const threw = (name: string, message = 'why'): FunctionResult => ({
  ...base,
  status: 'threw',
  name,
  message,
});
const noHandler: FunctionResult = { ...base, status: 'no_handler' };
const timeout: FunctionResult = { ...base, status: 'timeout', limitMs: 5000 };
const memory: FunctionResult = { ...base, status: 'memory_exceeded', limitMb: 128 };
const unavailable: FunctionResult = { ...base, status: 'unavailable', reason: 'the lane ended' };

describe('decideDestinationOutcome (§5.2)', () => {
  it.each<[string, FunctionResult, unknown]>([
    ['resolves (any value)', resolved({ any: 1 }), { outcome: 'delivered' }],
    ['resolves undefined', resolved(), { outcome: 'delivered' }],
    ['no handler', noHandler, { outcome: 'filtered', reason: expect.stringMatching(/^EventNotSupported: /) }],
    [
      'EventNotSupported',
      threw('EventNotSupported', 'no pages'),
      { outcome: 'filtered', reason: 'EventNotSupported: no pages' },
    ],
    [
      'ValidationError',
      threw('ValidationError', 'bad'),
      { outcome: 'discard', reason: 'ValidationError: bad' },
    ],
    [
      'InvalidEventPayload',
      threw('InvalidEventPayload', 'no id'),
      { outcome: 'discard', reason: 'ValidationError: no id' },
    ],
    ['RetryError', threw('RetryError', 'HTTP 503'), { outcome: 'retry', reason: 'RetryError: HTTP 503' }],
    ['timeout', timeout, { outcome: 'retry', reason: 'function_timeout: exceeded 5000 ms' }],
    ['out of memory', memory, { outcome: 'discard', reason: 'function_memory_exceeded' }],
    [
      'TypeError',
      threw('TypeError', 'x is undefined'),
      { outcome: 'discard', reason: 'TypeError: x is undefined' },
    ],
    [
      'a rejected fetch',
      threw('TypeError', 'egress_denied: 127.0.0.1: loopback'),
      { outcome: 'discard', reason: 'TypeError: egress_denied: 127.0.0.1: loopback' },
    ],
    [
      'the runner was unavailable',
      unavailable,
      { outcome: 'retry', reason: 'function_unavailable: the lane ended' },
    ],
  ])('%s', (_, result, expected) => {
    expect(decideDestinationOutcome(result)).toEqual(expected);
  });
});

describe('decideBatchOutcomes (§5.2, onBatch)', () => {
  const delivered = { outcome: 'delivered' };
  const wrong = (why: string) => ({ outcome: 'discard', reason: expect.stringMatching(why) });
  const three = (outcome: unknown, invocation: string) => ({
    outcomes: [outcome, outcome, outcome],
    invocation,
  });

  it.each<[string, FunctionResult, unknown]>([
    [
      'one status per event, in order',
      resolved([
        { status: 200 },
        { status: 204 },
        { status: 400, errormessage: 'no email' },
        { status: 404 },
        { status: 429, errormessage: 'slow down' },
        { status: 503, errormessage: 'the vendor is down' },
        { status: 500 },
      ]),
      {
        outcomes: [
          delivered,
          delivered,
          { outcome: 'discard', reason: 'no email' },
          { outcome: 'discard', reason: 'onBatch answered status 404' },
          { outcome: 'retry', reason: 'slow down' },
          { outcome: 'retry', reason: 'the vendor is down' },
          { outcome: 'retry', reason: 'onBatch answered status 500' },
        ],
        invocation: 'delivered',
      },
    ],
  ])('%s', (_, result, expected) => {
    expect(decideBatchOutcomes(result, 7)).toEqual(expected);
  });

  it.each<[string, FunctionResult, BatchDecision | unknown]>([
    ['resolves undefined: all delivered', resolved(), three(delivered, 'delivered')],
    ['resolves null: all delivered', resolved(null), three(delivered, 'delivered')],
    [
      'RetryError: all retried',
      threw('RetryError', 'HTTP 503'),
      three({ outcome: 'retry', reason: 'RetryError: HTTP 503' }, 'retry'),
    ],
    [
      'ValidationError: all discarded',
      threw('ValidationError', 'bad'),
      three({ outcome: 'discard', reason: 'ValidationError: bad' }, 'discard'),
    ],
    [
      'InvalidEventPayload: all discarded',
      threw('InvalidEventPayload', 'no id'),
      three({ outcome: 'discard', reason: 'ValidationError: no id' }, 'discard'),
    ],
    [
      'timeout: all retried',
      timeout,
      three({ outcome: 'retry', reason: 'function_timeout: exceeded 5000 ms' }, 'retry'),
    ],
    [
      'out of memory: all discarded',
      memory,
      three({ outcome: 'discard', reason: 'function_memory_exceeded' }, 'discard'),
    ],
    [
      'any other throw: all discarded',
      threw('TypeError', 'x is undefined'),
      three({ outcome: 'discard', reason: 'TypeError: x is undefined' }, 'discard'),
    ],
    [
      'EventNotSupported: all filtered',
      threw('EventNotSupported', 'not now'),
      three({ outcome: 'filtered', reason: 'EventNotSupported: not now' }, 'filtered'),
    ],
    [
      'no onBatch: all filtered',
      noHandler,
      three(
        { outcome: 'filtered', reason: 'EventNotSupported: the function has no onBatch handler' },
        'filtered',
      ),
    ],
    [
      'the runner was unavailable: all retried',
      unavailable,
      three({ outcome: 'retry', reason: 'function_unavailable: the lane ended' }, 'retry'),
    ],
    [
      'not an array',
      resolved({ status: 200 }),
      three(wrong('^onBatch: expected an array of 3 \\{status, errormessage\\} .*, got object$'), 'discard'),
    ],
    ['a number', resolved(200), three(wrong('got number$'), 'discard')],
    [
      'too few entries',
      resolved([{ status: 200 }, { status: 200 }]),
      three(wrong('got 2 entries$'), 'discard'),
    ],
    [
      'too many entries',
      resolved([{ status: 200 }, { status: 200 }, { status: 200 }, { status: 200 }]),
      three(wrong('got 4 entries$'), 'discard'),
    ],
    [
      'an entry without a status',
      resolved([{ status: 200 }, { errormessage: 'x' }, { status: 200 }]),
      three(wrong('entry 1 has no 2xx, 4xx or 5xx status: \\{"errormessage":"x"\\}$'), 'discard'),
    ],
    [
      'a status as a string',
      resolved([{ status: '200' }, { status: 200 }, { status: 200 }]),
      three(wrong('entry 0 has no 2xx'), 'discard'),
    ],
    [
      'a 3xx status',
      resolved([{ status: 200 }, { status: 200 }, { status: 302 }]),
      three(wrong('entry 2 has no 2xx'), 'discard'),
    ],
    [
      'a status past 599',
      resolved([{ status: 200 }, { status: 600 }, { status: 200 }]),
      three(wrong('entry 1 has no 2xx'), 'discard'),
    ],
    [
      'a fractional status',
      resolved([{ status: 200.5 }, { status: 200 }, { status: 200 }]),
      three(wrong('entry 0 has no 2xx'), 'discard'),
    ],
    [
      'a null entry',
      resolved([{ status: 200 }, null, { status: 200 }]),
      three(wrong('entry 1 .*: null$'), 'discard'),
    ],
  ])('%s', (_, result, expected) => {
    expect(decideBatchOutcomes(result, 3)).toEqual(expected);
  });

  it('cuts a long wrong entry in its reason', () => {
    const long = { status: 'x'.repeat(500) };
    const [first] = decideBatchOutcomes(resolved([long]), 1).outcomes;
    expect((first as { reason: string }).reason.length).toBeLessThan(300);
  });
});

describe('decideDeletionOutcome (§5.2, onDelete)', () => {
  it.each<[string, FunctionResult, unknown]>([
    ['resolves', resolved(), { outcome: 'deleted' }],
    ['no onDelete', noHandler, { outcome: 'not_supported', reason: 'the function has no onDelete' }],
    [
      'EventNotSupported',
      threw('EventNotSupported', 'no deletes'),
      { outcome: 'not_supported', reason: 'EventNotSupported: no deletes' },
    ],
    ['RetryError', threw('RetryError', 'busy'), { outcome: 'retry', reason: 'RetryError: busy' }],
    ['timeout', timeout, { outcome: 'retry', reason: 'function_timeout: exceeded 5000 ms' }],
    ['unavailable', unavailable, { outcome: 'retry', reason: 'function_unavailable: the lane ended' }],
    [
      'ValidationError',
      threw('ValidationError', 'no such user'),
      { outcome: 'failed', reason: 'ValidationError: no such user' },
    ],
    [
      'another throw',
      threw('TypeError', 'x is undefined'),
      { outcome: 'failed', reason: 'TypeError: x is undefined' },
    ],
    ['out of memory', memory, { outcome: 'failed', reason: 'function_memory_exceeded' }],
  ])('%s', (_, result, expected) => {
    expect(decideDeletionOutcome(result)).toEqual(expected);
  });
});

describe('decideInsertOutcome (§5.3)', () => {
  const original = { messageId: 'm-1', type: 'track' };
  it('passes the returned object on, with messageId and type forced back', () => {
    expect(
      decideInsertOutcome(resolved({ messageId: 'other', type: 'identify', event: 'E', x: 1 }), original),
    ).toEqual({
      outcome: 'continue',
      message: { messageId: 'm-1', type: 'track', event: 'E', x: 1 },
    });
  });
  it('passes the original itself on when the function returned it unchanged, so its stored bytes may go', () => {
    const message = { messageId: 'm-1', type: 'track', event: 'E' };
    const decision = decideInsertOutcome(
      { ...base, status: 'resolved', value: message, valueUnchanged: true },
      original,
    );
    expect(decision).toEqual({ outcome: 'continue', message, unchanged: true });
    expect(decision.outcome === 'continue' && decision.message).toBe(message);
  });
  it('does not take a value said to be unchanged for the original when its messageId or type differ', () => {
    const value = { messageId: 'other', type: 'track', event: 'E' };
    expect(
      decideInsertOutcome({ ...base, status: 'resolved', value, valueUnchanged: true }, original),
    ).toEqual({ outcome: 'continue', message: { ...value, messageId: 'm-1' } });
  });
  it.each<[string, FunctionResult, unknown]>([
    ['returns undefined', resolved(), { outcome: 'filtered', reason: INSERT_FUNCTION_DROPPED }],
    ['returns null', resolved(null), { outcome: 'filtered', reason: 'insert_function: dropped' }],
    ['throws DropEvent', threw('DropEvent'), { outcome: 'filtered', reason: 'insert_function: dropped' }],
    ['no handler', noHandler, { outcome: 'filtered', reason: 'insert_function: dropped' }],
    [
      'ValidationError',
      threw('ValidationError', 'bad'),
      { outcome: 'discard', reason: 'ValidationError: bad' },
    ],
    [
      'InvalidEventPayload',
      threw('InvalidEventPayload', 'bad'),
      { outcome: 'discard', reason: 'ValidationError: bad' },
    ],
    ['other throw', threw('RangeError', 'deep'), { outcome: 'discard', reason: 'RangeError: deep' }],
    ['out of memory', memory, { outcome: 'discard', reason: 'function_memory_exceeded' }],
    ['RetryError', threw('RetryError', 'later'), { outcome: 'retry', reason: 'RetryError: later' }],
    ['timeout', timeout, { outcome: 'retry', reason: 'function_timeout: exceeded 5000 ms' }],
    [
      'returns a string',
      resolved('text'),
      { outcome: 'discard', reason: expect.stringMatching(/^TypeError: /) },
    ],
    ['returns an array', resolved([1]), { outcome: 'discard', reason: expect.stringContaining('an array') }],
    ['unavailable', unavailable, { outcome: 'retry', reason: 'function_unavailable: the lane ended' }],
  ])('%s', (_, result, expected) => {
    expect(decideInsertOutcome(result, original)).toEqual(expected);
  });
});

describe('decideSourceAnswer (§5.1)', () => {
  it('answers 200 with the emitted messages to store', () => {
    const emitted = [{ type: 'track', event: 'Order Placed' }];
    expect(decideSourceAnswer(resolved(undefined, emitted))).toEqual({
      status: 200,
      body: { success: true },
      headers: {},
      emitted,
    });
  });
  it.each<[string, FunctionResult, number, unknown, Record<string, string>]>([
    ['ValidationError', threw('ValidationError', 'bad'), 400, { error: 'ValidationError: bad' }, {}],
    [
      'InvalidEventPayload',
      threw('InvalidEventPayload', 'bad'),
      400,
      { error: 'InvalidEventPayload: bad' },
      {},
    ],
    [
      'RetryError',
      threw('RetryError', 'later'),
      503,
      { error: 'RetryError: later' },
      { 'Retry-After': '60' },
    ],
    ['timeout', timeout, 503, { error: 'function_timeout: exceeded 5000 ms' }, { 'Retry-After': '60' }],
    ['out of memory', memory, 503, { error: 'function_memory_exceeded' }, { 'Retry-After': '60' }],
    [
      'unavailable',
      unavailable,
      503,
      { error: 'function_unavailable: the lane ended' },
      { 'Retry-After': '60' },
    ],
    [
      'other throw',
      threw('SyntaxError', 'Unexpected token'),
      500,
      { error: 'SyntaxError: Unexpected token' },
      {},
    ],
    ['no handler', noHandler, 500, { error: expect.stringMatching(/^EventNotSupported: /) }, {}],
  ])('%s', (_, result, status, body, headers) => {
    expect(decideSourceAnswer(result)).toEqual({ status, body, headers, emitted: [] });
  });
});
