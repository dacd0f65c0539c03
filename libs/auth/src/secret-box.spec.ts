import { createCipheriv, randomBytes } from 'node:crypto';
import { loadSecretBox, SecretBox, secretKeyId, secretPlace, UnknownSecretKeyError } from '@tributary/auth';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A ciphertext as the secret box wrote it before key ids: `enc:v1:<iv|tag|body>`, no additional data. */
function legacyCiphertext(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `enc:v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

describe('SecretBox key ids and rotation', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('writes the key id into every ciphertext, and keeps the enc:v1: prefix that masking looks for', () => {
    const box = new SecretBox(newKey);
    const sealed = box.encrypt('s3cret');
    expect(sealed).toMatch(new RegExp(`^enc:v1:${secretKeyId(newKey)}:[A-Za-z0-9_-]+$`));
    expect(secretKeyId(newKey)).toMatch(/^[0-9a-f]{8}$/);
    expect(secretKeyId(newKey)).not.toBe(secretKeyId(oldKey));
    expect(box.decrypt(sealed)).toBe('s3cret');
  });

  it('decrypts values of the previous key after a rotation, and encrypts new ones with the new key', () => {
    const before = new SecretBox(oldKey).encrypt('written before the rotation');
    const rotated = new SecretBox(newKey, [oldKey]);
    expect(rotated.decrypt(before)).toBe('written before the rotation');
    const after = rotated.encrypt('written after');
    expect(after).toContain(`:${secretKeyId(newKey)}:`);
    expect(rotated.keyIds).toEqual({ current: secretKeyId(newKey), previous: [secretKeyId(oldKey)] });
    // Once the old key is dropped, the new values still decrypt; the old ones name the missing key.
    const retired = new SecretBox(newKey);
    expect(retired.decrypt(after)).toBe('written after');
    expect(() => retired.decrypt(before)).toThrow(UnknownSecretKeyError);
    expect(() => retired.decrypt(before)).toThrow(secretKeyId(oldKey));
  });

  it('still decrypts ciphertexts written before key ids existed, with the current or a previous key', () => {
    expect(new SecretBox(oldKey).decrypt(legacyCiphertext(oldKey, 'legacy'))).toBe('legacy');
    expect(new SecretBox(newKey, [oldKey]).decrypt(legacyCiphertext(oldKey, 'legacy'))).toBe('legacy');
    expect(() => new SecretBox(newKey).decrypt(legacyCiphertext(oldKey, 'legacy'))).toThrow();
  });

  it('binds the key id to the ciphertext: another id on the same bytes fails authentication', () => {
    const box = new SecretBox(newKey, [oldKey]);
    const sealed = box.encrypt('bound');
    const relabelled = sealed.replace(secretKeyId(newKey), secretKeyId(oldKey));
    expect(() => box.decrypt(relabelled)).toThrow();
    const legacyShaped = sealed.replace(`${secretKeyId(newKey)}:`, '');
    expect(() => box.decrypt(legacyShaped)).toThrow();
  });

  it('binds a value encrypted for a place to that place: it opens there only', () => {
    const box = new SecretBox(newKey);
    const here = secretPlace('destinations/src1/webhooks', 'shared_secret');
    const sealed = box.encrypt('s3cret', here);
    expect(sealed).toMatch(new RegExp(`^enc:v1:${secretKeyId(newKey)}:p:[A-Za-z0-9_-]+$`));
    expect(box.decrypt(sealed, here)).toBe('s3cret');
    // Another destination, another setting of the same one, or no place at all: refused.
    expect(() => box.decrypt(sealed, secretPlace('destinations/src2/webhooks', 'shared_secret'))).toThrow();
    expect(() => box.decrypt(sealed, secretPlace('destinations/src1/webhooks', 'url'))).toThrow();
    expect(() => box.decrypt(sealed)).toThrow(/bound to a place/);
    // Dropping the mark does not turn it into a value that opens anywhere.
    expect(() => box.decrypt(sealed.replace(':p:', ':'))).toThrow();
    expect(() => box.decrypt(sealed.replace(':p:', ':'), here)).toThrow();
  });

  it('still opens values written before places were bound, wherever they are read', () => {
    const box = new SecretBox(newKey, [oldKey]);
    const unbound = new SecretBox(oldKey).encrypt('older');
    expect(box.decrypt(unbound, secretPlace('destinations/src1/webhooks', 'shared_secret'))).toBe('older');
    expect(box.decrypt(legacyCiphertext(oldKey, 'oldest'), secretPlace('x', 'y'))).toBe('oldest');
  });

  it('reveals settings for their owner at any depth, copying only what held a secret', () => {
    const box = new SecretBox(newKey);
    const owner = 'destinations/src1/actions-webhook';
    const untouched = { subscribe: 'type = "track"' };
    const config = {
      apiKey: box.encrypt('k', secretPlace(owner, 'apiKey')),
      plain: 'visible',
      subscriptions: [
        untouched,
        {
          mapping: {
            headers: { Authorization: box.encrypt('Bearer t', secretPlace(owner, 'subscriptions')) },
          },
        },
      ],
    };
    const revealed = box.revealAll(config, owner);
    expect(revealed).toEqual({
      apiKey: 'k',
      plain: 'visible',
      subscriptions: [untouched, { mapping: { headers: { Authorization: 'Bearer t' } } }],
    });
    expect((revealed.subscriptions as unknown[])[0]).toBe(untouched);
    expect(() => box.revealAll(config, 'destinations/src2/actions-webhook')).toThrow();
    let deep: unknown = box.encrypt('bottom', secretPlace(owner, 'nested'));
    for (let level = 0; level < 100_000; level += 1) deep = { level: deep };
    let bottom: unknown = box.revealAll({ nested: deep }, owner).nested;
    while (typeof bottom === 'object' && bottom !== null) bottom = (bottom as { level: unknown }).level;
    expect(bottom).toBe('bottom');
  });

  it('refuses a key id that is not one', () => {
    const box = new SecretBox(newKey);
    expect(() => box.decrypt(`enc:v1:${'x'.repeat(500)}:AAAA`)).toThrow(UnknownSecretKeyError);
  });

  it('loads the previous keys from TRIBUTARY_PREVIOUS_SECRET_KEYS beside the key file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'tributary-secret-box-'));
    try {
      const keyFile = join(directory, 'deployment.key');
      writeFileSync(keyFile, newKey.toString('hex'));
      const box = loadSecretBox({
        keyFile,
        previousKeysHex: ` ${oldKey.toString('hex')} , ${randomBytes(32).toString('hex')}`,
      });
      expect(box.keyIds.current).toBe(secretKeyId(newKey));
      expect(box.keyIds.previous).toHaveLength(2);
      expect(box.decrypt(new SecretBox(oldKey).encrypt('x'))).toBe('x');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
