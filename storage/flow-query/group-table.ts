/**
 * Counters per group key, for keys of 1 to 12 words: open-addressing hash
 * tables over typed arrays (no object per key; one-word keys in 256 seeded
 * partitions), tables kept sorted (keys of several words), or plain arrays
 * indexed by the key when it is one small word (ports, protocols, countries).
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
  /** At least the distinct keys held, and at most the rows added; cheap to read while rows are added. */
  readonly held: number;
  /** Adds one flow per row r < n, its key at keys[r * width …], its values at row idx[r] of `v` (start and end only with `times`). */
  addRows(keys: Uint32Array, n: number, idx: Uint32Array, v: RowValues, times?: boolean): void;
  /** Calls fn for every occupied slot. */
  forEach(fn: (slot: number) => void): void;
  /**
   * Offers every occupied slot whose value `m` is at least `best.floor` to `best`, as slot
   * `slot * mul + add` (a table inside another numbers its slots so): one pass, no call for a
   * group below the floor, no array of every group.
   */
  rank(m: ValueIndex, best: Best, mul?: number, add?: number): void;
  /** Value `m` of a slot. */
  value(slot: number, m: ValueIndex): number;
  /** The key words of a slot, copied into `out` at `at`. */
  key(slot: number, out: Uint32Array, at: number): void;
  /** The slot of a key (words at keys[at …]), or -1. */
  find(keys: Uint32Array, at: number): number;
  /**
   * Adds a whole group to the group of key keys[at …]: its bytes, packets and flows at
   * vals[v + BYTES …], and with `times` its first start and last end (v + FIRST, v + LAST).
   * How groups counted apart (another thread's) are merged.
   */
  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times?: boolean): void;
  /** Bytes, packets and flows over every group: the rows' totals, without a pass over the rows. */
  totals(): Counts;
}

/** Flows, packets and bytes of a group, of `other`, or of the total. */
export interface Counts {
  flows: number;
  packets: number;
  bytes: number;
}

