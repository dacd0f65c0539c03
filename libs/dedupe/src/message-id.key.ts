import { hash } from 'node:crypto';

/** Bytes of a message id's index key: half a SHA-256, wide enough that no two ids ever collide. */
export const KEY_BYTES = 16;

/**
 * Writes the key of `messageId` at `offset` in `target`. SHA-256, not a faster non-cryptographic hash:
 * dedupe is global across tenants, so a hash whose collisions can be crafted would let one tenant
 * send ids that silence another's messages.
 */
export function writeMessageIdKey(messageId: string, target: Buffer, offset: number): void {
  // The digest as a one-byte string, written byte for byte: a short string costs less to make than the
  // Buffer (and its own ArrayBuffer) that 'buffer' output allocates per call.
  target.write(hash('sha256', messageId, 'binary'), offset, KEY_BYTES, 'latin1');
}

/** The keys of `messageIds`, packed one after another. */
export function messageIdKeys(messageIds: readonly string[]): Buffer {
  const keys = Buffer.allocUnsafe(messageIds.length * KEY_BYTES);
  for (let index = 0; index < messageIds.length; index += 1) {
    writeMessageIdKey(messageIds[index], keys, index * KEY_BYTES);
  }
  return keys;
}
