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
  /** Four words per slot, in the platform's byte order (words come from a Uint32Array view). */
  private keys: Uint32Array;
  private vals: Float64Array;
  /** Distinct keys held. */
  size = 0;

  constructor(expected = 0) {
    let slots = INITIAL_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.slots = slots;
    this.mask = slots - 1;
    this.keys = new Uint32Array(slots * 4);
    this.vals = new Float64Array(slots * 3);
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldVals = this.vals;
    const oldSlots = this.slots;
    this.slots *= 2;
    this.mask = this.slots - 1;
    this.keys = new Uint32Array(this.slots * 4);
    this.vals = new Float64Array(this.slots * 3);
    for (let s = 0; s < oldSlots; s++) {
      if (oldVals[s * 3 + FLOWS] === 0) continue;
      const k = s * 4;
      const slot = this.findSlot(oldKeys[k]!, oldKeys[k + 1]!, oldKeys[k + 2]!, oldKeys[k + 3]!);
      this.keys.set(oldKeys.subarray(k, k + 4), slot * 4);
      this.vals.set(oldVals.subarray(s * 3, s * 3 + 3), slot * 3);
    }
  }

  /** The slot holding the key, or the empty slot where it belongs. */
  private findSlot(a: number, b: number, c: number, d: number): number {
    const keys = this.keys;
    const vals = this.vals;
    let s = hash4(a, b, c, d) & this.mask;
    for (;;) {
      if (vals[s * 3 + FLOWS] === 0) return s;
      const k = s * 4;
      if (keys[k] === a && keys[k + 1] === b && keys[k + 2] === c && keys[k + 3] === d) return s;
      s = (s + 1) & this.mask;
    }
  }

  /** Adds to the counters of the key given as four words. */
  addWords(a: number, b: number, c: number, d: number, bytes: number, packets: number, flows: number): void {
    let s = this.findSlot(a, b, c, d);
    if (this.vals[s * 3 + FLOWS] === 0) {
      if ((this.size + 1) * 2 > this.slots) {
        this.grow();
        s = this.findSlot(a, b, c, d);
      }
      this.size++;
      const k = s * 4;
      this.keys[k] = a;
      this.keys[k + 1] = b;
      this.keys[k + 2] = c;
      this.keys[k + 3] = d;
    }
    const v = s * 3;
    this.vals[v]! += bytes;
    this.vals[v + 1]! += packets;
    this.vals[v + 2]! += flows;
  }

  /** Adds to the counters of the 16-byte key at `offset` of `bytes`. */
  addKey(key: Uint8Array, offset: number, bytes: number, packets: number, flows: number): void {
    const w = WORDS;
    BYTES_VIEW.set(key.subarray(offset, offset + 16));
    this.addWords(w[0]!, w[1]!, w[2]!, w[3]!, bytes, packets, flows);
  }

  /** Counters of a 16-byte key, or undefined when absent. */
  get(key: Uint8Array, offset = 0): [number, number, number] | undefined {
    BYTES_VIEW.set(key.subarray(offset, offset + 16));
    const s = this.findSlot(WORDS[0]!, WORDS[1]!, WORDS[2]!, WORDS[3]!);
    const v = s * 3;
    if (this.vals[v + FLOWS] === 0) return undefined;
    return [this.vals[v]!, this.vals[v + 1]!, this.vals[v + 2]!];
  }

  /** Adds every key of another table. */
  merge(other: KeyTable): void {
    other.forEachSlot((k, v) => {
      const ok = other.keys;
      const ov = other.vals;
      this.addWords(ok[k]!, ok[k + 1]!, ok[k + 2]!, ok[k + 3]!, ov[v]!, ov[v + 1]!, ov[v + 2]!);
    });
  }

  private forEachSlot(fn: (keyIndex: number, valIndex: number) => void): void {
    const vals = this.vals;
    for (let s = 0; s < this.slots; s++) if (vals[s * 3 + FLOWS] !== 0) fn(s * 4, s * 3);
  }

  /** Every key with its counters, in no particular order (cut into levels by levels.ts). */
  rows(): RankedRows {
    const out: RankedRows = { keyWidth: 16, length: this.size, keys: new Uint8Array(this.size * 16), vals: new Float64Array(this.size * 3) };
    const keyBytes = new Uint8Array(this.keys.buffer, this.keys.byteOffset, this.keys.byteLength);
    let n = 0;
    this.forEachSlot((k, v) => {
      out.keys.set(keyBytes.subarray(k * 4, k * 4 + 16), n * 16);
      out.vals.set(this.vals.subarray(v, v + 3), n * 3);
      n++;
    });
    return out;
  }

  /** The `n` highest keys by `metric` (same order as `ranked`) and the value of the best key left out (0 if none). */
  top(metric: Metric, n: number): { rows: RankedRows; next: number } {
    const keyBytes = new Uint8Array(this.keys.buffer, this.keys.byteOffset, this.keys.byteLength);
    const vals = this.vals;
    // A sorted array of the best n + 1 slots; insertion is cheap for the small n a top list needs.
    const best: number[] = [];
    const better = (x: number, y: number): boolean => {
      const d = vals[x * 3 + metric]! - vals[y * 3 + metric]!;
      return d !== 0 ? d > 0 : compareKeys(keyBytes, x * 16, keyBytes, y * 16, 16) < 0;
    };
    const keep = n + 1;
    this.forEachSlot((k) => {
      const s = k / 4;
      if (best.length === keep && !better(s, best[keep - 1]!)) return;
      let i = best.length === keep ? keep - 1 : best.length;
      while (i > 0 && better(s, best[i - 1]!)) {
        best[i] = best[i - 1]!;
        i--;
      }
      best[i] = s;
    });
    const taken = Math.min(n, best.length);
    const rows: RankedRows = { keyWidth: 16, length: taken, keys: new Uint8Array(taken * 16), vals: new Float64Array(taken * 3) };
    for (let i = 0; i < taken; i++) {
      const s = best[i]!;
      rows.keys.set(keyBytes.subarray(s * 16, s * 16 + 16), i * 16);
      rows.vals.set(vals.subarray(s * 3, s * 3 + 3), i * 3);
    }
    const left = best[n];
    return { rows, next: left === undefined ? 0 : vals[left * 3 + metric]! };
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
