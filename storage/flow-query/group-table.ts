/**
 * Counters per group key, for keys of 1 to 12 words: an open-addressing hash
 * table over typed arrays (no object per key), or plain arrays indexed by the
 * key when it is one small word (ports, protocols, countries).
 *
 * Values per key: bytes, packets, flows (float64). A slot is empty while its
 * flow count is 0; every key added carries at least one flow.
 */

/** Value positions of a group. */
export const BYTES = 0;
export const PACKETS = 1;
export const FLOWS = 2;
/** Earliest flow start and latest flow end of a group (ms). */
export const FIRST = 3;
export const LAST = 4;
/** Values per group. */
const V = 5;

/** What a group is ranked by. */
export type MetricIndex = typeof BYTES | typeof PACKETS | typeof FLOWS;
/** Any value of a group. */
export type ValueIndex = MetricIndex | typeof FIRST | typeof LAST;

/** The columns a block's rows are counted from. */
export interface RowValues {
  bytes: Float64Array;
  packets: Float64Array;
  start?: Float64Array;
  end?: Float64Array;
}

/** Counters per key; `slots` are visited by `forEach` and read with `key`/`value`. */
export interface Groups {
  readonly width: number;
  /** Distinct keys held. */
  readonly size: number;
  /** Adds one flow per row r < n, its key at keys[r * width …], its values at row idx[r] of `v` (start and end only with `times`). */
  addRows(keys: Uint32Array, n: number, idx: Uint32Array, v: RowValues, times?: boolean): void;
  /** Calls fn for every occupied slot. */
  forEach(fn: (slot: number) => void): void;
  /** Value `m` of a slot. */
  value(slot: number, m: ValueIndex): number;
  /** The key words of a slot, copied into `out` at `at`. */
  key(slot: number, out: Uint32Array, at: number): void;
  /** The slot of a key (words at keys[at …]), or -1. */
  find(keys: Uint32Array, at: number): number;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Hash-table groups for keys of any width. */
export class HashGroups implements Groups {
  private slots: number;
  private mask: number;
  private keys: Uint32Array;
  private vals: Float64Array;
  size = 0;

  /** Values per slot: 3, or 5 when groups keep their first start and last end (`times`). */
  private readonly stride: number;

  constructor(
    readonly width: number,
    expected = 0,
    times = false,
  ) {
    this.stride = times ? V : FLOWS + 1;
    let slots = 1024;
    while (slots < expected * 2) slots *= 2;
    this.slots = slots;
    this.mask = slots - 1;
    this.keys = new Uint32Array(slots * width);
    this.vals = new Float64Array(slots * this.stride);
  }

  private hash(keys: Uint32Array, at: number): number {
    let h = 0x811c9dc5;
    for (let k = 0; k < this.width; k++) h = Math.imul(h ^ keys[at + k]!, 0x9e3779b1);
    return fmix(h);
  }

