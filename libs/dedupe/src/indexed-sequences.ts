/**
 * Which log sequences the dedupe index holds: every sequence up to `contiguous`, plus ranges above it.
 * The index learns sequences from two places, in no common order: the acknowledgements of this
 * replica's own appends, and the log follower (which reads everything from some sequence on). Only
 * `contiguous` may become the index's checkpoint: a restart resumes reading the log after it, so a
 * message above it that the index does not hold (another replica's, or one of ours whose record was
 * lost in a crash) is read again rather than skipped.
 *
 * Pure and synchronous; the ranges above `contiguous` are few (one per append batch in flight, or per
 * other writer's run of messages between ours), so a sorted array is enough.
 */
export class IndexedSequences {
  private covered: number;
  /** Disjoint, non-adjacent, sorted ranges above `covered + 1`. */
  private readonly ranges: Array<{ from: number; to: number }> = [];

  constructor(contiguous: number) {
    this.covered = contiguous;
  }

  /** Every sequence up to this one is indexed. */
  get contiguous(): number {
    return this.covered;
  }

  /** The highest sequence indexed, contiguous or not. */
  get highest(): number {
    return this.ranges.length > 0 ? this.ranges[this.ranges.length - 1].to : this.covered;
  }

  /** Every sequence up to `sequence` is indexed (the follower read the log that far). */
  coverUpTo(sequence: number): void {
    if (sequence <= this.covered) return;
    this.covered = sequence;
    this.absorb();
  }

  /** These sequences are indexed (one append's acknowledgements, in any order). */
  addAll(sequences: ArrayLike<number>): void {
    for (let index = 0; index < sequences.length; index += 1) {
      const from = sequences[index];
      let to = from;
      // Appends are mostly runs of consecutive sequences: add each run as one range.
      while (index + 1 < sequences.length && sequences[index + 1] === to + 1) {
        to += 1;
        index += 1;
      }
      this.add(from, to);
    }
  }

  /** `from..to` (inclusive) are indexed. */
  add(from: number, to: number): void {
    if (to <= this.covered) return;
    from = Math.max(from, this.covered + 1);
    // Find the first range that ends at or after from - 1 (it may touch or overlap the new one).
    let position = this.ranges.length;
    while (position > 0 && this.ranges[position - 1].to >= from - 1) position -= 1;
    let end = position;
    while (end < this.ranges.length && this.ranges[end].from <= to + 1) {
      from = Math.min(from, this.ranges[end].from);
      to = Math.max(to, this.ranges[end].to);
      end += 1;
    }
    this.ranges.splice(position, end - position, { from, to });
    this.absorb();
  }

  /** Moves `covered` over the ranges that now start right after it. */
  private absorb(): void {
    while (this.ranges.length > 0 && this.ranges[0].from <= this.covered + 1) {
      this.covered = Math.max(this.covered, this.ranges[0].to);
      this.ranges.shift();
    }
  }
}
