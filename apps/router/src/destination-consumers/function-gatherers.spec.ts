import type { NormalizedMessage } from '@tributary/contracts';
import {
  FunctionInvoker,
  FunctionMetrics,
  type FunctionInvocation,
  type FunctionResult,
  type FunctionRunner,
  type FunctionVersion,
} from '@tributary/functions';
import type { DeliveryTarget } from './delivery-targets.service';
import { FunctionGatherers } from './function-gatherers';

/** A runner that records each invocation and answers what the test says. */
class ScriptedRunner implements FunctionRunner {
  readonly invocations: FunctionInvocation[] = [];
  answer: (invocation: FunctionInvocation) => Omit<FunctionResult, 'logs' | 'logsDropped' | 'durationMs'> = (
    invocation,
  ) => ({
    status: 'resolved',
    value: (invocation.payload as NormalizedMessage[]).map(() => ({ status: 200 })),
  });

  async invoke(invocation: FunctionInvocation): Promise<FunctionResult> {
    this.invocations.push(invocation);
    await new Promise((resolve) => setTimeout(resolve, 10));
    return { ...this.answer(invocation), logs: [], logsDropped: 0, durationMs: 4 } as FunctionResult;
  }

  check(): never {
    throw new Error('not used');
  }

  async close(): Promise<void> {}
}

const fn: FunctionVersion = {
  workspaceId: 'ws-1',
  functionId: 'dfn_batcher',
  version: 2,
  kind: 'DESTINATION',
  code: 'async function onBatch(events) {}',
};

function targetOf(gathers = true): DeliveryTarget {
  return {
    deliverer: {
      kind: 'function',
      fn,
      instance: 'workspaces/acme/sources/web/destinations/dfn_batcher',
      gathers,
    },
    settings: Object.freeze({ endpoint: 'https://example.com' }),
    source: { sourceId: 'src-1', sourceSlug: 'web' },
    displayName: 'Batcher',
    capabilities: { acceptsHistoricalTimestampsUpToMs: null, destinationFiltersApply: true },
  };
}

const message = (messageId: string, type = 'track') => ({ messageId, type }) as unknown as NormalizedMessage;

describe('FunctionGatherers', () => {
  let runner: ScriptedRunner;
  let metrics: FunctionMetrics;
  let gatherers: FunctionGatherers;

  beforeEach(() => {
    runner = new ScriptedRunner();
    metrics = new FunctionMetrics();
    gatherers = new FunctionGatherers(new FunctionInvoker(runner, metrics, undefined, () => {}));
  });

  it('gathers the messages of every type into one onBatch call, and maps its answer per message', async () => {
    const target = targetOf();
    runner.answer = () => ({
      status: 'resolved',
      value: [{ status: 200 }, { status: 400, errormessage: 'no email' }, { status: 503 }],
    });
    const stored = new TextEncoder().encode('{"messageId":"m1","type":"track","stored":true}');
    const outcomes = await Promise.all([
      gatherers.deliver(target, message('m1'), stored),
      gatherers.deliver(target, message('m2', 'identify'), undefined),
      gatherers.deliver(target, message('m3', 'page'), undefined),
    ]);

    expect(runner.invocations).toHaveLength(1);
    const [invocation] = runner.invocations;
    expect(invocation).toMatchObject({
      fn,
      entry: 'onBatch',
      settings: { endpoint: 'https://example.com' },
      context: { instance: 'workspaces/acme/sources/web/destinations/dfn_batcher' },
    });
    expect(invocation!.context.messageId).toBeUndefined();
    // The stored JSON where a message has it, the message's own JSON where it has none.
    expect(JSON.parse(invocation!.payloadJson!)).toEqual([
      { messageId: 'm1', type: 'track', stored: true },
      { messageId: 'm2', type: 'identify' },
      { messageId: 'm3', type: 'page' },
    ]);
    expect(outcomes).toEqual([
      { messageId: 'm1', outcome: 'delivered' },
      { messageId: 'm2', outcome: 'discard', reason: 'no email' },
      { messageId: 'm3', outcome: 'retry', reason: 'onBatch answered status 503' },
    ]);
    // One invocation, counted once.
    expect(metrics.snapshot('ws-1', 'dfn_batcher')).toMatchObject({
      invocations: 1,
      outcomes: { success: 1, discarded: 0, retried: 0 },
    });
  });

  it('gives every message of the call what a throw means, and counts it once under that outcome', async () => {
    const target = targetOf();
    runner.answer = () => ({ status: 'threw', name: 'RetryError', message: 'the vendor is busy' });
    const outcomes = await Promise.all(
      ['t1', 't2'].map((id) => gatherers.deliver(target, message(id), undefined)),
    );
    expect(runner.invocations).toHaveLength(1);
    expect(outcomes).toEqual([
      { messageId: 't1', outcome: 'retry', reason: 'RetryError: the vendor is busy' },
      { messageId: 't2', outcome: 'retry', reason: 'RetryError: the vendor is busy' },
    ]);
    expect(metrics.snapshot('ws-1', 'dfn_batcher')).toMatchObject({
      invocations: 1,
      outcomes: { retried: 1 },
    });
  });

  it('discards every message of a call whose answer is not one status per event', async () => {
    const target = targetOf();
    runner.answer = () => ({ status: 'resolved', value: [{ status: 200 }] });
    const outcomes = await Promise.all(
      ['w1', 'w2'].map((id) => gatherers.deliver(target, message(id), undefined)),
    );
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({
        outcome: 'discard',
        reason: expect.stringMatching(/^onBatch: expected an array of 2 /),
      });
    }
    expect(metrics.snapshot('ws-1', 'dfn_batcher')).toMatchObject({
      invocations: 1,
      outcomes: { discarded: 1 },
    });
  });

  it('keeps destinations and versions apart: a new plan gathers on its own', async () => {
    const first = targetOf();
    const second = targetOf();
    await Promise.all([
      gatherers.deliver(first, message('a1'), undefined),
      gatherers.deliver(second, message('b1'), undefined),
      gatherers.deliver(first, message('a2'), undefined),
    ]);
    expect(
      runner.invocations
        .map((invocation) =>
          (invocation.payload as NormalizedMessage[]).map((each) => each.messageId).join(','),
        )
        .sort(),
    ).toEqual(['a1,a2', 'b1']);
  });
});
