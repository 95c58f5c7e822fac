/**
 * Address ranges with a value each (an AS number, a country number), as sorted typed arrays
 * searched by bisection: no object per range, so a table of 400 000 ranges is a few MB, and a
 * lookup bisects only the ranges of its address's top 16 bits (`buckets`).
 *
 *   V4RangeTable  starts[i], ends[i]   u32 (host order), inclusive, ascending, disjoint
 *                 values[i]            u32 (never 0: gaps are "unknown")
 *   V6RangeTable  starts[4i … 4i+3]    the address as four u32 words, most significant first
 *                 ends[4i … 4i+3]      likewise, inclusive
 *                 values[i]
 *
 * RangeTableBuilder turns rows as the sources list them (sorted by start; a row may lie inside
 * an earlier, wider one, or overlap it) into such disjoint ranges: where rows overlap, the later
 * row wins, which for nested rows is the more specific one.
 */

/**
 * For each value of an address's top 16 bits, the first range that ends at or after the first
 * address with those bits (`bucket[h]`), and `bucket[65536]` = the number of ranges; `ends`
 * holds every range's end in its top 16 bits. A lookup then bisects only the ranges of its
 * /16 (a few, where the whole table takes 19 steps): 3–4 times fewer steps, on nearby memory.
 */
function buckets(n: number, endTop16: (i: number) => number): Uint32Array {
  const bucket = new Uint32Array(65537);
  let i = 0;
  for (let h = 0; h < 65536; h++) {
    while (i < n && endTop16(i) < h) i++;
    bucket[h] = i;
  }
  bucket[65536] = n;
  return bucket;
}

/** Ranges of IPv4 addresses. */
export class V4RangeTable {
  private readonly bucket: Uint32Array;

  constructor(
    readonly starts: Uint32Array,
    readonly ends: Uint32Array,
    readonly values: Uint32Array,
  ) {
    this.bucket = buckets(values.length, (i) => ends[i]! >>> 16);
  }

  /** Number of ranges. */
  get size(): number {
    return this.values.length;
  }

  /** Bytes the arrays hold. */
  get byteLength(): number {
    return this.starts.byteLength + this.ends.byteLength + this.values.byteLength + this.bucket.byteLength;
  }

  /** The value of the range holding `addr` (host-order u32), 0 when none does. */
  find(addr: number): number {
    const starts = this.starts;
    const h = addr >>> 16;
    // Only ranges bucket[h] … bucket[h+1] can hold addr: those before end below its /16, those after start above it.
    let lo = this.bucket[h]!;
    let hi = Math.min(this.bucket[h + 1]! + 1, starts.length);
    const first = lo;
    // lo ends at the first range starting after addr, so lo - 1 is the last one starting at or before it.
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= addr) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    return i >= first && addr <= this.ends[i]! ? this.values[i]! : 0;
  }
}

/** Ranges of IPv6 addresses, each address four u32 words. */
export class V6RangeTable {
  private readonly bucket: Uint32Array;

  constructor(
    readonly starts: Uint32Array,
    readonly ends: Uint32Array,
    readonly values: Uint32Array,
  ) {
    this.bucket = buckets(values.length, (i) => ends[i * 4]! >>> 16);
  }

  /** Number of ranges. */
  get size(): number {
    return this.values.length;
  }

  /** Bytes the arrays hold. */
  get byteLength(): number {
    return this.starts.byteLength + this.ends.byteLength + this.values.byteLength + this.bucket.byteLength;
  }

  /** The value of the range holding the address w0:w1:w2:w3 (unsigned words, most significant first), 0 when none does. */
  find(w0: number, w1: number, w2: number, w3: number): number {
    const s = this.starts;
    const h = w0 >>> 16;
    let lo = this.bucket[h]!;
    let hi = Math.min(this.bucket[h + 1]! + 1, this.values.length);
    const first = lo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(s, mid << 2, w0, w1, w2, w3) <= 0) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    return i >= first && compare(this.ends, i << 2, w0, w1, w2, w3) >= 0 ? this.values[i]! : 0;
  }
}