  /** The slot holding the key, or the empty slot where it goes. */
  private probe(keys: Uint32Array, at: number): number {
    const w = this.width;
    const own = this.keys;
    const vals = this.vals;
    let s = this.hash(keys, at) & this.mask;
    for (;;) {
      if (vals[s * this.stride + FLOWS] === 0) return s;
      let same = true;
      const o = s * w;
      for (let k = 0; k < w; k++) {
        if (own[o + k] !== keys[at + k]) {
          same = false;
          break;
        }
      }
      if (same) return s;
      s = (s + 1) & this.mask;
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldVals = this.vals;
    const oldSlots = this.slots;
    this.slots = grown(this.slots);
    this.mask = this.slots - 1;
    this.keys = new Uint32Array(this.slots * this.width);
    this.vals = new Float64Array(this.slots * this.stride);
    for (let s = 0; s < oldSlots; s++) {
      if (oldVals[s * this.stride + FLOWS] === 0) continue;
      const t = this.probe(oldKeys, s * this.width);
      for (let k = 0; k < this.width; k++) this.keys[t * this.width + k] = oldKeys[s * this.width + k]!;
      for (let k = 0; k < this.stride; k++) this.vals[t * this.stride + k] = oldVals[s * this.stride + k]!;
    }
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    times &&= this.stride === V;
    for (let r = 0; r < n; r++) {
      // slotOf first: it may grow the table, which replaces this.vals.
      const v = this.slotOf(keys, r * this.width);
      count(this.vals, v, rv, idx[r]!, times);
    }
  }

  /** Adds one flow with key keys[at …] and these counts. */
  addOne(keys: Uint32Array, at: number, bytes: number, packets: number): void {
    const v = this.slotOf(keys, at);
    this.vals[v + BYTES] = this.vals[v + BYTES]! + bytes;
    this.vals[v + PACKETS] = this.vals[v + PACKETS]! + packets;
    this.vals[v + FLOWS] = this.vals[v + FLOWS]! + 1;
  }

  /** Where the values of key keys[at …] are, the key stored there when new (its flows still 0). */
  private slotOf(keys: Uint32Array, at: number): number {
    if (this.size * 2 >= this.slots) this.grow();
    const s = this.probe(keys, at);
    if (this.vals[s * this.stride + FLOWS] === 0) {
      for (let k = 0; k < this.width; k++) this.keys[s * this.width + k] = keys[at + k]!;
      this.size++;
    }
    return s * this.stride;
  }

  forEach(fn: (slot: number) => void): void {
    for (let s = 0; s < this.slots; s++) if (this.vals[s * this.stride + FLOWS] !== 0) fn(s);
  }

  value(slot: number, m: ValueIndex): number {
    return this.vals[slot * this.stride + m]!;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    for (let k = 0; k < this.width; k++) out[at + k] = this.keys[slot * this.width + k]!;
  }

  find(keys: Uint32Array, at: number): number {
    const s = this.probe(keys, at);
    return this.vals[s * this.stride + FLOWS] === 0 ? -1 : s;
  }
}

/** Groups of a one-word key no larger than `max`, counted in plain arrays indexed by the key. */
export class DenseGroups implements Groups {
  readonly width = 1;
  private readonly vals: Float64Array;
  size = 0;

  constructor(readonly max: number) {
    this.vals = new Float64Array((max + 1) * V);
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    const vals = this.vals;
    for (let r = 0; r < n; r++) {
      const v = keys[r]! * V;
      if (vals[v + FLOWS] === 0) this.size++;
      count(vals, v, rv, idx[r]!, times);
    }
  }

  forEach(fn: (slot: number) => void): void {
    for (let s = 0; s <= this.max; s++) if (this.vals[s * V + FLOWS] !== 0) fn(s);
  }

  value(slot: number, m: ValueIndex): number {
    return this.vals[slot * V + m]!;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    out[at] = slot;
  }

  find(keys: Uint32Array, at: number): number {
    const k = keys[at]!;
    return k <= this.max && this.vals[k * V + FLOWS] !== 0 ? k : -1;
  }
}

/**
 * Groups of a one-word key, each a record of float64s in one array — the key,
 * bytes, packets, flows (and first, last with `times`) — so that a probe
 * touches one cache line, not one in a key array and one in a value array.
 * What counts interfaces, AS numbers and IPv4 addresses with millions of keys.
 */
export class WordGroups implements Groups {
  readonly width = 1;
  private slots = 4096;
  private mask = 4095;
  private rec: Float64Array;
  /** Doubles per record: the key, then the values. */
  private readonly stride: number;
  size = 0;

  constructor(times = false) {
    this.stride = 1 + (times ? V : FLOWS + 1);
    this.rec = new Float64Array(this.slots * this.stride);
  }

  private probe(key: number): number {
    const rec = this.rec;
    const st = this.stride;
    let s = fmix(Math.imul(key, 0x9e3779b1)) & this.mask;
    for (;;) {
      const o = s * st;
      if (rec[o + 1 + FLOWS] === 0 || rec[o] === key) return s;
      s = (s + 1) & this.mask;
    }
  }