/** Sums the counts of slots 0 … n (values `stride` apart; an empty slot holds zeros). */
function sumSlots(vals: Float64Array, stride: number, n: number): Counts {
  let bytes = 0;
  let packets = 0;
  let flows = 0;
  for (let v = 0, end = n * stride; v < end; v += stride) {
    bytes += vals[v + BYTES]!;
    packets += vals[v + PACKETS]!;
    flows += vals[v + FLOWS]!;
  }
  return { bytes, packets, flows };
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A random 32-bit seed for a table's hash. */
function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

/** Hash-table groups for keys of any width. */
export class HashGroups implements Groups {
  private slots: number;
  private mask: number;
  private keys: Uint32Array;
  private vals: Float64Array;
  size = 0;

  get held(): number {
    return this.size;
  }

  /** Values per slot: 3, or 5 when groups keep their first start and last end (`times`). */
  private readonly stride: number;

  /**
   * `seed` starts every key's hash: random, so that no one can choose keys (a forged source
   * address with a port, a flow's minute with its key at ingest) that share one slot's run.
   */
  constructor(
    readonly width: number,
    expected = 0,
    times = false,
    private readonly seed = randomSeed(),
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
    let h = 0x811c9dc5 ^ this.seed;
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
    if (times && this.stride === V) {
      for (let r = 0; r < n; r++) {
        // slotOf first: it may grow the table, which replaces this.vals.
        const v = this.slotOf(keys, r * this.width);
        countTimes(this.vals, v, rv, idx[r]!);
      }
      return;
    }
    const { bytes, packets } = rv;
    const w = this.width;
    for (let r = 0; r < n; r++) {
      const v = this.slotOf(keys, r * w);
      const i = idx[r]!;
      this.addCounts(v, bytes[i]!, packets[i]!);
    }
  }

  /** Adds one row whose key is keys[at …] and whose values are row i of `rv`. */
  addRow(keys: Uint32Array, at: number, rv: RowValues, i: number, times: boolean): void {
    const v = this.slotOf(keys, at);
    if (times && this.stride === V) countTimes(this.vals, v, rv, i);
    else this.addCounts(v, rv.bytes[i]!, rv.packets[i]!);
  }

  private addCounts(v: number, bytes: number, packets: number): void {
    const vals = this.vals;
    vals[v + BYTES] = vals[v + BYTES]! + bytes;
    vals[v + PACKETS] = vals[v + PACKETS]! + packets;
    vals[v + FLOWS] = vals[v + FLOWS]! + 1;
  }

  /** Adds one flow with key keys[at …] and these counts. */
  addOne(keys: Uint32Array, at: number, bytes: number, packets: number): void {
    this.addCounts(this.slotOf(keys, at), bytes, packets);
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

  rank(m: ValueIndex, best: Best, mul = 1, add = 0): void {
    rankSlots(this.vals, this.stride, this.slots, m, best, mul, add, true);
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

  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times = false): void {
    const o = this.slotOf(keys, at);
    addCounts(this.vals, o, vals, v, times && this.stride === V);
  }

  totals(): Counts {
    return sumSlots(this.vals, this.stride, this.slots);
  }
}

/** Groups of a one-word key no larger than `max`, counted in plain arrays indexed by the key. */
export class DenseGroups implements Groups {
  readonly width = 1;
  private readonly vals: Float64Array;
  /** Values per key: 3, or 5 with `times` (a smaller table stays in cache longer). */
  private readonly stride: number;
  size = 0;

  get held(): number {
    return this.size;
  }

  constructor(
    readonly max: number,
    times = false,
  ) {
    this.stride = times ? V : FLOWS + 1;
    this.vals = new Float64Array((max + 1) * this.stride);
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    const vals = this.vals;
    const st = this.stride;
    let fresh = 0;
    if (times && st === V) {
      for (let r = 0; r < n; r++) {
        const v = keys[r]! * V;
        if (vals[v + FLOWS] === 0) fresh++;
        countTimes(vals, v, rv, idx[r]!);
      }
    } else {
      // The columns in locals: a property read per row of an object with thirty columns costs more than the sums.
      const { bytes, packets } = rv;
      for (let r = 0; r < n; r++) {
        const v = keys[r]! * st;
        const i = idx[r]!;
        const flows = vals[v + FLOWS]!;
        if (flows === 0) fresh++;
        vals[v + BYTES] = vals[v + BYTES]! + bytes[i]!;
        vals[v + PACKETS] = vals[v + PACKETS]! + packets[i]!;
        vals[v + FLOWS] = flows + 1;
      }
    }
    this.size += fresh;
  }

  forEach(fn: (slot: number) => void): void {
    for (let s = 0; s <= this.max; s++) if (this.vals[s * this.stride + FLOWS] !== 0) fn(s);
  }

  rank(m: ValueIndex, best: Best, mul = 1, add = 0): void {
    rankSlots(this.vals, this.stride, this.max + 1, m, best, mul, add, true);
  }

  value(slot: number, m: ValueIndex): number {
    return this.vals[slot * this.stride + m]!;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    out[at] = slot;
  }

  find(keys: Uint32Array, at: number): number {
    const k = keys[at]!;
    return k <= this.max && this.vals[k * this.stride + FLOWS] !== 0 ? k : -1;
  }

  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times = false): void {
    const o = keys[at]! * this.stride;
    if (this.vals[o + FLOWS] === 0) this.size++;
    addCounts(this.vals, o, vals, v, times && this.stride === V);
  }

  totals(): Counts {
    return sumSlots(this.vals, this.stride, this.max + 1);
  }
}

/** Rows a KeyGroups holds unsorted before it sorts them into its groups. */
const SORT_CHUNK = 1 << 19;

/**
 * What KeyGroups is built on: groups kept sorted, their values `stride` apart in `vals`,
 * and rows pending until `settle` sorts them in. Every read settles first.
 */
abstract class SortedGroups {
  /** Values per group: 3, or 5 with `times`. */
  protected readonly stride: number;
  protected vals: Float64Array<ArrayBufferLike> = new Float64Array(0);
  protected groups = 0;
  /** Rows added and not sorted in yet. */
  protected rows = 0;

  constructor(protected readonly times: boolean) {
    this.stride = times ? V : FLOWS + 1;
  }

  /** Sorts the pending rows in. */
  protected abstract settle(): void;

  /** Distinct keys held (sorts what is pending first). */
  get size(): number {
    this.settle();
    return this.groups;
  }

  /** At least the distinct keys held, without sorting: the groups plus the rows pending. */
  get held(): number {
    return this.groups + this.rows;
  }

  forEach(fn: (slot: number) => void): void {
    this.settle();
    for (let s = 0; s < this.groups; s++) fn(s);
  }

  rank(m: ValueIndex, best: Best, mul = 1, add = 0): void {
    this.settle();
    rankSlots(this.vals, this.stride, this.groups, m, best, mul, add, false);
  }

  totals(): Counts {
    this.settle();
    return sumSlots(this.vals, this.stride, this.groups);
  }

  value(slot: number, m: ValueIndex): number {
    return this.vals[slot * this.stride + m]!;
  }
}

/** Partitions of a WordGroups: a row goes to one by the top bits of its key's hash. */
const PARTITION_BITS = 8;
const PARTITIONS = 1 << PARTITION_BITS;

/** Rows a partition of a WordGroups holds before it sums them into its groups. */
const PENDING_ROWS = 2048;

/** Pending rows per partition at first; doubled (up to the most) as rows come. */
const FIRST_PENDING = 32;

/**
 * Groups of a one-word key (interfaces, AS numbers, IPv4 addresses; millions of keys). A row is
 * appended to one of 256 partitions by a hash of its key; once a partition holds enough rows
 * they are summed into its own open-addressing table. A partition's groups are a 256th of the
 * whole (a million keys: about 110 KB), so summing rows into them stays in cache, where one table
 * of a million keys pays a cache miss per row and a sort of the rows reads them back in random
 * order. Every read sums what is pending first. Values per group: bytes, packets, flows (and
 * first, last with `times`).
 */
export class WordGroups implements Groups {
  readonly width = 1;
  /** Values per group or pending row: 3, or 5 with `times`. */
  private readonly stride: number;
  // Pending rows: partition p holds rows [p * room, p * room + pendingRows[p]) of the key and
  // value arrays, its values `stride` apart.
  private room = 0;
  private pendingKeys = new Uint32Array(0);
  private pendingVals = new Float64Array(0);
  private readonly pendingRows = new Uint32Array(PARTITIONS);
  private pendingTotal = 0;
  // The groups of each partition, in the order they were first met, and a table of their numbers
  // (plus one; 0 is empty) by key hash.
  private readonly groupKeys: Uint32Array[] = [];
  private readonly groupVals: Float64Array[] = [];
  private readonly tables: Uint32Array[] = [];
  private readonly groupCount = new Uint32Array(PARTITIONS);
  private groupTotal = 0;
  // Slot s of partition p is starts[p] + its group number (valid while nothing is pending).
  private readonly starts = new Uint32Array(PARTITIONS + 1);
  private startsValid = false;

  /**
   * `pending`: rows a partition holds before it sums them in (smaller in tests, to sum often).
   * `seed` is mixed into every key's hash: random, so that no one can choose addresses (a source
   * address is anyone's to forge) that crowd one partition and one run of its table.
   */
  constructor(
    private readonly times = false,
    private readonly pending = PENDING_ROWS,
    private readonly seed = randomSeed(),
  ) {
    this.stride = times ? V : FLOWS + 1;
    this.widen(Math.max(1, Math.min(FIRST_PENDING, pending)));
  }

  get size(): number {
    this.settle();
    return this.groupTotal;
  }

  /** At least the distinct keys held, without summing: the groups plus the rows pending. */
  get held(): number {
    return this.groupTotal + this.pendingTotal;
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    const st = this.stride;
    const withTimes = this.times && times;
    const { bytes, packets, start, end } = rv;
    const rows = this.pendingRows;
    const seed = this.seed;
    let room = this.room;
    let pk = this.pendingKeys;
    let pv = this.pendingVals;
    for (let r = 0; r < n; r++) {
      const key = keys[r]!;
      const p = fmix(key ^ seed) >>> (32 - PARTITION_BITS);
      let c = rows[p]!;
      if (c === room) {
        // Sums the partition in, or widens every partition (new arrays).
        this.makeRoom(p);
        c = rows[p]!;
        room = this.room;
        pk = this.pendingKeys;
        pv = this.pendingVals;
      }
      const at = p * room + c;
      const i = idx[r]!;
      const v = at * st;
      pk[at] = key;
      pv[v + BYTES] = bytes[i]!;
      pv[v + PACKETS] = packets[i]!;
      pv[v + FLOWS] = 1;
      if (st === V) {
        pv[v + FIRST] = withTimes ? start![i]! : Infinity;
        pv[v + LAST] = withTimes ? end![i]! : -Infinity;
      }
      rows[p] = c + 1;
    }
    this.pendingTotal += n;
    if (n > 0) this.startsValid = false;
  }

  /**
   * Adds `n` whole groups (keys[r], values `stride` apart from values[r * (times ? 5 : 3)]), in any
   * order: each a pending row that stands for the group (its flows; its first and last as a row's
   * start and end).
   */
  addGroups(keys: Uint32Array, values: Float64Array, n: number, times: boolean): void {
    // addRows' loop, written out again: a method call per row for the pending slot (tried) made
    // both a fifth to a quarter slower.
    const from = times ? V : FLOWS + 1;
    const st = this.stride;
    const rows = this.pendingRows;
    const seed = this.seed;
    let room = this.room;
    let pk = this.pendingKeys;
    let pv = this.pendingVals;
    for (let r = 0; r < n; r++) {
      const key = keys[r]!;
      const p = fmix(key ^ seed) >>> (32 - PARTITION_BITS);
      let c = rows[p]!;
      if (c === room) {
        this.makeRoom(p);
        c = rows[p]!;
        room = this.room;
        pk = this.pendingKeys;
        pv = this.pendingVals;
      }
      const at = p * room + c;
      pk[at] = key;
      putGroup(pv, at * st, values, r * from, st === V, times);
      rows[p] = c + 1;
    }
    this.pendingTotal += n;
    if (n > 0) this.startsValid = false;
  }

  /** Every group as flat arrays, in forEach's order: keys, and values as this table keeps them (3 or 5 apart). */
  flat(): { keys: Uint32Array<ArrayBuffer>; values: Float64Array<ArrayBuffer>; size: number } {
    this.settle();
    const st = this.stride;
    const keys = new Uint32Array(this.groupTotal);
    const values = new Float64Array(this.groupTotal * st);
    for (let p = 0; p < PARTITIONS; p++) {
      const c = this.groupCount[p]!;
      if (c === 0) continue;
      const at = this.starts[p]!;
      keys.set(this.groupKeys[p]!.subarray(0, c), at);
      values.set(this.groupVals[p]!.subarray(0, c * st), at * st);
    }
    return { keys, values, size: this.groupTotal };
  }

  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times = false): void {
    this.addGroups(keys.subarray(at, at + 1), vals.subarray(v), 1, times);
  }

  /** Room for one more pending row in partition p: every partition's room doubled, or p's rows summed in. */
  private makeRoom(p: number): void {
    // Wider only when rows spread over the partitions (half their room in use, on average): a
    // few hot keys fill one partition, whose rows are summed in at once instead. (Counted here:
    // pendingTotal is brought up to date only once a call's rows are all in.)
    let pending = 0;
    for (let q = 0; q < PARTITIONS; q++) pending += this.pendingRows[q]!;
    if (this.room < this.pending && pending * 2 >= this.room * PARTITIONS) {
      this.widen(Math.min(this.room * 2, this.pending));
    } else this.sumPartition(p);
  }

  /** Gives every partition room for `room` pending rows, keeping what they hold. */
  private widen(room: number): void {
    const st = this.stride;
    const keys = new Uint32Array(PARTITIONS * room);
    const vals = new Float64Array(PARTITIONS * room * st);
    for (let p = 0; p < PARTITIONS && this.room > 0; p++) {
      const c = this.pendingRows[p]!;
      const from = p * this.room;
      keys.set(this.pendingKeys.subarray(from, from + c), p * room);
      vals.set(this.pendingVals.subarray(from * st, (from + c) * st), p * room * st);
    }
    this.room = room;
    this.pendingKeys = keys;
    this.pendingVals = vals;
  }

  /** Sums every partition's pending rows into its groups. */
  private settle(): void {
    if (this.pendingTotal > 0) for (let p = 0; p < PARTITIONS; p++) if (this.pendingRows[p]! > 0) this.sumPartition(p);
    if (this.startsValid) return;
    for (let p = 0; p < PARTITIONS; p++) this.starts[p + 1] = this.starts[p]! + this.groupCount[p]!;
    this.startsValid = true;
  }

  /** Sums partition p's pending rows into its groups, through its table. */
  private sumPartition(p: number): void {
    const c = this.pendingRows[p]!;
    if (c === 0) return;
    const st = this.stride;
    const times = st === V;
    let g = this.groupCount[p]!;
    this.reserve(p, g + c);
    const gk = this.groupKeys[p]!;
    const gv = this.groupVals[p]!;
    const table = this.tables[p]!;
    const mask = table.length - 1;
    const pk = this.pendingKeys;
    const pv = this.pendingVals;
    const seed = this.seed;
    for (let r = p * this.room, end = r + c; r < end; r++) {
      const key = pk[r]!;
      const v = r * st;
      let s = fmix(key ^ seed) & mask;
      for (;;) {
        const e = table[s]!;
        if (e === 0) {
          table[s] = g + 1;
          gk[g] = key;
          const o = g * st;
          for (let k = 0; k < st; k++) gv[o + k] = pv[v + k]!;
          g++;
          break;
        }
        if (gk[e - 1] === key) {
          addCounts(gv, (e - 1) * st, pv, v, times);
          break;
        }
        s = (s + 1) & mask;
      }
    }
    this.groupTotal += g - this.groupCount[p]!;
    this.groupCount[p] = g;
    this.pendingTotal -= c;
    this.pendingRows[p] = 0;
    this.startsValid = false;
  }

  /** Room in partition p for `groups` groups, and a table at most half full for them. */
  private reserve(p: number, groups: number): void {
    const g = this.groupCount[p]!;
    const st = this.stride;
    const keys = this.groupKeys[p];
    if (!keys || keys.length < groups) {
      let cap = keys ? keys.length * 2 : 64;
      while (cap < groups) cap *= 2;
      const k = new Uint32Array(cap);
      const v = new Float64Array(cap * st);
      if (keys) {
        k.set(keys.subarray(0, g));
        v.set(this.groupVals[p]!.subarray(0, g * st));
      }
      this.groupKeys[p] = k;
      this.groupVals[p] = v;
    }
    const table = this.tables[p];
    if (table && table.length >= groups * 2) return;
    // Grown four times at once: every growth puts each group in again.
    let size = table ? table.length * 4 : 128;
    while (size < groups * 2) size *= 2;
    const t = new Uint32Array(size);
    const mask = size - 1;
    const gk = this.groupKeys[p]!;
    const seed = this.seed;
    for (let e = 0; e < g; e++) {
      let s = fmix(gk[e]! ^ seed) & mask;
      while (t[s] !== 0) s = (s + 1) & mask;
      t[s] = e + 1;
    }
    this.tables[p] = t;
  }

  /** The partition last found by partitionOf: slots read in order (forEach's) stay in it or move to the next. */
  private lastPartition = 0;

  /** The partition of a slot (starts valid). */
  private partitionOf(slot: number): number {
    const starts = this.starts;
    let p = this.lastPartition;
    if (starts[p]! <= slot && slot < starts[p + 1]!) return p;
    if (slot === starts[p + 1]) {
      // The first slot of a later partition: past the empty ones between.
      while (starts[p + 1]! <= slot) p++;
      this.lastPartition = p;
      return p;
    }
    let lo = 0;
    let hi = PARTITIONS - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= slot) lo = mid;
      else hi = mid - 1;
    }
    this.lastPartition = lo;
    return lo;
  }

  forEach(fn: (slot: number) => void): void {
    this.settle();
    for (let s = 0; s < this.groupTotal; s++) fn(s);
  }

  rank(m: ValueIndex, best: Best, mul = 1, add = 0): void {
    this.settle();
    for (let p = 0; p < PARTITIONS; p++) {
      const n = this.groupCount[p]!;
      // Partition p's group g is slot starts[p] + g.
      if (n > 0) rankSlots(this.groupVals[p]!, this.stride, n, m, best, mul, this.starts[p]! * mul + add, false);
    }
  }

  value(slot: number, m: ValueIndex): number {
    this.settle();
    const p = this.partitionOf(slot);
    return this.groupVals[p]![(slot - this.starts[p]!) * this.stride + m]!;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    this.settle();
    const p = this.partitionOf(slot);
    out[at] = this.groupKeys[p]![slot - this.starts[p]!]!;
  }

  find(keys: Uint32Array, at: number): number {
    this.settle();
    const key = keys[at]!;
    const h = fmix(key ^ this.seed);
    const p = h >>> (32 - PARTITION_BITS);
    const table = this.tables[p];
    if (!table) return -1;
    const gk = this.groupKeys[p]!;
    const mask = table.length - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = table[s]!;
      if (e === 0) return -1;
      if (gk[e - 1] === key) return this.starts[p]! + e - 1;
    }
  }

  totals(): Counts {
    this.settle();
    const sum: Counts = { bytes: 0, packets: 0, flows: 0 };
    for (let p = 0; p < PARTITIONS; p++) {
      const c = this.groupCount[p]!;
      if (c === 0) continue;
      const part = sumSlots(this.groupVals[p]!, this.stride, c);
      sum.bytes += part.bytes;
      sum.packets += part.packets;
      sum.flows += part.flows;
    }
    return sum;
  }
}

