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
 *
 * A value encrypted for a place (`secretPlace`: a destination and the setting that holds it) is
 * `enc:v1:<key id>:p:<iv|tag|body>`, and the place is authenticated with the key id: the value opens
 * only where it was written. Copied into another destination or setting (by anyone who can append
 * events, or restore a backup into another workspace) it fails authentication instead of being
 * delivered to that destination's target. Values written before places were bound still open anywhere.
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

  /** Encrypts `plaintext`; with a `place` (`secretPlace`), it opens only at that place. */
  encrypt(plaintext: string, place?: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: AUTH_TAG_BYTES });
    cipher.setAAD(additionalData(this.keyId, place));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const sealed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    return `${ENCRYPTED_VALUE_PREFIX}${this.keyId}:${place === undefined ? '' : PLACE_MARK}${sealed}`;
  }

  /** A key for another purpose, derived from the deployment key, so one secret protects everything. */
  deriveKey(purpose: string): Uint8Array {
    return new Uint8Array(hkdfSync('sha256', this.key, Buffer.alloc(0), `tributary:${purpose}`, 32));
  }

  /**
   * Setting values with encrypted ones in plaintext, at any depth (webhook headers, the headers of an
   * Actions subscription's mapping): for delivery code only, never for responses. `owner` names the
   * settings' holder (`destinationSecretsOwner`): each setting's values open at
   * `secretPlace(owner, key)`.
   */
  revealAll(values: Record<string, unknown>, owner?: string): Record<string, unknown> {
    return Object.fromEntries(
      Object.entries(values).map(([key, value]) => [
        key,
        this.revealDeep(value, owner === undefined ? undefined : secretPlace(owner, key)),
      ]),
    );
  }

  /**
   * The value with every encrypted string in it decrypted (for `place`); containers with nothing
   * encrypted under them are shared, not copied. Iterative (a stack of frames, children finished
   * before their parent), so no stored value can overflow the call stack.
   */
  private revealDeep(value: unknown, place: string | undefined): unknown {
    if (SecretBox.isEncrypted(value)) return this.decrypt(value, place);
    if (typeof value !== 'object' || value === null) return value;
    interface Frame {
      container: object;
      entries: [string, unknown][];
      next: number;
      results: unknown[];
      changed: boolean;
    }
    const frameOf = (container: object): Frame => ({
      container,
      entries: Object.entries(container),
      next: 0,
      results: [],
      changed: false,
    });
    const stack: Frame[] = [frameOf(value)];
    let finished: { value: unknown; changed: boolean } | undefined;
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      if (finished !== undefined) {
        frame.results.push(finished.value);
        frame.changed ||= finished.changed;
        finished = undefined;
        frame.next += 1;
      }
      if (frame.next < frame.entries.length) {
        const inner = frame.entries[frame.next]![1];
        if (typeof inner === 'object' && inner !== null) {
          stack.push(frameOf(inner));
          continue;
        }
        const encrypted = SecretBox.isEncrypted(inner);
        finished = { value: encrypted ? this.decrypt(inner, place) : inner, changed: encrypted };
        continue;
      }
      stack.pop();
      if (!frame.changed) {
        finished = { value: frame.container, changed: false };
      } else if (Array.isArray(frame.container)) {
        finished = { value: frame.results, changed: true };
      } else {
        finished = {
          value: Object.fromEntries(frame.entries.map(([name], index) => [name, frame.results[index]])),
          changed: true,
        };
      }
    }
    return finished!.value;
  }

  /**
   * The plaintext of `value` (anything not encrypted is returned as it is). A value encrypted for a
   * place opens only with that `place`; other values open with or without one.
   */
  decrypt(value: string, place?: string): string {
    if (!SecretBox.isEncrypted(value)) return value;
    const rest = value.slice(ENCRYPTED_VALUE_PREFIX.length);
    const separator = rest.indexOf(':');
    if (separator < 0) return this.decryptLegacy(rest);
    const keyId = rest.slice(0, separator);
    const key = KEY_ID_PATTERN.test(keyId) ? this.keysById.get(keyId) : undefined;
    if (!key) throw new UnknownSecretKeyError(keyId.slice(0, 16));
    const sealed = rest.slice(separator + 1);
    if (!sealed.startsWith(PLACE_MARK))
      return open(key, Buffer.from(sealed, 'base64url'), additionalData(keyId));
    if (place === undefined) throw new Error('the encrypted value is bound to a place, and none was given');
    return open(key, Buffer.from(sealed.slice(PLACE_MARK.length), 'base64url'), additionalData(keyId, place));
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

/** Marks a ciphertext whose additional data names its place (base64url never holds a colon). */
const PLACE_MARK = 'p:';

function additionalData(keyId: string, place?: string): Buffer {
  return Buffer.from(
    place === undefined ? `tributary:secret-box:${keyId}` : `tributary:secret-box:${keyId}:place:${place}`,
    'utf8',
  );
}

/**
 * Where a secret is kept: its holder (`destinationSecretsOwner`) and the setting's key. A value
 * encrypted for one place does not open at another.
 */
export function secretPlace(owner: string, settingKey: string): string {
  return `${owner}/config/${settingKey}`;
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