  private grow(): void {
    const old = this.rec;
    const oldSlots = this.slots;
    const st = this.stride;
    this.slots = grown(this.slots);
    this.mask = this.slots - 1;
    this.rec = new Float64Array(this.slots * st);
    for (let s = 0; s < oldSlots; s++) {
      const o = s * st;
      if (old[o + 1 + FLOWS] === 0) continue;
      const t = this.probe(old[o]!) * st;
      for (let k = 0; k < st; k++) this.rec[t + k] = old[o + k]!;
    }
  }

  /** Adds one flow of key `key` (a uint32) and row i's values. */
  addKey(key: number, rv: RowValues, i: number, times: boolean): void {
    if (this.size * 2 >= this.slots) this.grow();
    const rec = this.rec;
    const o = this.probe(key) * this.stride;
    if (rec[o + 1 + FLOWS] === 0) {
      rec[o] = key;
      this.size++;
    }
    count(rec, o + 1, rv, i, times);
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    times &&= this.stride === 1 + V;
    for (let r = 0; r < n; r++) this.addKey(keys[r]!, rv, idx[r]!, times);
  }

  forEach(fn: (slot: number) => void): void {
    const st = this.stride;
    for (let s = 0; s < this.slots; s++) if (this.rec[s * st + 1 + FLOWS] !== 0) fn(s);
  }

  value(slot: number, m: ValueIndex): number {
    return this.rec[slot * this.stride + 1 + m]!;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    out[at] = this.rec[slot * this.stride]!;
  }

  find(keys: Uint32Array, at: number): number {
    const s = this.probe(keys[at]!);
    return this.rec[s * this.stride + 1 + FLOWS] === 0 ? -1 : s;
  }
}

/**
 * Groups of one address (four words, IPv4 mapped): IPv4 addresses in a
 * WordGroups by their last word, the rest in a HashGroups. Slots are the
 * two tables' slots interleaved (even: IPv4, odd: the rest).
 */
export class AddressGroups implements Groups {
  readonly width = 4;
  private readonly v4: WordGroups;
  private readonly other: HashGroups;

  constructor(private readonly times = false) {
    this.v4 = new WordGroups(times);
    this.other = new HashGroups(4, 0, times);
  }

  get size(): number {
    return this.v4.size + this.other.size;
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    times &&= this.times;
    for (let r = 0; r < n; r++) {
      const o = r * 4;
      if (keys[o] === 0 && keys[o + 1] === 0 && keys[o + 2] === 0xffff) this.v4.addKey(keys[o + 3]!, rv, idx[r]!, times);
      else this.other.addRows(keys.subarray(o, o + 4), 1, idx.subarray(r, r + 1), rv, times);
    }
  }

  forEach(fn: (slot: number) => void): void {
    this.v4.forEach((s) => fn(s * 2));
    this.other.forEach((s) => fn(s * 2 + 1));
  }

  value(slot: number, m: ValueIndex): number {
    return slot % 2 === 0 ? this.v4.value(slot / 2, m) : this.other.value((slot - 1) / 2, m);
  }

  key(slot: number, out: Uint32Array, at: number): void {
    if (slot % 2 === 1) {
      this.other.key((slot - 1) / 2, out, at);
      return;
    }
    out[at] = 0;
    out[at + 1] = 0;
    out[at + 2] = 0xffff;
    this.v4.key(slot / 2, out, at + 3);
  }

