/**
 * Deterministic sampling for `sample_event` filters.
 *
 * Segment's sampler (Go `segmentio/sampler`, mirrored by tsub's `sampleConsistentPercent`) hashes the JSON
 * encoding of the value at `path` with MD5, reads the digest's leading bits as a uniform number u in
 * [0, 1), and keeps the message when u < percent. This does the same with the first 53 bits of the digest
 * (all a double holds), so it takes the same decision as Segment's server except for values within 2⁻⁵³ of
 * the threshold.
 *
 * Why not tsub's own transformer: in @segment/tsub 2.0.1 with tiny-hashes 1.0.1, `MD5()` returns a hex
 * string where tsub expects an array of bytes, so every message is kept whatever the percent. The unit
 * tests check the rate, so a fixed tsub could be adopted again.
 *
 * Properties: the same value always gets the same answer (a user is sampled in or out as a whole, and a
 * redelivered or replayed message gets the answer it got the first time); a value kept at some percent is
 * kept at every higher one; percent ≤ 0 keeps nothing and percent ≥ 1 keeps everything. A message without
 * the field hashes as `null`, so all such messages share one outcome.
 */
import { createHash } from 'node:crypto';
import { ownValueAtPath } from './field-path';

const TWO_TO_THE_53 = 2 ** 53;

export function isKeptBySample(message: unknown, percent: number, path: string): boolean {
  if (percent <= 0) return false;
  if (percent >= 1) return true;
  return uniformHash(ownValueAtPath(message, path)) < percent;
}

/** A number in [0, 1) determined by `value` alone. */
export function uniformHash(value: unknown): number {
  const digest = createHash('md5')
    .update(JSON.stringify(value ?? null))
    .digest();
  // 32 bits from the first word and the top 21 bits of the second: 53 bits.
  const high = digest.readUInt32BE(0);
  const low = digest.readUInt32BE(4) >>> 11;
  return (high * 2 ** 21 + low) / TWO_TO_THE_53;
}
