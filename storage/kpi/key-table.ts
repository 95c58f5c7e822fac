/**
 * Exact per-key counters (bytes, packets, flows) without an object per key.
 *
 * An open-addressing hash table over typed arrays: keys are 16-byte
 * addresses held as four 32-bit words, values three float64 (exact to 2^53).
 * A slot is empty while its flow count is 0, since every key added carries at
 * least one flow. About 80 bytes per distinct key at the maximum load of 1/2.
 */

/** Value columns of a key table, in this order. */
export const BYTES = 0;
export const PACKETS = 1;
export const FLOWS = 2;

/** Metric a ranking is made by. */
export type Metric = typeof BYTES | typeof PACKETS | typeof FLOWS;

const INITIAL_SLOTS = 1024;

function fmix(h: number): number {
  // murmur3's finaliser: every input bit reaches every output bit.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

function hash4(a: number, b: number, c: number, d: number): number {
  let h = Math.imul(a, 0x9e3779b1);
  h = Math.imul(h ^ b, 0x85ebca77);
  h = Math.imul(h ^ c, 0xc2b2ae3d);
  h = h ^ d;
  return fmix(h);
}

/** Counters per 16-byte key. */
export class KeyTable {
  private slots: number;
  private mask: number;
  /**
   * One 48-byte record per slot, so a probe touches one cache line: words
   * 0-3 the key (platform byte order, as read through a Uint32Array view),
   * then bytes, packets, flows as float64 (indices 2-4 of the slot in `f`).
   */
  private w: Uint32Array;
  private f: Float64Array;
  /** Distinct keys held. */
  size = 0;

  constructor(expected = 0) {
    let slots = INITIAL_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.slots = slots;
    this.mask = slots - 1;
    const buf = new ArrayBuffer(slots * 48);
    this.w = new Uint32Array(buf);
    this.f = new Float64Array(buf);
  }

  private grow(): void {
    const oldW = this.w;
    const oldF = this.f;
    const oldSlots = this.slots;
    this.slots *= 2;
    this.mask = this.slots - 1;
    const buf = new ArrayBuffer(this.slots * 48);
    this.w = new Uint32Array(buf);
    this.f = new Float64Array(buf);
    const w = this.w;
    const f = this.f;
    for (let s = 0; s < oldSlots; s++) {
      if (oldF[s * 6 + 4] === 0) continue;
      const k = s * 12;
      const a = oldW[k]!;
      const b = oldW[k + 1]!;
      const c = oldW[k + 2]!;
      const d = oldW[k + 3]!;
      // Plain element copies: a subarray per key would allocate a million views.
      const t = this.findSlot(a, b, c, d);
      w[t * 12] = a;
      w[t * 12 + 1] = b;
      w[t * 12 + 2] = c;
      w[t * 12 + 3] = d;
      f[t * 6 + 2] = oldF[s * 6 + 2]!;
      f[t * 6 + 3] = oldF[s * 6 + 3]!;
      f[t * 6 + 4] = oldF[s * 6 + 4]!;
    }
  }

  /** The slot holding the key, or the empty slot where it belongs. */
  private findSlot(a: number, b: number, c: number, d: number): number {
    const w = this.w;
    const f = this.f;
    let s = hash4(a, b, c, d) & this.mask;
    for (;;) {
      if (f[s * 6 + 4] === 0) return s;
      const k = s * 12;
      if (w[k] === a && w[k + 1] === b && w[k + 2] === c && w[k + 3] === d) return s;
      s = (s + 1) & this.mask;
    }
  }

  /** Adds to the counters of the key given as four words. */
  addWords(a: number, b: number, c: number, d: number, bytes: number, packets: number, flows: number): void {
    let s = this.findSlot(a, b, c, d);
    if (this.f[s * 6 + 4] === 0) {
      if ((this.size + 1) * 2 > this.slots) {
        this.grow();
        s = this.findSlot(a, b, c, d);
      }
      this.size++;
      const k = s * 12;
      this.w[k] = a;
      this.w[k + 1] = b;
      this.w[k + 2] = c;
      this.w[k + 3] = d;
    }
    const v = s * 6 + 2;
    this.f[v]! += bytes;
    this.f[v + 1]! += packets;
    this.f[v + 2]! += flows;
  }

  /** Adds to the counters of the 16-byte key at `offset` of `bytes`. */
  addKey(key: Uint8Array, offset: number, bytes: number, packets: number, flows: number): void {
    BYTES_VIEW.set(key.subarray(offset, offset + 16));
    this.addWords(WORDS[0]!, WORDS[1]!, WORDS[2]!, WORDS[3]!, bytes, packets, flows);
  }

  /** Counters of a 16-byte key, or undefined when absent. */
  get(key: Uint8Array, offset = 0): [number, number, number] | undefined {
    BYTES_VIEW.set(key.subarray(offset, offset + 16));
    const s = this.findSlot(WORDS[0]!, WORDS[1]!, WORDS[2]!, WORDS[3]!);
    const v = s * 6 + 2;
    if (this.f[v + 2] === 0) return undefined;
    return [this.f[v]!, this.f[v + 1]!, this.f[v + 2]!];
  }

  /** Adds every key of another table. */
  merge(other: KeyTable): void {
    const ow = other.w;
    const of = other.f;
    for (let s = 0; s < other.slots; s++) {
      if (of[s * 6 + 4] === 0) continue;
      const k = s * 12;
      this.addWords(ow[k]!, ow[k + 1]!, ow[k + 2]!, ow[k + 3]!, of[s * 6 + 2]!, of[s * 6 + 3]!, of[s * 6 + 4]!);
    }
  }

  /** Every key with its counters, in no particular order (cut into levels by levels.ts). */
  rows(): RankedRows {
    const out: RankedRows = {
      keyWidth: 16,
      length: this.size,
      keys: new Uint8Array(this.size * 16),
      vals: new Float64Array(this.size * 3),
    };
    const bytes = new Uint8Array(this.w.buffer);
    const f = this.f;
    let n = 0;
    for (let s = 0; s < this.slots; s++) {
      if (f[s * 6 + 4] === 0) continue;
      out.keys.set(bytes.subarray(s * 48, s * 48 + 16), n * 16);
      out.vals[n * 3] = f[s * 6 + 2]!;
      out.vals[n * 3 + 1] = f[s * 6 + 3]!;
      out.vals[n * 3 + 2] = f[s * 6 + 4]!;
      n++;
    }
    return out;
  }

  /** The `n` highest keys by `metric`, ties by key bytes ascending, and the value of the best key left out (0 if none). */
  top(metric: Metric, n: number): { rows: RankedRows; next: number } {
    const bytes = new Uint8Array(this.w.buffer);
    const f = this.f;
    const m = 2 + metric;
    // A sorted array of the best n + 1 slots; insertion is cheap for the small n a top list needs.
    const best: number[] = [];
    const better = (x: number, y: number): boolean => {
      const d = f[x * 6 + m]! - f[y * 6 + m]!;
      return d !== 0 ? d > 0 : compareKeys(bytes, x * 48, bytes, y * 48, 16) < 0;
    };
    const keep = n + 1;
    for (let s = 0; s < this.slots; s++) {
      if (f[s * 6 + 4] === 0) continue;
      if (best.length === keep && !better(s, best[keep - 1]!)) continue;
      let i = best.length === keep ? keep - 1 : best.length;
      while (i > 0 && better(s, best[i - 1]!)) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = s;
    }
    const taken = Math.min(n, best.length);
    const rows: RankedRows = { keyWidth: 16, length: taken, keys: new Uint8Array(taken * 16), vals: new Float64Array(taken * 3) };
    for (let i = 0; i < taken; i++) {
      const s = best[i]!;
      rows.keys.set(bytes.subarray(s * 48, s * 48 + 16), i * 16);
      rows.vals[i * 3] = f[s * 6 + 2]!;
      rows.vals[i * 3 + 1] = f[s * 6 + 3]!;
      rows.vals[i * 3 + 2] = f[s * 6 + 4]!;
    }
    const left = best[n];
    return { rows, next: left === undefined ? 0 : f[left * 6 + m]! };
  }
}

/** Keys with their counters, best first: `keyWidth` bytes and three values per row. */
export interface RankedRows {
  keyWidth: number;
  length: number;
  keys: Uint8Array;
  /** bytes, packets, flows per row. */
  vals: Float64Array;
}

/** Byte-wise comparison of two keys. */
export function compareKeys(a: Uint8Array, ao: number, b: Uint8Array, bo: number, width: number): number {
  for (let i = 0; i < width; i++) {
    const d = a[ao + i]! - b[bo + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

// Scratch space for turning 16 key bytes into four words (one process-wide buffer; JS is single-threaded).
const WORDS = new Uint32Array(4);
const BYTES_VIEW = new Uint8Array(WORDS.buffer);