  find(keys: Uint32Array, at: number): number {
    if (keys[at] === 0 && keys[at + 1] === 0 && keys[at + 2] === 0xffff) {
      const s = this.v4.find(keys, at + 3);
      return s < 0 ? -1 : s * 2;
    }
    const s = this.other.find(keys, at);
    return s < 0 ? -1 : s * 2 + 1;
  }
}

/**
 * Adds row i to the group at vals[v …] (its flows still 0 when the group is new): counts, and
 * with `times` the group's first start and last end.
 */
function count(vals: Float64Array, v: number, rv: RowValues, i: number, times: boolean): void {
  if (times) {
    const fresh = vals[v + FLOWS] === 0;
    if (fresh || rv.start![i]! < vals[v + FIRST]!) vals[v + FIRST] = rv.start![i]!;
    if (fresh || rv.end![i]! > vals[v + LAST]!) vals[v + LAST] = rv.end![i]!;
  }
  vals[v + BYTES] = vals[v + BYTES]! + rv.bytes[i]!;
  vals[v + PACKETS] = vals[v + PACKETS]! + rv.packets[i]!;
  vals[v + FLOWS] = vals[v + FLOWS]! + 1;
}

/** The next size of a hash table: four times while small (fewer rehashes while it grows fast), then twice. */
function grown(slots: number): number {
  return slots * (slots < 1 << 20 ? 4 : 2);
}

/** Compares two keys word by word (the order ties are settled in). */
export function compareKeyWords(a: Uint32Array, at: number, b: Uint32Array, bt: number, width: number): number {
  for (let k = 0; k < width; k++) {
    const d = a[at + k]! - b[bt + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The slots of the `n` largest groups by metric `m`, largest first; equal
 * values in key order. Linear in the groups: the n-th value is found by
 * selection, and only what reaches it is sorted.
 */
export function topSlots(groups: Groups, m: MetricIndex, n: number): number[] {
  const values: number[] = [];
  const slots: number[] = [];
  groups.forEach((s) => {
    slots.push(s);
    values.push(groups.value(s, m));
  });
  const w = groups.width;
  const keyOf = (s: number, out: Uint32Array, at: number): void => groups.key(s, out, at);
  if (slots.length <= n) return sortSlots(slots, groups, m);
  const bar = nthLargest(Float64Array.from(values), n);
  const above: number[] = [];
  const ties: number[] = [];
  for (let i = 0; i < slots.length; i++) {
    if (values[i]! > bar) above.push(slots[i]!);
    else if (values[i] === bar) ties.push(slots[i]!);
  }
  // The groups equal to the n-th value are ranked by key; there may be millions of them (every
  // group one flow), so only the `need` smallest keys are kept, in a bounded heap.
  const need = n - above.length;
  let kept = ties;
  if (ties.length > need) {
    const keys = new Uint32Array(ties.length * w);
    ties.forEach((s, i) => keyOf(s, keys, i * w));
    kept = smallestKeys(keys, w, ties.length, need).map((i) => ties[i]!);
  }
  return [...sortSlots(above, groups, m), ...sortSlots(kept, groups, m)];
}

/** Slots by value `m` descending, then key ascending. */
function sortSlots(slots: number[], groups: Groups, m: MetricIndex): number[] {
  const w = groups.width;
  const ka = new Uint32Array(w);
  const kb = new Uint32Array(w);
  return slots.sort((a, b) => {
    const d = groups.value(b, m) - groups.value(a, m);
    if (d !== 0) return d;
    groups.key(a, ka, 0);
    groups.key(b, kb, 0);
    return compareKeyWords(ka, 0, kb, 0, w);
  });
}

/** Indices of the `k` smallest of `count` keys (`w` words each, in `keys`), by a max-heap of k. */
function smallestKeys(keys: Uint32Array, w: number, count: number, k: number): number[] {
  if (k <= 0) return [];
  const heap: number[] = [];
  const greater = (x: number, y: number): boolean => compareKeyWords(keys, x * w, keys, y * w, w) > 0;
  const up = (i: number): void => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!greater(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && greater(heap[l]!, heap[top]!)) top = l;
      if (r < heap.length && greater(heap[r]!, heap[top]!)) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top]!, heap[i]!];
      i = top;
    }
  };
  for (let i = 0; i < count; i++) {
    if (heap.length < k) {
      heap.push(i);
      up(heap.length - 1);
    } else if (greater(heap[0]!, i)) {
      heap[0] = i;
      down(0);
    }
  }
  return heap;
}

/** The n-th largest value (1-based) of `v`, by quickselect; `v` is reordered. */
function nthLargest(v: Float64Array, n: number): number {
  let lo = 0;
  let hi = v.length - 1;
  const k = n - 1;
  while (lo < hi) {
    const pivot = v[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (v[i]! > pivot) i++;
      while (v[j]! < pivot) j--;
      if (i <= j) {
        const t = v[i]!;
        v[i] = v[j]!;
        v[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return v[k]!;
  }
  return v[k]!;
}
