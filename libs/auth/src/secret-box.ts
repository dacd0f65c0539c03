import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ENCRYPTED_VALUE_PREFIX } from '@tributary/contracts';

const KEY_ID_PATTERN = /^[0-9a-f]{8}$/;

/** A ciphertext names a key this box does not hold: the key was rotated out too early. */
export class UnknownSecretKeyError extends Error {
  constructor(readonly keyId: string) {
    super(
      `a secret was encrypted with key id ${keyId}, which is neither TRIBUTARY_SECRET_KEY nor one of ` +
        'TRIBUTARY_PREVIOUS_SECRET_KEYS',
    );
    this.name = 'UnknownSecretKeyError';
  }
}

/**
 * The id of a key: 8 hex characters of an HMAC of the key, so it names the key without telling
 * anything about it. Shown in logs to say which keys a process holds.
 */
export function secretKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('tributary:secret-box:key-id').digest('hex').slice(0, 8);
}

/**
 * Encrypts destination settings of type `password` before they enter an event (AES-256-GCM with
 * the deployment key), so the event store never holds them in plaintext.
 *
 * A ciphertext is `enc:v1:<key id>:<iv|tag|body, base64url>`, with the key id also authenticated
 * (GCM's additional data), so the deployment key can be rotated: the box encrypts with the current
 * key and decrypts with whichever of its keys the ciphertext names. Ciphertexts written before key
 * ids existed (`enc:v1:<iv|tag|body>`, no second colon) are tried with every key, current first.
 */
export class SecretBox {
  private readonly keyId: string;
  private readonly keysById = new Map<string, Buffer>();

  constructor(
    private readonly key: Buffer,
    /** Keys that encrypted earlier values and still decrypt them (`TRIBUTARY_PREVIOUS_SECRET_KEYS`). */
    previousKeys: Buffer[] = [],
  ) {
    for (const each of [key, ...previousKeys]) {
      if (each.length !== 32) throw new Error('the deployment key must be 32 bytes');
      if (!this.keysById.has(secretKeyId(each))) this.keysById.set(secretKeyId(each), each);
    }
    this.keyId = secretKeyId(key);
  }

  static isEncrypted(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(ENCRYPTED_VALUE_PREFIX);
  }

  /** The id of the key new values are encrypted with, then of the keys kept for decryption. */
  get keyIds(): { current: string; previous: string[] } {
    return { current: this.keyId, previous: [...this.keysById.keys()].filter((id) => id !== this.keyId) };
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(additionalData(this.keyId));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    return `${ENCRYPTED_VALUE_PREFIX}${this.keyId}:${sealed}`;
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
    const rest = value.slice(ENCRYPTED_VALUE_PREFIX.length);
    const separator = rest.indexOf(':');
    if (separator < 0) return this.decryptLegacy(rest);
    const keyId = rest.slice(0, separator);
    const key = KEY_ID_PATTERN.test(keyId) ? this.keysById.get(keyId) : undefined;
    if (!key) throw new UnknownSecretKeyError(keyId.slice(0, 16));
    return open(key, Buffer.from(rest.slice(separator + 1), 'base64url'), additionalData(keyId));
  }

  private decryptLegacy(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64url');
    let failure: unknown;
    for (const key of this.keysById.values()) {
      try {
        return open(key, raw, undefined);
      } catch (error) {
        failure = error;
      }
    }
    throw failure;
  }
}

function additionalData(keyId: string): Buffer {
  return Buffer.from(`tributary:secret-box:${keyId}`, 'utf8');
}

/** Bytes of the GCM tag every value carries: a shorter one would be easier to forge, so none is accepted. */
const AUTH_TAG_BYTES = 16;

function open(key: Buffer, raw: Buffer, aad: Buffer | undefined): string {
  if (raw.length < 12 + AUTH_TAG_BYTES) throw new Error('the encrypted value is cut short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12), {
    authTagLength: AUTH_TAG_BYTES,
  });
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

export interface DeploymentKeyOptions {
  secretKeyHex?: string;
  /** `TRIBUTARY_PREVIOUS_SECRET_KEYS`: 64-hex keys, comma-separated, that still decrypt. */
  previousKeysHex?: string;
  keyFile: string;
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

/** The deployment's secret box: the current key, and the previous ones kept for decryption. */
export function loadSecretBox(options: DeploymentKeyOptions): SecretBox {
  const previous = (options.previousKeysHex ?? '')
    .split(',')
    .map((hex) => hex.trim())
    .filter(Boolean)
    .map((hex) => Buffer.from(hex, 'hex'));
  return new SecretBox(loadDeploymentKey(options), previous);
}
