/**
 * Bits of filter per key: about 0.004 % false positives for a split-block Bloom filter (14 bits give
 * about 0.26 %). A lookup tests every live bucket (24 in a day's window) for each id of a batch, and
 * one false positive sends the batch's candidates to the worker, queued behind its commits; so the
 * filters trade 4 bytes of RAM per id for publishes that almost never wait for the worker.
 */
export const FILTER_BITS_PER_KEY = 32;

/** Eight odd constants (as in Parquet's split-block Bloom filter) spread one 32-bit hash over eight words. */
const SALTS = new Int32Array([
  0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
]);
const WORDS_PER_BLOCK = 8;
const TWO_TO_32 = 4_294_967_296;

/** A filter's bits as another thread sees them: the shared memory and the capacity it was sized for. */
export interface SharedFilterBits {
  capacity: number;
  words: SharedArrayBuffer;
}

/**
 * A split-block Bloom filter over keys that are already uniform hashes (the first 8 bytes of a
 * message id's key): the key's bytes are the hash, so a test costs one cache line and no hashing. Each
 * key sets one bit in each of the eight 32-bit words of one 256-bit block.
 *
 * The bits live in a SharedArrayBuffer, so the thread that serves HTTP can test them while the index's
 * own thread adds keys. A reader racing a writer sees each 32-bit word either before or after a bit was
 * set (aligned 32-bit accesses do not tear), so it can only miss a key added a moment ago, one that the
 * writer has not reported as indexed yet.
 */
export class SplitBlockBloomFilter {
  private readonly words: Int32Array;
  private readonly blocks: number;
  private size = 0;

  /** `shared`: the bits of a filter built by another thread (to test only). */
  constructor(
    readonly capacity: number,
    shared?: SharedArrayBuffer,
  ) {
    this.blocks = Math.max(1, Math.ceil((capacity * FILTER_BITS_PER_KEY) / (WORDS_PER_BLOCK * 32)));
    this.words = new Int32Array(shared ?? new SharedArrayBuffer(this.blocks * WORDS_PER_BLOCK * 4));
    if (this.words.length !== this.blocks * WORDS_PER_BLOCK)
      throw new RangeError('the shared filter bits do not match the capacity');
  }

  get shared(): SharedFilterBits {
    return { capacity: this.capacity, words: this.words.buffer as SharedArrayBuffer };
  }

  get keys(): number {
    return this.size;
  }

  get full(): boolean {
    return this.size >= this.capacity;
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  /** Adds the key whose 8 hash bytes start at `offset` in `keys`. */
  add(keys: Uint8Array, offset: number): void {
    const base = this.blockOf(keys, offset);
    const hash = readInt32(keys, offset + 4);
    for (let word = 0; word < WORDS_PER_BLOCK; word += 1) {
      this.words[base + word] |= 1 << (Math.imul(hash, SALTS[word]) >>> 27);
    }
    this.size += 1;
  }

  /** False: the key was never added. True: it may have been. */
  mayContain(keys: Uint8Array, offset: number): boolean {
    const base = this.blockOf(keys, offset);
    const hash = readInt32(keys, offset + 4);
    for (let word = 0; word < WORDS_PER_BLOCK; word += 1) {
      const bit = 1 << (Math.imul(hash, SALTS[word]) >>> 27);
      if ((this.words[base + word] & bit) === 0) return false;
    }
    return true;
  }

  private blockOf(keys: Uint8Array, offset: number): number {
    // Multiply-high instead of modulo: maps the 32-bit hash onto [0, blocks) evenly.
    return Math.floor(((readInt32(keys, offset) >>> 0) * this.blocks) / TWO_TO_32) * WORDS_PER_BLOCK;
  }
}

function readInt32(bytes: Uint8Array, offset: number): number {
  return bytes[offset] | (bytes[offset + 1] << 8) | (bytes[offset + 2] << 16) | (bytes[offset + 3] << 24);
}

/**
 * The filters of one bucket: a chain whose capacities double, so a bucket needs no size guess up
 * front and a quiet bucket stays small. A test checks each filter of the chain (a handful at most).
 */
export class GrowingBloomFilter {
  private readonly chain: SplitBlockBloomFilter[];

  constructor(
    private readonly initialCapacity: number,
    chain?: SplitBlockBloomFilter[],
  ) {
    this.chain = chain ?? [new SplitBlockBloomFilter(initialCapacity)];
  }

  /** A view of a chain another thread builds (its `shared`), for tests only. */
  static fromShared(chain: readonly SharedFilterBits[]): GrowingBloomFilter {
    return new GrowingBloomFilter(
      chain[0]?.capacity ?? 1,
      chain.map((bits) => new SplitBlockBloomFilter(bits.capacity, bits.words)),
    );
  }

  /** Adds the key; true when it went into a new filter of the chain (the shared layout changed). */
  add(keys: Uint8Array, offset: number): boolean {
    let last = this.chain[this.chain.length - 1];
    let grew = false;
    if (last.full) {
      last = new SplitBlockBloomFilter(Math.max(this.initialCapacity, last.capacity * 2));
      this.chain.push(last);
      grew = true;
    }
    last.add(keys, offset);
    return grew;
  }

  get shared(): SharedFilterBits[] {
    return this.chain.map((filter) => filter.shared);
  }

  mayContain(keys: Uint8Array, offset: number): boolean {
    for (let index = this.chain.length - 1; index >= 0; index -= 1) {
      if (this.chain[index].mayContain(keys, offset)) return true;
    }
    return false;
  }

  get keys(): number {
    return this.chain.reduce((sum, filter) => sum + filter.keys, 0);
  }

  get bytes(): number {
    return this.chain.reduce((sum, filter) => sum + filter.bytes, 0);
  }
}
