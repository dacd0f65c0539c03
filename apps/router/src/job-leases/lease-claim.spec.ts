import { nextClaimStep } from './lease-claim';

const TTL = 10_000;
const me = 'router-b';

describe('nextClaimStep', () => {
  it('creates a lease nobody wrote yet', () => {
    expect(nextClaimStep(null, undefined, 0, TTL, me)).toEqual({ kind: 'take', expectedRevision: 0 });
  });

  it('takes a released lease at once, over its revision, keeping nothing of its sightings', () => {
    const released = { holder: '', data: { counts: {} }, revision: 7 };
    expect(nextClaimStep(released, { revision: 7, sinceMs: 5 }, 6, TTL, me)).toEqual({
      kind: 'take',
      expectedRevision: 7,
    });
  });

  it('takes back a lease recorded as its own', () => {
    const ours = { holder: me, data: {}, revision: 3 };
    expect(nextClaimStep(ours, undefined, 0, TTL, me)).toEqual({ kind: 'take', expectedRevision: 3 });
  });

  it('says done for a lease its last holder marked done, whoever holds it', () => {
    expect(nextClaimStep({ holder: '', data: { done: true }, revision: 9 }, undefined, 0, TTL, me)).toEqual({
      kind: 'done',
    });
  });

  it('waits while the holder keeps writing, and takes over after a whole TTL of silence', () => {
    const held = { holder: 'router-a', data: {}, revision: 4 };
    const first = nextClaimStep(held, undefined, 1_000, TTL, me);
    expect(first).toEqual({ kind: 'wait', sighting: { revision: 4, sinceMs: 1_000 } });
    const sighting = first.kind === 'wait' ? first.sighting : undefined;

    // Still the same revision, not yet a TTL later: keep the first sighting's time.
    expect(nextClaimStep(held, sighting, 1_000 + TTL - 1, TTL, me)).toEqual({ kind: 'wait', sighting });
    // The holder wrote again: the silence starts over from this sighting.
    const renewed = { ...held, revision: 5 };
    expect(nextClaimStep(renewed, sighting, 1_000 + TTL + 5, TTL, me)).toEqual({
      kind: 'wait',
      sighting: { revision: 5, sinceMs: 1_000 + TTL + 5 },
    });
    // Unchanged for a whole TTL: the holder is presumed gone.
    expect(nextClaimStep(held, sighting, 1_000 + TTL, TTL, me)).toEqual({
      kind: 'take',
      expectedRevision: 4,
    });
  });
});