/** Sign of words[o … o+3] − (w0, w1, w2, w3), compared as unsigned 128-bit numbers. */
function compare(words: Uint32Array, o: number, w0: number, w1: number, w2: number, w3: number): number {
  let a = words[o]!;
  if (a !== w0) return a < w0 ? -1 : 1;
  a = words[o + 1]!;
  if (a !== w1) return a < w1 ? -1 : 1;
  a = words[o + 2]!;
  if (a !== w2) return a < w2 ? -1 : 1;
  a = words[o + 3]!;
  return a === w3 ? 0 : a < w3 ? -1 : 1;
}

/** A row the builder refused: out of order, or its end before its start. */
export class RangeOrderError extends Error {
  override readonly name = 'RangeOrderError';
}

interface Open<T> {
  /** First address of this row not yet emitted (nor covered by a later row). */
  cursor: T;
  end: T;
  value: number;
}

/**
 * Collects rows sorted by start into disjoint ranges (later rows win where they overlap),
 * merging neighbours with the same value. `T` is `number` for IPv4 and, for IPv6, the address
 * as a string of eight 16-bit code units (`v6Key`), which compare as the numbers do (`<`,
 * `===`) without BigInt, several times slower to parse and to step (measured). The stack holds the rows that enclose the current
 * one, a handful at most in the shipped tables.
 */
abstract class RangeTableBuilder<T extends number | string> {
  /** Index of the first exclusion that may still meet a pushed range (ranges are pushed in ascending order). */
  private exIndex = 0;
  private stack: Open<T>[] = [];
  private lastStart: T | undefined = undefined;
  protected count = 0;
  private pendingStart: T | undefined = undefined;
  private pendingEnd!: T;
  private pendingValue = 0;

  /** `excluded`: inclusive ranges, sorted and disjoint, that no range of the table covers, whatever the rows say. */
  constructor(private readonly excluded: readonly (readonly [T, T])[]) {}

  protected abstract next(a: T): T;
  protected abstract prev(a: T): T;
  protected abstract push(start: T, end: T, value: number): void;

  /** Pushes start…end less the excluded ranges. */
  private pushAllowed(start: T, end: T, value: number): void {
    const ex = this.excluded;
    while (this.exIndex < ex.length && ex[this.exIndex]![1] < start) this.exIndex++;
    let s = start;
    for (let j = this.exIndex; j < ex.length && ex[j]![0] <= end; j++) {
      const [xs, xe] = ex[j]!;
      if (s < xs) this.push(s, this.prev(xs), value);
      if (end <= xe) return;
      if (s <= xe) s = this.next(xe);
    }
    this.push(s, end, value);
  }

  /** Adds the inclusive range start…end with `value` (0 = unknown there); rows come sorted by start. */
  add(start: T, end: T, value: number): void {
    if (end < start) throw new RangeOrderError(`range ends (${end}) before it starts (${start})`);
    if (this.lastStart !== undefined && start < this.lastStart) {
      throw new RangeOrderError(`range starting at ${start} comes after one starting at ${this.lastStart}`);
    }
    this.lastStart = start;
    const stack = this.stack;
    // Rows that end before this one starts are done.
    for (let top = stack.at(-1); top && top.end < start; top = stack.at(-1)) {
      stack.pop();
      if (top.cursor <= top.end) this.emit(top.cursor, top.end, top.value);
    }
    // Rows this one overlaps past their end lose the overlap to it.
    for (let top = stack.at(-1); top && top.end < end; top = stack.at(-1)) {
      stack.pop();
      if (top.cursor < start) this.emit(top.cursor, this.prev(start), top.value);
    }
    const top = stack.at(-1);
    if (top) {
      if (top.cursor < start) this.emit(top.cursor, this.prev(start), top.value);
      // May pass top.end (2^32 for IPv4 is still a number): top then has nothing left to emit.
      if (top.cursor <= end) top.cursor = this.next(end);
    }
    stack.push({ cursor: start, end, value });
  }

  /** Emits every row still open; call once, after the last `add`. */
  protected flush(): void {
    for (let top = this.stack.pop(); top; top = this.stack.pop()) {
      if (top.cursor <= top.end) this.emit(top.cursor, top.end, top.value);
    }
    if (this.pendingStart !== undefined && this.pendingValue !== 0) {
      this.pushAllowed(this.pendingStart, this.pendingEnd, this.pendingValue);
    }
    this.pendingStart = undefined;
  }

