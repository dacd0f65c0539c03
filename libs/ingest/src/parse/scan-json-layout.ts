/**
 * One pass over the bytes of a body that `JSON.parse` has already accepted, to learn what would otherwise
 * take a walk of the parsed value plus a `JSON.stringify` of every batch item (a large share of the
 * tracking API's CPU, BENCHMARKS.md): how deep the body nests, and how many bytes each item of the
 * top-level `batch` array takes on the wire.
 *
 * It reads UTF-8 bytes, not decoded text: `"`, `\`, brackets, commas and colons are ASCII, and every byte
 * of a multi-byte UTF-8 sequence is 0x80 or above, so none can be mistaken for another. It validates
 * nothing: on bytes that are not JSON its answer is meaningless, hence "already accepted".
 */

export interface JsonLayout {
  /** Deepest nesting of objects and arrays, the body itself being level 1; the scan stops past `depthCap`. */
  maxDepth: number;
  /**
   * The array under the last top-level `"batch"` key (`JSON.parse` keeps the last of duplicate keys), or
   * null when there is none or the scan stopped early.
   */
  batchItems: BatchItemsLayout | null;
}

export interface BatchItemsLayout {
  /** Bytes of each item as sent, from its first to its last byte (the whitespace around it excluded). */
  byteLengths: number[];
  /**
   * Whether the item holds a number written with an exponent. Only such a number (`1e5`) can come out
   * longer when re-serialised (`100000`); every other token re-serialises to at most its own length.
   */
  hasExponent: boolean[];
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** The key `batch`, as the bytes between its quotes when written without escapes. */
const BATCH_KEY = [0x62, 0x61, 0x74, 0x63, 0x68];

export function scanJsonLayout(bytes: Uint8Array, depthCap: number): JsonLayout {
  const length = bytes.length;
  let depth = 0;
  let maxDepth = 0;
  // Top-level object keys: after `{` and after each `,` at level 1 comes a key.
  let topLevelIsObject = false;
  let expectingTopLevelKey = false;
  let lastTopLevelKeyIsBatch = false;
  // The batch array being scanned (it is level 2; its items start at level 2 too).
  let insideBatch = false;
  let awaitingItem = false;
  let itemStart = -1;
  let itemHasExponent = false;
  let batchItems: BatchItemsLayout | null = null;

  const endItem = (end: number): void => {
    if (itemStart < 0 || batchItems === null) return;
    let last = end - 1;
    while (last > itemStart && isWhitespace(bytes[last])) last -= 1;
    batchItems.byteLengths.push(last - itemStart + 1);
    batchItems.hasExponent.push(itemHasExponent);
    itemStart = -1;
    itemHasExponent = false;
  };

  for (let index = 0; index < length; index += 1) {
    const byte = bytes[index];
    if (awaitingItem && !isWhitespace(byte) && byte !== CLOSE_BRACKET) {
      itemStart = index;
      awaitingItem = false;
    }
    if (byte === QUOTE) {
      const start = index;
      index = closingQuote(bytes, index + 1);
      if (depth === 1 && expectingTopLevelKey) {
        lastTopLevelKeyIsBatch = isBatchKey(bytes, start + 1, index);
        expectingTopLevelKey = false;
      }
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (depth === 0) {
        topLevelIsObject = byte === OPEN_BRACE;
        expectingTopLevelKey = topLevelIsObject;
      } else if (depth === 1 && byte === OPEN_BRACKET && lastTopLevelKeyIsBatch && topLevelIsObject) {
        // A later "batch" key replaces an earlier one, as in JSON.parse.
        batchItems = { byteLengths: [], hasExponent: [] };
        insideBatch = true;
        awaitingItem = true;
      }
      depth += 1;
      if (depth > maxDepth) {
        maxDepth = depth;
        if (maxDepth > depthCap) return { maxDepth, batchItems: null };
      }
      continue;
    }
    if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      if (insideBatch && depth === 2) {
        // Only the batch array itself closes at level 2 while inside it.
        endItem(index);
        insideBatch = false;
        awaitingItem = false;
      }
      depth -= 1;
      continue;
    }
    if (byte === COMMA) {
      if (depth === 1 && topLevelIsObject) expectingTopLevelKey = true;
      else if (insideBatch && depth === 2) {
        endItem(index);
        awaitingItem = true;
      }
      continue;
    }
    // Outside strings a letter is part of true, false or null, or an exponent right after a digit.
    if (
      itemStart >= 0 &&
      (byte === LOWER_E || byte === UPPER_E) &&
      bytes[index - 1] >= DIGIT_0 &&
      bytes[index - 1] <= DIGIT_9
    ) {
      itemHasExponent = true;
    }
  }
  return { maxDepth, batchItems };
}

/**
 * The index of the quote that ends a string whose content starts at `from`. A native search finds each
 * candidate (strings are most of a body's bytes); a quote preceded by an odd run of backslashes is escaped.
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  let candidate = bytes.indexOf(QUOTE, from);
  while (candidate > 0) {
    let backslashes = 0;
    while (bytes[candidate - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return candidate;
    candidate = bytes.indexOf(QUOTE, candidate + 1);
  }
  return bytes.length;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** `start` and `end` bound the key's bytes between its quotes. */
function isBatchKey(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start === BATCH_KEY.length && BATCH_KEY.every((byte, offset) => bytes[start + offset] === byte)) {
    return true;
  }
  for (let offset = start; offset < end; offset += 1) {
    // `"b\u0061tch"` is the key "batch" too; rare enough to decode the slow way.
    if (bytes[offset] === BACKSLASH) {
      return JSON.parse(Buffer.from(bytes.subarray(start - 1, end + 1)).toString('utf8')) === 'batch';
    }
  }
  return false;
}
