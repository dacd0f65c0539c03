import type { NormalizedMessage } from '@tributary/contracts';
import type { DeliveryAdapter, DeliveryRequest, DeliveryResult, Gathering } from '@tributary/destinations';
import { DeliveryGatherer } from './delivery-gatherer';

/** An adapter of the port that takes its time and records each call's messages. */
class RecordingAdapter implements DeliveryAdapter {
  readonly slug = 'recording';
  readonly calls: string[][] = [];
  readonly storedPayloads: (readonly (Uint8Array | undefined)[] | undefined)[] = [];
  failWith: Error | undefined;
  private underWay = 0;
  mostUnderWay = 0;

  /** The gathering a definition would declare for it. */
  constructor(readonly gathering: Gathering = { maxMessages: 3 }) {}

  async deliver(request: DeliveryRequest): Promise<DeliveryResult[]> {
    this.calls.push(request.messages.map((message) => message.messageId));
    this.storedPayloads.push(request.storedPayload);
    this.underWay += 1;
    this.mostUnderWay = Math.max(this.mostUnderWay, this.underWay);
    await new Promise((resolve) => setTimeout(resolve, 20));
    this.underWay -= 1;
    if (this.failWith) throw this.failWith;
    return request.messages.map((message) => ({
      messageId: message.messageId,
      ...(message.messageId.startsWith('bad')
        ? { outcome: 'discard' as const, reason: 'refused' }
        : { outcome: 'delivered' as const }),
    }));
  }

  async close(): Promise<void> {}
}

const message = (messageId: string) => ({ messageId }) as unknown as NormalizedMessage;

describe('DeliveryGatherer', () => {
  const settings = Object.freeze({ connection_string: 'x' });

  it('sends a lone message at once, and gathers those that arrive while a call is under way', async () => {
    const adapter = new RecordingAdapter();
    const gatherer = new DeliveryGatherer(adapter, adapter.gathering);
    const first = gatherer.deliver({ settings, sourceId: 's' }, message('m1'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const later = ['m2', 'm3', 'm4', 'bad5'].map((id) =>
      gatherer.deliver({ settings, sourceId: 's' }, message(id)),
    );
    const outcomes = await Promise.all([first, ...later]);
    expect(adapter.calls).toEqual([['m1'], ['m2', 'm3', 'm4'], ['bad5']]);
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual([
      'delivered',
      'delivered',
      'delivered',
      'delivered',
      'discard',
    ]);
  });

  it('has as many calls under way as the adapter takes at once, two when it does not say', async () => {
    for (const [gathering, expected] of [
      [{ maxMessages: 1 }, 2],
      [{ maxMessages: 1, callsAtOnce: 4 }, 4],
    ] as const) {
      const adapter = new RecordingAdapter(gathering);
      const gatherer = new DeliveryGatherer(adapter, adapter.gathering);
      const ids = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'];
      await Promise.all(ids.map((id) => gatherer.deliver({ settings, sourceId: 's' }, message(id))));
      expect(adapter.mostUnderWay).toBe(expected);
      expect(adapter.calls.flat().sort()).toEqual(ids);
    }
  });

  it('keeps sources and config versions apart', async () => {
    const adapter = new RecordingAdapter();
    const gatherer = new DeliveryGatherer(adapter, adapter.gathering);
    const otherSettings = Object.freeze({ connection_string: 'y' });
    await Promise.all([
      gatherer.deliver({ settings, sourceId: 'a' }, message('a1')),
      gatherer.deliver({ settings, sourceId: 'b' }, message('b1')),
      gatherer.deliver({ settings: otherSettings, sourceId: 'a' }, message('a2')),
      gatherer.deliver({ settings, sourceId: 'a' }, message('a3')),
    ]);
    expect(adapter.calls.map((call) => call.join(',')).sort()).toEqual(['a1,a3', 'a2', 'b1']);
  });

  it("hands the messages' stored JSON on where it was given, in the call's order", async () => {
    const adapter = new RecordingAdapter();
    const gatherer = new DeliveryGatherer(adapter, adapter.gathering);
    const stored = new TextEncoder().encode('{"messageId":"p1"}');
    await Promise.all([
      gatherer.deliver({ settings }, message('p1'), stored),
      gatherer.deliver({ settings }, message('p2')),
    ]);
    await gatherer.deliver({ settings }, message('p3'));
    expect(adapter.calls).toEqual([['p1', 'p2'], ['p3']]);
    expect(adapter.storedPayloads).toEqual([[stored, undefined], undefined]);
  });

  it('answers retry for every message of a call that rejects, and carries on', async () => {
    const adapter = new RecordingAdapter();
    const gatherer = new DeliveryGatherer(adapter, adapter.gathering);
    adapter.failWith = new Error('pool exploded');
    const failed = await Promise.all([
      gatherer.deliver({ settings }, message('x1')),
      gatherer.deliver({ settings }, message('x2')),
    ]);
    expect(failed).toEqual([
      { outcome: 'retry', reason: 'delivery failed: pool exploded' },
      { outcome: 'retry', reason: 'delivery failed: pool exploded' },
    ]);
    adapter.failWith = undefined;
    expect(await gatherer.deliver({ settings }, message('x3'))).toEqual({
      messageId: 'x3',
      outcome: 'delivered',
    });
  });
});
