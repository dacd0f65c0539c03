import { createHash } from 'node:crypto';
import { isKeptBySample, uniformHash } from './sample.decider';

describe('uniformHash', () => {
  it("is the leading bits of the MD5 of the value's JSON, read as a fraction (Segment's sampler)", () => {
    for (const value of ['user-1', 'user-2', 42, { id: 'x' }, ['a'], true]) {
      const hex = createHash('md5').update(JSON.stringify(value)).digest('hex');
      expect(Math.floor(uniformHash(value) * 2 ** 52)).toBe(parseInt(hex.slice(0, 13), 16));
    }
  });

  it('is deterministic and lies in [0, 1)', () => {
    for (let index = 0; index < 1_000; index += 1) {
      const value = `user-${index}`;
      const hash = uniformHash(value);
      expect(hash).toBeGreaterThanOrEqual(0);
      expect(hash).toBeLessThan(1);
      expect(uniformHash(value)).toBe(hash);
    }
  });

  it('distinguishes a string from the number it spells, since it hashes JSON', () => {
    expect(uniformHash('42')).not.toBe(uniformHash(42));
  });

  it('hashes a missing value as null', () => {
    expect(uniformHash(undefined)).toBe(uniformHash(null));
  });

  it('spreads values evenly over [0, 1)', () => {
    const buckets = new Array(10).fill(0);
    for (let index = 0; index < 20_000; index += 1)
      buckets[Math.floor(uniformHash(`anonymous-${index}`) * 10)] += 1;
    for (const count of buckets) {
      expect(count).toBeGreaterThan(1_800);
      expect(count).toBeLessThan(2_200);
    }
  });
});

describe('isKeptBySample', () => {
  const message = {
    userId: 'user-7',
    context: { device: { id: 'device-9' } },
    properties: { items: [{ sku: 'A' }] },
  };

  it('keeps nothing at 0 or below and everything at 1 or above', () => {
    expect(isKeptBySample(message, 0, 'userId')).toBe(false);
    expect(isKeptBySample(message, -1, 'userId')).toBe(false);
    expect(isKeptBySample(message, 1, 'userId')).toBe(true);
    expect(isKeptBySample(message, 1.5, 'userId')).toBe(true);
  });

  it('compares the hash of the value at the path with the percent', () => {
    const hash = uniformHash('user-7');
    expect(isKeptBySample(message, hash, 'userId')).toBe(false);
    expect(isKeptBySample(message, Math.min(hash + 1e-9, 0.999999), 'userId')).toBe(true);
  });

  it('follows nested paths, list indexes included', () => {
    const deviceHash = uniformHash('device-9');
    expect(isKeptBySample(message, deviceHash + 1e-9, 'context.device.id')).toBe(true);
    expect(isKeptBySample(message, deviceHash, 'context.device.id')).toBe(false);
    const skuHash = uniformHash('A');
    expect(isKeptBySample(message, skuHash + 1e-9, 'properties.items.0.sku')).toBe(true);
  });

  it('treats a path through a non-object as missing', () => {
    const nullHash = uniformHash(null);
    expect(isKeptBySample(message, nullHash + 1e-9, 'userId.length.x')).toBe(true);
    expect(isKeptBySample(message, nullHash, 'userId.length.x')).toBe(false);
  });
});