/** Bits per pass of the radix sort: 2 048 buckets, whose counts and write positions stay in cache. */
const RADIX_BITS = 11;

/**
 * The positions of keys[0 … n) in ascending key order (stable), and the keys in that order: a
 * least-significant-digit radix sort in three passes of 11 bits, each skipped when every key has
 * the same digit there (the high bits of interface numbers or of one site's addresses). Keys
 * travel with their positions, so every pass reads both in sequence.
 */
export function sortedOrder(keys: Uint32Array, n: number): { order: Uint32Array; sorted: Uint32Array } {
  let order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let sorted = keys.slice(0, n);
  let spareOrder = new Uint32Array(n);
  let spareKeys = new Uint32Array(n);
  const counts = new Uint32Array(1 << RADIX_BITS);
  const mask = (1 << RADIX_BITS) - 1;
  for (let shift = 0; shift < 32; shift += RADIX_BITS) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(sorted[i]! >>> shift) & mask]!++;
    if (counts[(sorted[0]! >>> shift) & mask] === n) continue; // one digit for all
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = counts[d]!;
      counts[d] = sum;
      sum += c;
    }
    for (let i = 0; i < n; i++) {
      const k = sorted[i]!;
      const at = counts[(k >>> shift) & mask]!++;
      spareOrder[at] = order[i]!;
      spareKeys[at] = k;
    }
    [order, spareOrder] = [spareOrder, order];
    [sorted, spareKeys] = [spareKeys, sorted];
  }
  return { order, sorted };
}

