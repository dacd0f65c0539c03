import { DeliverySlots } from './delivery-slots';

/** A delivery the test finishes by hand. */
function pendingDelivery() {
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  return { done, finish, fail };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('DeliverySlots', () => {
  it('starts deliveries at once up to its size, and the next one when a slot is released', async () => {
    const slots = new DeliverySlots(2);
    const started: string[] = [];
    const deliveries = new Map<string, ReturnType<typeof pendingDelivery>>();
    const messages = new Map(['a', 'b', 'c', 'd'].map((name) => [name, { name }]));
    const handled = [...messages.values()].map((message) =>
      slots.run(message, () => {
        started.push(message.name);
        const delivery = pendingDelivery();
        deliveries.set(message.name, delivery);
        return delivery.done;
      }),
    );
    expect(started).toEqual(['a', 'b']);

    // The outcome of b is known: c may go while b is still being settled.
    slots.release(messages.get('b')!);
    expect(started).toEqual(['a', 'b', 'c']);
    // A second release of the same message frees nothing more, nor does b's end.
    slots.release(messages.get('b')!);
    deliveries.get('b')!.finish();
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);

    // a ends without a release: its end gives the slot back.
    deliveries.get('a')!.finish();
    await flush();
    expect(started).toEqual(['a', 'b', 'c', 'd']);

    deliveries.get('c')!.finish();
    deliveries.get('d')!.fail(new Error('lost the connection'));
    const results = await Promise.allSettled(handled);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
  });

  it('gives the slot back when a delivery throws or rejects, and passes the failure on', async () => {
    const slots = new DeliverySlots(1);
    await expect(
      slots.run({}, () => {
        throw new Error('bad message');
      }),
    ).rejects.toThrow('bad message');
    await expect(slots.run({}, () => Promise.reject(new Error('no route')))).rejects.toThrow('no route');
    await flush();
    let ran = false;
    await slots.run({}, async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it('keeps the order in which messages waited', async () => {
    const slots = new DeliverySlots(1);
    const first = pendingDelivery();
    const order: number[] = [];
    void slots.run({}, () => first.done);
    const waiting = [1, 2, 3].map((index) =>
      slots.run({}, async () => {
        order.push(index);
      }),
    );
    first.finish();
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
  });

  it('refuses a size that is not a positive integer', () => {
    expect(() => new DeliverySlots(0)).toThrow(RangeError);
    expect(() => new DeliverySlots(1.5)).toThrow(RangeError);
    expect(() => new DeliverySlots(Number.NaN)).toThrow(RangeError);
  });
});
