import {
  generateAccessTokenSecret,
  generateKsuid,
  generateWorkspaceId,
  generateWriteKey,
  hashAccessToken,
  hashPassword,
  SecretBox,
  verifyPassword,
} from '@tributary/auth';
import { randomBytes } from 'node:crypto';

describe('auth primitives', () => {
  it('generates tokens in the 43.43 base64url shape and hashes them', () => {
    const token = generateAccessTokenSecret();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
    expect(hashAccessToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashAccessToken(token)).not.toContain(token);
  });

  it('verifies a password against its scrypt hash and refuses a wrong one', async () => {
    const stored = await hashPassword('correct horse');
    expect(stored).not.toContain('correct horse');
    await expect(verifyPassword('correct horse', stored)).resolves.toBe(true);
    await expect(verifyPassword('wrong horse', stored)).resolves.toBe(false);
    await expect(verifyPassword('x', 'garbage')).resolves.toBe(false);
  });

  it('does the scrypt work even without a stored hash (an unknown email), and answers false', async () => {
    const stored = await hashPassword('correct horse');
    const elapsed = async (run: () => Promise<boolean>) => {
      const started = performance.now();
      expect(await run()).toBe(false);
      return performance.now() - started;
    };
    const real: number[] = [];
    const missing: number[] = [];
    // Interleaved, medians of five: load on a shared machine falls on both alike.
    for (let round = 0; round < 5; round++) {
      real.push(await elapsed(() => verifyPassword('wrong horse', stored)));
      missing.push(await elapsed(() => verifyPassword('correct horse', undefined)));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[2];
    expect(median(missing)).toBeGreaterThan(median(real) * 0.25);
  });

  it('encrypts and decrypts secrets, and refuses a tampered ciphertext', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.encrypt('s3cret');
    expect(SecretBox.isEncrypted(sealed)).toBe(true);
    expect(sealed).not.toContain('s3cret');
    expect(box.decrypt(sealed)).toBe('s3cret');
    // Flip a bit of the decoded body: rewriting base64 characters can leave the bytes unchanged,
    // since the last character of a 34-byte payload carries only two bits.
    const prefix = sealed.slice(0, sealed.lastIndexOf(':') + 1);
    const bytes = Buffer.from(sealed.slice(prefix.length), 'base64url');
    bytes[bytes.length - 1] ^= 0x01;
    const tampered = prefix + bytes.toString('base64url');
    expect(() => box.decrypt(tampered)).toThrow();
    expect(() => new SecretBox(randomBytes(16)).decrypt(sealed)).toThrow();
  });

  it('refuses a ciphertext whose authentication tag was cut shorter than 16 bytes', () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.encrypt('');
    const prefix = sealed.slice(0, sealed.lastIndexOf(':') + 1);
    const raw = Buffer.from(sealed.slice(prefix.length), 'base64url');
    expect(raw).toHaveLength(28);
    // The IV and the first 4 bytes of the tag: GCM would check just those 32 bits if allowed to.
    const truncated = `${prefix}${raw.subarray(0, 16).toString('base64url')}`;
    expect(() => box.decrypt(truncated)).toThrow();
    expect(box.decrypt(sealed)).toBe('');
  });

  it('generates identifiers in their documented shapes', () => {
    expect(generateKsuid()).toMatch(/^[0-9A-Za-z]{27}$/);
    expect(generateWriteKey()).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(generateWorkspaceId()).toMatch(/^[0-9a-z]{10}$/);
    const earlier = generateKsuid(new Date('2020-01-01T00:00:00Z'));
    const later = generateKsuid(new Date('2024-01-01T00:00:00Z'));
    expect(earlier < later).toBe(true);
  });
});
