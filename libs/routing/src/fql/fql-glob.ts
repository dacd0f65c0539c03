/**
 * FQL's `match(value, glob)`: `*` any run of characters, `?` one character, `[a-z]`, `[^0-9]` one
 * character of a class, `\` escapes the next character. Same verdicts as `@segment/tsub`'s
 * `globMatches` (a port of Segment's Go `glob` package), including on malformed globs (they match
 * nothing), held to it by a property test.
 *
 * tsub retries every chunk between stars at every position by slicing strings: O(glob × value),
 * seconds for a 10 KB glob against a 32 KB value, on the router's event loop. Here a glob is
 * compiled once into fixed-width chunks, and each chunk is placed once: the leftmost place at or
 * after the previous chunk (for the last chunk, the place that ends the value). Placing a chunk of
 * literals is a string search (`indexOf`, linear in V8); a chunk with `?` or classes is placed by a
 * bit-parallel scan (`leftmost`), one pass over the value. The glob is at most
 * `MAX_MATCH_GLOB_LENGTH` characters, which bounds a chunk's width, hence the work per character.
 */

/** Longest glob `match()` takes: refused above this when written, and matching nothing when read from a message. */
export const MAX_MATCH_GLOB_LENGTH = 256;

type Unit =
  | { readonly kind: 'literal'; readonly code: number }
  | { readonly kind: 'any' }
  | {
      readonly kind: 'class';
      readonly negated: boolean;
      readonly ranges: readonly (readonly [number, number])[];
    };

interface Chunk {
  /** A `*` comes before the chunk. */
  readonly star: boolean;
  readonly units: readonly Unit[];
  /** The chunk as a plain string when it holds literals only: then it is searched with `indexOf`. */
  readonly literal: string | undefined;
  readonly masks: ChunkMasks;
}

/** A compiled glob: its chunks, or null when the glob is malformed (it matches nothing). */
export type CompiledGlob = readonly Chunk[] | null;

const compiledGlobs = new Map<string, CompiledGlob>();
const COMPILED_GLOB_CACHE_LIMIT = 1_000;

export function globMatches(glob: string, value: string): boolean {
  if (glob.length > MAX_MATCH_GLOB_LENGTH) return false;
  let compiled = compiledGlobs.get(glob);
  if (compiled === undefined) {
    compiled = compileGlob(glob);
    if (compiledGlobs.size >= COMPILED_GLOB_CACHE_LIMIT) compiledGlobs.clear();
    compiledGlobs.set(glob, compiled);
  }
  return compiled !== null && matchesCompiled(compiled, value);
}

function matchesCompiled(chunks: readonly Chunk[], value: string): boolean {
  let position = 0;
  for (let index = 0; index < chunks.length; index += 1) {
    const { star, units, literal } = chunks[index];
    const last = index === chunks.length - 1;
    // Only trailing stars leave an empty chunk: they match the rest of the value.
    if (star && units.length === 0) return true;
    if (!star || last) {
      // No star: the chunk sits where the previous one ended. The last chunk after a star ends the value.
      const at = star ? value.length - units.length : position;
      if (at < position || !matchesAt(units, value, at)) return false;
      position = at + units.length;
      if (last && position !== value.length) return false;
      continue;
    }
    const at =
      literal !== undefined ? value.indexOf(literal, position) : leftmost(chunks[index], value, position);
    if (at < 0) return false;
    position = at + units.length;
  }
  return position === value.length;
}

/**
 * The leftmost place at or after `from` where the chunk matches: Shift-And, one pass over the value
 * with one bit per unit of the chunk (bit j set after reading character i: units 0..j match the
 * characters ending at i), so the work is value × (chunk width / 32) rather than value × width.
 */
function leftmost(chunk: Chunk, value: string, from: number): number {
  const width = chunk.units.length;
  const words = (width + 31) >>> 5;
  const lastWord = (width - 1) >>> 5;
  const lastBit = 1 << ((width - 1) & 31);
  const state = new Uint32Array(words);
  const classMasks = new Map<number, Uint32Array>();
  for (let index = from; index < value.length; index += 1) {
    const mask = maskFor(chunk, value.charCodeAt(index), classMasks);
    let carry = 1;
    for (let word = 0; word < words; word += 1) {
      const bits = state[word];
      state[word] = ((bits << 1) | carry) & mask[word];
      carry = bits >>> 31;
    }
    if (state[lastWord] & lastBit) return index - width + 1;
  }
  return -1;
}