/** The hash of a key of `width` words at keys[at …] that orders a KeyGroups table. */
export function keyHash(keys: Uint32Array, at: number, width: number): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < width; k++) h = Math.imul(h ^ keys[at + k]!, 0x9e3779b1);
  return fmix(h);
}

/**
 * Groups of a key of several words (IPv6 addresses), kept sorted by a 32-bit hash of the key and
 * then by its words: rows are appended as they come, and every
 * SORT_CHUNK rows they are radix-sorted by hash, summed per key and merged into the groups in one
 * sequential pass. A hash table of a million such keys pays two cache misses per row and
 * rehashes as it grows (three times the time here). Keys of equal hash are told apart by their
 * words (sorted, so crafted collisions cost a sort, not a quadratic walk).
 */
export class KeyGroups extends SortedGroups implements Groups {
  // The groups, by (hash, key words) ascending.
  private hashes: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  private keys: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  // Rows not sorted in yet: hash, key words, and bytes, packets, flows (first, last) `stride` apart.
  private rowHashes = new Uint32Array(1024);
  private rowKeys: Uint32Array;
  private rowVals: Float64Array;

  constructor(
    readonly width: number,
    times = false,
    private readonly chunk = SORT_CHUNK,
  ) {
    super(times);
    this.rowKeys = new Uint32Array(1024 * width);
    this.rowVals = new Float64Array(1024 * this.stride);
  }

