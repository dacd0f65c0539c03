import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const LOWER_ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyz';
// KSUIDs count seconds from this epoch (2014-05-13T16:53:20Z).
const KSUID_EPOCH_SECONDS = 1_400_000_000;

/** A 27-character KSUID: 4 bytes of time and 16 random bytes in base62, sortable by creation time. */
export function generateKsuid(now: Date = new Date()): string {
  const bytes = Buffer.alloc(20);
  bytes.writeUInt32BE(Math.floor(now.getTime() / 1000) - KSUID_EPOCH_SECONDS, 0);
  randomBytes(16).copy(bytes, 4);
  let value = BigInt('0x' + bytes.toString('hex'));
  let encoded = '';
  while (value > 0n) {
    encoded = BASE62[Number(value % 62n)] + encoded;
    value /= 62n;
  }
  return encoded.padStart(27, '0');
}

function randomFrom(alphabet: string, length: number): string {
  // Rejection sampling keeps every character equally likely.
  const limit = 256 - (256 % alphabet.length);
  let result = '';
  while (result.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && result.length < length) result += alphabet[byte % alphabet.length];
    }
  }
  return result;
}

/** Source write keys: 32 alphanumerics, e.g. `LxKXARX9IuqR9v0gn7y2Fw1iHi0ephbF`. */
export const generateWriteKey = () => randomFrom(BASE62, 32);

/** Workspace ids: 10 lower-case alphanumerics, e.g. `e5bdb0902b`. */
export const generateWorkspaceId = () => randomFrom(LOWER_ALPHANUMERIC, 10);

export const generateSourceId = () => randomFrom(LOWER_ALPHANUMERIC, 16);
