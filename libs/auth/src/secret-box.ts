import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ENCRYPTED_VALUE_PREFIX } from '@tributary/contracts';

/**
 * Encrypts destination settings of type `password` before they enter an event (AES-256-GCM with
 * the deployment key), so the event store never holds them in plaintext.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the deployment key must be 32 bytes');
  }

  static isEncrypted(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(ENCRYPTED_VALUE_PREFIX);
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ENCRYPTED_VALUE_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** A key for another purpose, derived from the deployment key, so one secret protects everything. */
  deriveKey(purpose: string): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.key, Buffer.alloc(0), `tributary:${purpose}`, 32));
  }

  /**
   * Setting values with encrypted ones in plaintext, including the values of map settings (webhook
   * headers): for delivery code only, never for responses.
   */
  revealAll(values: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, this.revealSetting(value)]));
  }

  private revealSetting(value: unknown): unknown {
    if (SecretBox.isEncrypted(value)) return this.decrypt(value);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const entries = Object.entries(value);
    if (!entries.some(([, inner]) => SecretBox.isEncrypted(inner))) return value;
    return Object.fromEntries(
      entries.map(([name, inner]) => [name, SecretBox.isEncrypted(inner) ? this.decrypt(inner) : inner]),
    );
  }

  decrypt(value: string): string {
    if (!SecretBox.isEncrypted(value)) return value;
    const raw = Buffer.from(value.slice(ENCRYPTED_VALUE_PREFIX.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/**
 * The deployment key: `TRIBUTARY_SECRET_KEY` (64 hex characters) when set, else a key file created
 * once beside the data (mode 0600). Losing it makes stored destination passwords unreadable.
 */
export function loadDeploymentKey(options: { secretKeyHex?: string; keyFile: string }): Buffer {
  if (options.secretKeyHex) return Buffer.from(options.secretKeyHex, 'hex');
  if (existsSync(options.keyFile)) return Buffer.from(readFileSync(options.keyFile, 'utf8').trim(), 'hex');
  mkdirSync(dirname(options.keyFile), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(options.keyFile, key.toString('hex'), { mode: 0o600 });
  chmodSync(options.keyFile, 0o600);
  return key;
}