  /** A new pending row for the key at keys[at …]: its position, values zero. */
  private pending(keys: Uint32Array, at: number): number {
    if (this.rows === this.rowHashes.length) this.makeRoom();
    const r = this.rows++;
    const w = this.width;
    this.rowHashes[r] = keyHash(keys, at, w);
    for (let k = 0; k < w; k++) this.rowKeys[r * w + k] = keys[at + k]!;
    return r;
  }

  private makeRoom(): void {
    const cap = this.rowHashes.length * 2;
    const grow = <T extends Uint32Array | Float64Array>(a: T, n: number, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.rowHashes = grow(this.rowHashes, cap, (n) => new Uint32Array(n));
    this.rowKeys = grow(this.rowKeys, cap * this.width, (n) => new Uint32Array(n));
    this.rowVals = grow(this.rowVals, cap * this.stride, (n) => new Float64Array(n));
  }

  /** Adds row i of `rv` to the key at keys[at …]. */
  addRow(keys: Uint32Array, at: number, rv: RowValues, i: number, times = false): void {
    const r = this.pending(keys, at);
    const v = r * this.stride;
    putRow(this.rowVals, v, rv, i, this.times, times);
    if (this.rows >= this.chunk) this.settle();
  }

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    for (let r = 0; r < n; r++) this.addRow(keys, r * this.width, rv, idx[r]!, times);
  }

  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times = false): void {
    const r = this.pending(keys, at);
    putGroup(this.rowVals, r * this.stride, vals, v, this.times, times);
    if (this.rows >= this.chunk) this.settle();
  }

  /** Sorts the pending rows, sums them per key and merges them into the groups. */
  protected settle(): void {
    const n = this.rows;
    if (n === 0) return;
    this.rows = 0;
    const w = this.width;
    const st = this.stride;
    const rh = this.rowHashes;
    const rk = this.rowKeys;
    const rv = this.rowVals;
    const { order } = sortedOrder(rh, n);
    // Rows of one hash that differ in their words are put in key order (a crafted collision of
    // many keys costs this sort); rows of one key stay together either way.
    for (let j = 0; j < n;) {
      let e = j + 1;
      const h = rh[order[j]!]!;
      while (e < n && rh[order[e]!] === h) e++;
      if (e - j > 1) {
        let mixed = false;
        for (let q = j + 1; q < e && !mixed; q++) mixed = compareKeyWords(rk, order[q]! * w, rk, order[j]! * w, w) !== 0;
        if (mixed) {
          const run = Array.from(order.subarray(j, e)).sort((a, b) => compareKeyWords(rk, a * w, rk, b * w, w));
          order.set(run, j);
        }
      }
      j = e;
    }
    // The pending rows summed per key, in (hash, key) order.
    const runHashes = new Uint32Array(n);
    const runKeys = new Uint32Array(n * w);
    const run = new Float64Array(n * st);
    const times = st === V;
    let u = -1;
    let prev = -1;
    for (let j = 0; j < n; j++) {
      const r = order[j]!;
      const v = r * st;
      if (u < 0 || rh[r] !== runHashes[u] || compareKeyWords(rk, r * w, rk, prev * w, w) !== 0) {
        u++;
        runHashes[u] = rh[r]!;
        for (let k = 0; k < w; k++) runKeys[u * w + k] = rk[r * w + k]!;
        for (let k = 0; k < st; k++) run[u * st + k] = rv[v + k]!;
      } else {
        addCounts(run, u * st, rv, v, times);
      }
      prev = r;
    }
    this.mergeRun(runHashes, runKeys, run, u + 1);
  }

  /** Orders group i of (ha, ka) against group j of (hb, kb): hash, then key words. */
  private compare(ha: Uint32Array, ka: Uint32Array, i: number, hb: Uint32Array, kb: Uint32Array, j: number): number {
    const d = ha[i]! - hb[j]!;
    return d !== 0 ? d : compareKeyWords(ka, i * this.width, kb, j * this.width, this.width);
  }

  /** Merges `m` summed groups, in (hash, key) order, into the groups. */
  private mergeRun(runHashes: Uint32Array, runKeys: Uint32Array, run: Float64Array, m: number): void {
    const w = this.width;
    const st = this.stride;
    const times = st === V;
    if (this.groups === 0) {
      this.hashes = runHashes.subarray(0, m);
      this.keys = runKeys.subarray(0, m * w);
      this.vals = run.subarray(0, m * st);
      this.groups = m;
      return;
    }
    const [ah, ak, av, na] = [this.hashes, this.keys, this.vals, this.groups];
    const hashes = new Uint32Array(na + m);
    const keys = new Uint32Array((na + m) * w);
    const vals = new Float64Array((na + m) * st);
    let i = 0;
    let j = 0;
    let o = 0;
    while (i < na || j < m) {
      const c = j === m ? -1 : i === na ? 1 : this.compare(ah, ak, i, runHashes, runKeys, j);
      if (c <= 0) {
        hashes[o] = ah[i]!;
        for (let k = 0; k < w; k++) keys[o * w + k] = ak[i * w + k]!;
        for (let k = 0; k < st; k++) vals[o * st + k] = av[i * st + k]!;
        if (c === 0) {
          addCounts(vals, o * st, run, j * st, times);
          j++;
        }
        i++;
      } else {
        hashes[o] = runHashes[j]!;
        for (let k = 0; k < w; k++) keys[o * w + k] = runKeys[j * w + k]!;
        for (let k = 0; k < st; k++) vals[o * st + k] = run[j * st + k]!;
        j++;
      }
      o++;
    }
    this.hashes = hashes.subarray(0, o);
    this.keys = keys.subarray(0, o * w);
    this.vals = vals.subarray(0, o * st);
    this.groups = o;
  }

  key(slot: number, out: Uint32Array, at: number): void {
    for (let k = 0; k < this.width; k++) out[at + k] = this.keys[slot * this.width + k]!;
  }

  /** Every group as flat arrays, in forEach's order: keys `width` words each, values 3 or 5 apart. */
  flat(): { keys: Uint32Array<ArrayBuffer>; values: Float64Array<ArrayBuffer>; size: number } {
    this.settle();
    return {
      keys: this.keys.slice(0, this.groups * this.width),
      values: this.vals.slice(0, this.groups * this.stride),
      size: this.groups,
    };
  }

  find(keys: Uint32Array, at: number): number {
    this.settle();
    const h = keyHash(keys, at, this.width);
    const one = Uint32Array.of(h);
    const probe = keys.subarray(at, at + this.width);
    let lo = 0;
    let hi = this.groups - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.compare(this.hashes, this.keys, mid, one, probe, 0);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/**
 * Groups of one address (four words, IPv4 mapped): IPv4 addresses in a
 * WordGroups by their last word, the rest in a KeyGroups. Slots are the
 * two tables' slots interleaved (even: IPv4, odd: the rest).
 */
export class AddressGroups implements Groups {
  readonly width = 4;
  private readonly v4: WordGroups;
  private readonly other: KeyGroups;

  constructor(private readonly times = false) {
    this.v4 = new WordGroups(times);
    this.other = new KeyGroups(4, times);
  }

  get size(): number {
    return this.v4.size + this.other.size;
  }

  get held(): number {
    return this.v4.held + this.other.held;
  }

  // The IPv4 rows of one addRows call, handed to the IPv4 table at once.
  private v4Keys = new Uint32Array(0);
  private v4Rows = new Uint32Array(0);

  addRows(keys: Uint32Array, n: number, idx: Uint32Array, rv: RowValues, times = false): void {
    times &&= this.times;
    if (this.v4Keys.length < n) {
      this.v4Keys = new Uint32Array(n);
      this.v4Rows = new Uint32Array(n);
    }
    const v4Keys = this.v4Keys;
    const v4Rows = this.v4Rows;
    let m = 0;
    for (let r = 0; r < n; r++) {
      const o = r * 4;
      if (keys[o] === 0 && keys[o + 1] === 0 && keys[o + 2] === 0xffff) {
        v4Keys[m] = keys[o + 3]!;
        v4Rows[m++] = idx[r]!;
      } else this.other.addRow(keys, o, rv, idx[r]!, times);
    }
    this.v4.addRows(v4Keys, m, v4Rows, rv, times);
  }

  forEach(fn: (slot: number) => void): void {
    this.v4.forEach((s) => fn(s * 2));
    this.other.forEach((s) => fn(s * 2 + 1));
  }

  totals(): Counts {
    const a = this.v4.totals();
    const b = this.other.totals();
    return { bytes: a.bytes + b.bytes, packets: a.packets + b.packets, flows: a.flows + b.flows };
  }

  rank(m: ValueIndex, best: Best, mul = 1, add = 0): void {
    this.v4.rank(m, best, 2 * mul, add);
    this.other.rank(m, best, 2 * mul, mul + add);
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

  addGroup(keys: Uint32Array, at: number, vals: Float64Array, v: number, times = false): void {
    if (keys[at] === 0 && keys[at + 1] === 0 && keys[at + 2] === 0xffff) this.v4.addGroup(keys, at + 3, vals, v, times);
    else this.other.addGroup(keys, at, vals, v, times);
  }

  /** Adds `n` whole groups (keys 4 words each, values 3 or 5 apart as `times` says), in any order. */
  addGroups(keys: Uint32Array, values: Float64Array, n: number, times: boolean): void {
    const stride = times ? V : FLOWS + 1;
    const v4Keys = new Uint32Array(n);
    const v4Values = new Float64Array(n * stride);
    let m = 0;
    for (let r = 0; r < n; r++) {
      const o = r * 4;
      if (keys[o] === 0 && keys[o + 1] === 0 && keys[o + 2] === 0xffff) {
        v4Keys[m] = keys[o + 3]!;
        for (let k = 0; k < stride; k++) v4Values[m * stride + k] = values[r * stride + k]!;
        m++;
      } else this.other.addGroup(keys, o, values, r * stride, times);
    }
    this.v4.addGroups(v4Keys, v4Values, m, times);
  }

  /** Adds `n` whole groups of IPv4 addresses, one word each (the mapped address's last), values as addGroups takes them. */
  addV4Groups(keys: Uint32Array, values: Float64Array, n: number, times: boolean): void {
    this.v4.addGroups(keys, values, n, times);
  }

  /**
   * Every group as flat arrays, the two tables apart: IPv4 addresses one word each, the rest
   * four; values as the tables keep them. (Widening the IPv4 keys to four words for a worker's
   * answer, and splitting them again where it is added, cost more than the rest of the copy.)
   */
  flatParts(): {
    v4: { keys: Uint32Array<ArrayBuffer>; values: Float64Array<ArrayBuffer>; size: number };
    other: { keys: Uint32Array<ArrayBuffer>; values: Float64Array<ArrayBuffer>; size: number };
  } {
    return { v4: this.v4.flat(), other: this.other.flat() };
  }
}

/**
 * Offers slots 0 … n of a table (values `stride` apart) whose value `m` reaches the floor to
 * `best`, as `slot * mul + add`; with `gaps`, only those whose flows are not 0 (an empty slot).
 */
function rankSlots(
  vals: Float64Array,
  stride: number,
  n: number,
  m: ValueIndex,
  best: Best,
  mul: number,
  add: number,
  gaps: boolean,
): void {
  for (let s = 0; s < n; s++) {
    const o = s * stride;
    const v = vals[o + m]!;
    if (v >= best.floor && (!gaps || vals[o + FLOWS] !== 0)) best.offer(s * mul + add, v);
  }
}

/** Writes row i of `rv` as one flow at vals[v …]; a table with `withTimes` takes its start and end when `times`, else ±Infinity (which leave a group's first and last as they are). */
function putRow(vals: Float64Array, v: number, rv: RowValues, i: number, withTimes: boolean, times: boolean): void {
  vals[v + BYTES] = rv.bytes[i]!;
  vals[v + PACKETS] = rv.packets[i]!;
  vals[v + FLOWS] = 1;
  if (withTimes) {
    vals[v + FIRST] = times ? rv.start![i]! : Infinity;
    vals[v + LAST] = times ? rv.end![i]! : -Infinity;
  }
}

/** Writes a whole group's values (from[f …]) at vals[v …], its first and last as putRow does a row's start and end. */
function putGroup(vals: Float64Array, v: number, from: Float64Array, f: number, withTimes: boolean, times: boolean): void {
  vals[v + BYTES] = from[f + BYTES]!;
  vals[v + PACKETS] = from[f + PACKETS]!;
  vals[v + FLOWS] = from[f + FLOWS]!;
  if (withTimes) {
    vals[v + FIRST] = times ? from[f + FIRST]! : Infinity;
    vals[v + LAST] = times ? from[f + LAST]! : -Infinity;
  }
}

/**
 * Adds row i to the group at vals[v …] (its flows still 0 when the group is new): counts, and
 * the group's first start and last end (`times`).
 */
function countTimes(vals: Float64Array, v: number, rv: RowValues, i: number): void {
  const fresh = vals[v + FLOWS] === 0;
  if (fresh || rv.start![i]! < vals[v + FIRST]!) vals[v + FIRST] = rv.start![i]!;
  if (fresh || rv.end![i]! > vals[v + LAST]!) vals[v + LAST] = rv.end![i]!;
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
 * The best `n` groups offered to it (Groups.rank): the largest values, and of equal values the
 * smallest keys. A min-heap by rank whose root is the weakest kept; once it holds `n`, `floor` is
 * that root's value and a table offers nothing below it, so past the first few thousand groups
 * almost every group costs one comparison where it is stored. Keys are read only for a value
 * equal to the floor (when every group has the same value, one flow each ranked by flows, that
 * is each group once).
 */
export class Best {
  /** The least value still offered: -Infinity until `n` are held. */
  floor = -Infinity;
  private size = 0;
  private readonly hs: Uint32Array;
  private readonly hv: Float64Array;
  private readonly ka: Uint32Array;
  private readonly kb: Uint32Array;

  constructor(
    private readonly groups: Groups,
    private readonly n: number,
  ) {
    this.hs = new Uint32Array(n);
    this.hv = new Float64Array(n);
    this.ka = new Uint32Array(groups.width);
    this.kb = new Uint32Array(groups.width);
  }

  /** The slots held, best first; the heap is emptied. */
  ranked(): number[] {
    const out = new Array<number>(this.size);
    // The weakest held goes last, then the weakest of the rest before it, and so on.
    while (this.size > 0) {
      const last = --this.size;
      out[last] = this.hs[0]!;
      if (last > 0) this.siftDown(this.hs[last]!, this.hv[last]!, last);
    }
    this.floor = -Infinity;
    return out;
  }

  offer(slot: number, v: number): void {
    const { hs, hv, n } = this;
    if (this.size < n) {
      // Sifted up from the end.
      let c = this.size++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!this.below(v, slot, hv[p]!, hs[p]!)) break;
        hs[c] = hs[p]!;
        hv[c] = hv[p]!;
        c = p;
      }
      hs[c] = slot;
      hv[c] = v;
    } else {
      if (v < hv[0]! || (v === hv[0] && !this.keyAbove(hs[0]!, slot))) return;
      this.siftDown(slot, v, n);
    }
    if (this.size === n) this.floor = hv[0]!;
  }

  /** Puts slot (value v) at the root of the heap's first `size` entries, and sifts it down. */
  private siftDown(slot: number, v: number, size: number): void {
    const { hs, hv } = this;
    let c = 0;
    for (;;) {
      const l = 2 * c + 1;
      if (l >= size) break;
      const r = l + 1;
      const k = r < size && this.below(hv[r]!, hs[r]!, hv[l]!, hs[l]!) ? r : l;
      if (!this.below(hv[k]!, hs[k]!, v, slot)) break;
      hs[c] = hs[k]!;
      hv[c] = hv[k]!;
      c = k;
    }
    hs[c] = slot;
    hv[c] = v;
  }

  /** Whether the group of slot a (value va) ranks below that of slot b (value vb). */
  private below(va: number, a: number, vb: number, b: number): boolean {
    return va < vb || (va === vb && this.keyAbove(a, b));
  }

  private keyAbove(a: number, b: number): boolean {
    this.groups.key(a, this.ka, 0);
    this.groups.key(b, this.kb, 0);
    return compareKeyWords(this.ka, 0, this.kb, 0, this.groups.width) > 0;
  }
}

/** The slots of the `n` largest groups by metric `m`, largest first; equal values in key order. */
export function topSlots(groups: Groups, m: MetricIndex, n: number): number[] {
  if (n <= 0) return [];
  const best = new Best(groups, n);
  groups.rank(m, best);
  return best.ranked();
}

/**
 * Adds the group at from[v …] to the group at vals[o …] (its flows still 0 when new): counts, and
 * with `times` the earlier first start and the later last end.
 */
function addCounts(vals: Float64Array, o: number, from: Float64Array, v: number, times: boolean): void {
  if (times) {
    const fresh = vals[o + FLOWS] === 0;
    if (fresh || from[v + FIRST]! < vals[o + FIRST]!) vals[o + FIRST] = from[v + FIRST]!;
    if (fresh || from[v + LAST]! > vals[o + LAST]!) vals[o + LAST] = from[v + LAST]!;
  }
  vals[o + BYTES] = vals[o + BYTES]! + from[v + BYTES]!;
  vals[o + PACKETS] = vals[o + PACKETS]! + from[v + PACKETS]!;
  vals[o + FLOWS] = vals[o + FLOWS]! + from[v + FLOWS]!;
}