/** The units of the chunk that match the character, as bits. */
function maskFor(chunk: Chunk, code: number, classMasks: Map<number, Uint32Array>): Uint32Array {
  const base = chunk.masks.literal.get(code) ?? chunk.masks.any;
  if (chunk.masks.classes.length === 0) return base;
  let mask = classMasks.get(code);
  if (!mask) {
    mask = base.slice();
    for (const position of chunk.masks.classes) {
      if (unitMatches(chunk.units[position], code)) mask[position >>> 5] |= 1 << (position & 31);
    }
    classMasks.set(code, mask);
  }
  return mask;
}

/** Per chunk: the bits of `?` units, of the literal units per character, and where the classes are. */
interface ChunkMasks {
  readonly any: Uint32Array;
  readonly literal: ReadonlyMap<number, Uint32Array>;
  readonly classes: readonly number[];
}

function masksOf(units: readonly Unit[]): ChunkMasks {
  const words = (units.length + 31) >>> 5;
  const any = new Uint32Array(words);
  const classes: number[] = [];
  units.forEach((unit, position) => {
    if (unit.kind === 'any') any[position >>> 5] |= 1 << (position & 31);
    if (unit.kind === 'class') classes.push(position);
  });
  const literal = new Map<number, Uint32Array>();
  units.forEach((unit, position) => {
    if (unit.kind !== 'literal') return;
    let mask = literal.get(unit.code);
    if (!mask) literal.set(unit.code, (mask = any.slice()));
    mask[position >>> 5] |= 1 << (position & 31);
  });
  return { any, literal, classes };
}

function unitMatches(unit: Unit, code: number): boolean {
  if (unit.kind === 'literal') return unit.code === code;
  if (unit.kind === 'any') return true;
  let found = false;
  for (const [low, high] of unit.ranges) {
    if (low <= code && code <= high) {
      found = true;
      break;
    }
  }
  return found !== unit.negated;
}

function matchesAt(units: readonly Unit[], value: string, at: number): boolean {
  if (at + units.length > value.length) return false;
  for (let offset = 0; offset < units.length; offset += 1) {
    if (!unitMatches(units[offset], value.charCodeAt(at + offset))) return false;
  }
  return true;
}

/** The chunks of `glob`, split as tsub's `scanChunk` splits them; null when a chunk is malformed. */
export function compileGlob(glob: string): CompiledGlob {
  const chunks: Chunk[] = [];
  let rest = glob;
  while (rest.length > 0) {
    let star = false;
    while (rest.startsWith('*')) {
      rest = rest.slice(1);
      star = true;
    }
    let inRange = false;
    let end = 0;
    scan: for (; end < rest.length; end += 1) {
      switch (rest[end]) {
        case '\\':
          if (end + 1 < rest.length) end += 1;
          break;
        case '[':
          inRange = true;
          break;
        case ']':
          inRange = false;
          break;
        case '*':
          if (!inRange) break scan;
      }
    }
    const units = unitsOf(rest.slice(0, end));
    if (units === null) return null;
    const literal = units.every((unit) => unit.kind === 'literal')
      ? String.fromCharCode(...units.map((unit) => (unit as { code: number }).code))
      : undefined;
    chunks.push({ star, units, literal, masks: masksOf(units) });
    rest = rest.slice(end);
  }
  return chunks;
}

/** One unit per character the chunk consumes, read as tsub's `matchChunk` reads it. */
function unitsOf(chunk: string): Unit[] | null {
  const units: Unit[] = [];
  let index = 0;
  while (index < chunk.length) {
    const character = chunk[index];
    if (character === '[') {
      index += 1;
      let negated = false;
      if (chunk[index] === '^') {
        negated = true;
        index += 1;
      }
      const ranges: [number, number][] = [];
      for (;;) {
        if (chunk[index] === ']' && ranges.length > 0) {
          index += 1;
          break;
        }
        const low = classCharacter(chunk, index);
        if (low === null) return null;
        index = low.next;
        let high = low.code;
        if (chunk[index] === '-') {
          const upper = classCharacter(chunk, index + 1);
          if (upper === null) return null;
          high = upper.code;
          index = upper.next;
        }
        ranges.push([low.code, high]);
      }
      units.push({ kind: 'class', negated, ranges });
    } else if (character === '?') {
      units.push({ kind: 'any' });
      index += 1;
    } else {
      if (character === '\\') {
        index += 1;
        if (index >= chunk.length) return null;
      }
      units.push({ kind: 'literal', code: chunk.charCodeAt(index) });
      index += 1;
    }
  }
  return units;
}

/** tsub's `getEsc`: a possibly escaped character of a class, which must not end the chunk. */
function classCharacter(chunk: string, index: number): { code: number; next: number } | null {
  if (index >= chunk.length || chunk[index] === '-' || chunk[index] === ']') return null;
  if (chunk[index] === '\\') {
    index += 1;
    if (index >= chunk.length) return null;
  }
  if (index + 1 >= chunk.length) return null;
  return { code: chunk.charCodeAt(index), next: index + 1 };
}