  private emit(start: T, end: T, value: number): void {
    if (this.pendingStart !== undefined) {
      if (value === this.pendingValue && start === this.next(this.pendingEnd)) {
        this.pendingEnd = end;
        return;
      }
      if (this.pendingValue !== 0) this.pushAllowed(this.pendingStart, this.pendingEnd, this.pendingValue);
    }
    this.pendingStart = start;
    this.pendingEnd = end;
    this.pendingValue = value;
  }
}

/** Builds a V4RangeTable from rows of host-order u32 addresses. */
export class V4RangeTableBuilder extends RangeTableBuilder<number> {
  private starts: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private ends: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  private values: Uint32Array<ArrayBuffer> = new Uint32Array(1024);

  protected next(a: number): number {
    return a + 1;
  }
  protected prev(a: number): number {
    return a - 1;
  }
  protected push(start: number, end: number, value: number): void {
    if (this.count === this.values.length) {
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
      this.values = grow(this.values);
    }
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.values[this.count++] = value;
  }

  /** The table of every row added. */
  build(): V4RangeTable {
    this.flush();
    const n = this.count;
    return new V4RangeTable(this.starts.slice(0, n), this.ends.slice(0, n), this.values.slice(0, n));
  }
}

/** Builds a V6RangeTable from rows of addresses as `v6Key`s; load time only, lookups use words. */
export class V6RangeTableBuilder extends RangeTableBuilder<string> {
  private starts: Uint32Array<ArrayBuffer> = new Uint32Array(4096);
  private ends: Uint32Array<ArrayBuffer> = new Uint32Array(4096);
  private values: Uint32Array<ArrayBuffer> = new Uint32Array(1024);

  protected next(a: string): string {
    return step(a, 1);
  }
  protected prev(a: string): string {
    return step(a, -1);
  }
  protected push(start: string, end: string, value: number): void {
    if (this.count === this.values.length) {
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
      this.values = grow(this.values);
    }
    keyWords(start, this.starts, this.count << 2);
    keyWords(end, this.ends, this.count << 2);
    this.values[this.count++] = value;
  }

  /** The table of every row added. */
  build(): V6RangeTable {
    this.flush();
    const n = this.count;
    return new V6RangeTable(this.starts.slice(0, n * 4), this.ends.slice(0, n * 4), this.values.slice(0, n));
  }
}

/**
 * An IPv6 address as V6RangeTableBuilder takes it: its eight 16-bit groups as the eight UTF-16
 * code units of a string, most significant first, so that `<` and `===` compare addresses.
 */
export function v6Key(g: ArrayLike<number>): string {
  return String.fromCharCode(g[0]!, g[1]!, g[2]!, g[3]!, g[4]!, g[5]!, g[6]!, g[7]!);
}

const groups = new Uint32Array(8);

/** The key one above (`by` 1) or below (−1) `a`; above the last address, a key greater than every address. */
function step(a: string, by: 1 | -1): string {
  for (let i = 0; i < 8; i++) groups[i] = a.charCodeAt(i);
  for (let i = 7; i >= 0; i--) {
    const x = groups[i]! + by;
    groups[i] = x & 0xffff;
    if (x >= 0 && x <= 0xffff) return v6Key(groups);
  }
  return '\uffff'.repeat(9); // longer than any key with the same prefix, so greater
}

function keyWords(a: string, out: Uint32Array, o: number): void {
  for (let k = 0; k < 4; k++) out[o + k] = ((a.charCodeAt(2 * k) << 16) | a.charCodeAt(2 * k + 1)) >>> 0;
}

function grow(a: Uint32Array): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(a.length * 2);
  b.set(a);
  return b;
}

/** An empty IPv4 table (every lookup 0). */
export const EMPTY_V4 = new V4RangeTable(new Uint32Array(0), new Uint32Array(0), new Uint32Array(0));
/** An empty IPv6 table (every lookup 0). */
export const EMPTY_V6 = new V6RangeTable(new Uint32Array(0), new Uint32Array(0), new Uint32Array(0));
