/**
 * Flows as columns: the collector's output and the capture writer's input.
 *
 * Decoders append rows to a FlowBatch instead of building one object per
 * flow; each column is a typed array, so the writer can compress columns as
 * they are and a reader can hand back the same shape. Addresses are 16 bytes
 * per row: IPv4 is stored IPv4-mapped (::ffff:a.b.c.d) and `ipVersion` says
 * which family the flow had.
 */

/** Names of the numeric (non-address) columns, in file order. */
export const NUMERIC_COLUMNS = [
  'received', // ms since epoch, when the collector received the datagram
  'start', // ms since epoch, flow start
  'end', // ms since epoch, flow end
  'bytes', // scaled by sampling
  'packets', // scaled by sampling
  'srcPort',
  'dstPort',
  'proto',
  'tcpFlags',
  'tos',
  'ipVersion',
  'samplingInterval',
  'inputIf',
  'outputIf',
  'srcAs',
  'dstAs',
  // bytes and packets are float64, exact to 2^53; for a larger count the column holds the
  // nearest float64 and this the (signed) difference, so that bytes + bytesRest is exact.
  // Zero for every honest flow. See `exactCount`.
  'bytesRest',
  'packetsRest',
] as const;

/** Names of the 16-byte address columns. */
export const ADDRESS_COLUMNS = ['srcAddr', 'dstAddr', 'nextHop', 'exporter'] as const;

export type NumericColumn = (typeof NUMERIC_COLUMNS)[number];
export type AddressColumn = (typeof ADDRESS_COLUMNS)[number];

/**
 * The typed array each numeric column uses. 64-bit counters are float64 (exact to 2^53, which
 * every consumer sums and compares as numbers) plus a rest column that makes them exact up to
 * 2^64 − 1 and beyond (a counter scaled by sampling): see `exactCount`.
 */
export interface NumericArrays {
  received: Float64Array;
  start: Float64Array;
  end: Float64Array;
  bytes: Float64Array;
  packets: Float64Array;
  srcPort: Uint16Array;
  dstPort: Uint16Array;
  proto: Uint8Array;
  tcpFlags: Uint8Array;
  tos: Uint8Array;
  ipVersion: Uint8Array;
  samplingInterval: Uint32Array;
  inputIf: Uint32Array;
  outputIf: Uint32Array;
  srcAs: Uint32Array;
  dstAs: Uint32Array;
  bytesRest: Float64Array;
  packetsRest: Float64Array;
}

type ArrayCtor = Float64ArrayConstructor | Uint32ArrayConstructor | Uint16ArrayConstructor | Uint8ArrayConstructor;

/** Constructor of each numeric column, so readers and writers agree on widths. */
export const COLUMN_TYPES: { readonly [K in NumericColumn]: ArrayCtor } = {
  received: Float64Array,
  start: Float64Array,
  end: Float64Array,
  bytes: Float64Array,
  packets: Float64Array,
  srcPort: Uint16Array,
  dstPort: Uint16Array,
  proto: Uint8Array,
  tcpFlags: Uint8Array,
  tos: Uint8Array,
  ipVersion: Uint8Array,
  samplingInterval: Uint32Array,
  inputIf: Uint32Array,
  outputIf: Uint32Array,
  srcAs: Uint32Array,
  dstAs: Uint32Array,
  bytesRest: Float64Array,
  packetsRest: Float64Array,
};

/** Whether this platform stores a word's low byte first (address columns are then read and written as words). */
export const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** The last word of the IPv4-mapped prefix (bytes 00 00 ff ff) as a native 32-bit integer, whatever the byte order. */
export const MAPPED_WORD = new Int32Array(Uint8Array.from([0, 0, 0xff, 0xff]).buffer)[0]!;

/** An address column as native 32-bit words, four per row (copied first when it does not start on a word boundary). */
export function addressWords(col: Uint8Array): Int32Array {
  const aligned = col.byteOffset % 4 === 0 ? col : col.slice();
  return new Int32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 2);
}

/** The buffers under a batch's columns, in NUMERIC_COLUMNS and ADDRESS_COLUMNS order (e.g. to cross threads). */
export interface ColumnBuffers {
  numeric: ArrayBuffer[];
  addrs: ArrayBuffer[];
}

type NumericArray = Float64Array | Uint32Array | Uint16Array | Uint8Array;

/** A growable set of flow columns; `length` rows are valid. */
export class FlowBatch {
  length = 0;
  private cap: number;
  private initialCap: number;
  cols: NumericArrays;
  srcAddr!: Uint8Array;
  dstAddr!: Uint8Array;
  nextHop!: Uint8Array;
  exporter!: Uint8Array;
  /**
   * The address columns as native 32-bit words, four per row, over the same
   * memory (decoders write addresses a word at a time); kept in step with the
   * columns by `setAddresses`, so no view is made per datagram.
   */
  srcWords!: Int32Array;
  dstWords!: Int32Array;
  nextHopWords!: Int32Array;
  exporterWords!: Int32Array;
  /**
   * Set by whoever lent this batch to a sink through `FlowSink.take` (the
   * threaded listeners): a sink that is done with the batch's arrays calls it
   * once, and must not touch the batch afterwards; the arrays then go back to
   * be filled again instead of being allocated anew. Sinks that never call it
   * only cost that reuse.
   */
  release: (() => void) | undefined = undefined;

  constructor(capacity = 1024) {
    this.cap = Math.max(1, capacity);
    this.initialCap = this.cap;
    this.cols = FlowBatch.allocNumeric(this.cap);
    this.setAddresses(FlowBatch.allocAddresses(this.cap));
  }

  /** Points the address columns (each starting on a word boundary) and their word views at `a`. */
  private setAddresses(a: Readonly<Record<AddressColumn, Uint8Array>>): void {
    const words = (col: Uint8Array): Int32Array => new Int32Array(col.buffer, col.byteOffset, col.byteLength >> 2);
    this.srcAddr = a.srcAddr;
    this.dstAddr = a.dstAddr;
    this.nextHop = a.nextHop;
    this.exporter = a.exporter;
    this.srcWords = words(a.srcAddr);
    this.dstWords = words(a.dstAddr);
    this.nextHopWords = words(a.nextHop);
    this.exporterWords = words(a.exporter);
  }

  private static allocAddresses(rows: number): Record<AddressColumn, Uint8Array> {
    return {
      srcAddr: new Uint8Array(rows * 16),
      dstAddr: new Uint8Array(rows * 16),
      nextHop: new Uint8Array(rows * 16),
      exporter: new Uint8Array(rows * 16),
    };
  }

  /**
   * A batch of `length` rows (≥ 1) over columns that already hold them (not copied), e.g.
   * buffers transferred from a worker; each array holds at least `length` rows, and the
   * smallest room of them is the batch's capacity.
   */
  static over(length: number, cols: NumericArrays, addrs: Readonly<Record<AddressColumn, Uint8Array>>): FlowBatch {
    // Built through the constructor (one row) so every batch has the same shape, then pointed at the columns.
    const b = new FlowBatch(1);
    let cap = Infinity;
    for (const name of NUMERIC_COLUMNS) cap = Math.min(cap, cols[name].length);
    for (const name of ADDRESS_COLUMNS) cap = Math.min(cap, Math.floor(addrs[name].length / 16));
    if (cap < length) throw new RangeError(`columns hold ${cap} rows, fewer than ${length}`);
    b.cap = cap;
    b.initialCap = cap;
    b.cols = cols;
    // Address columns start on a word boundary (decoders and encoders read them as 32-bit words).
    const aligned = (a: Uint8Array): Uint8Array => (a.byteOffset % 4 === 0 ? a : a.slice());
    b.setAddresses({
      srcAddr: aligned(addrs.srcAddr),
      dstAddr: aligned(addrs.dstAddr),
      nextHop: aligned(addrs.nextHop),
      exporter: aligned(addrs.exporter),
    });
    b.length = length;
    return b;
  }

  /** The batch of `length` rows whose column buffers `handOff` gave away (e.g. after they crossed threads). */
  static fromBuffers(length: number, given: Readonly<ColumnBuffers>): FlowBatch {
    return FlowBatch.over(length, FlowBatch.numericOver(given.numeric), FlowBatch.addressesOver(given.addrs));
  }

  /** Address columns over whole buffers, in ADDRESS_COLUMNS order. */
  private static addressesOver(buffers: readonly ArrayBuffer[]): Record<AddressColumn, Uint8Array> {
    const addrs = {} as Record<AddressColumn, Uint8Array>;
    ADDRESS_COLUMNS.forEach((c, i) => (addrs[c] = new Uint8Array(buffers[i]!)));
    return addrs;
  }

  /** Numeric columns over whole buffers, in NUMERIC_COLUMNS order. */
  private static numericOver(buffers: readonly ArrayBuffer[]): NumericArrays {
    const cols = {} as Record<NumericColumn, NumericArray>;
    NUMERIC_COLUMNS.forEach((c, i) => (cols[c] = new COLUMN_TYPES[c](buffers[i]!)));
    return cols as unknown as NumericArrays;
  }

  private static allocNumeric(n: number): NumericArrays {
    const out = {} as Record<NumericColumn, Float64Array | Uint32Array | Uint16Array | Uint8Array>;
    for (const name of NUMERIC_COLUMNS) out[name] = new COLUMN_TYPES[name](n);
    return out as unknown as NumericArrays;
  }

  /**
   * Gives the column buffers away (to be transferred to another thread) and
   * starts over empty with the same capacity: no row is copied. The new
   * columns are `spare`'s buffers when they have exactly that capacity (column
   * buffers a sink gave back, see `release`), else fresh arrays. Reused
   * arrays still hold old rows; every decoder writes every column of a row it
   * adds (`addRow` zeroes), so nothing of them shows. For batches whose arrays
   * the batch allocated itself (not `over` views).
   */
  handOff(spare?: ColumnBuffers): ColumnBuffers {
    const given = this.buffers();
    // Back to the room the batch was made with: one datagram that made it grow once must
    // not double every batch after it.
    this.cap = this.initialCap;
    if (spare && FlowBatch.holdsRows(spare, this.cap)) {
      this.cols = FlowBatch.numericOver(spare.numeric);
      this.setAddresses(FlowBatch.addressesOver(spare.addrs));
    } else {
      this.cols = FlowBatch.allocNumeric(this.cap);
      this.setAddresses(FlowBatch.allocAddresses(this.cap));
    }
    this.length = 0;
    return given;
  }

  /** True when `b` is a full set of column buffers of exactly `rows` rows each. */
  static holdsRows(b: ColumnBuffers, rows: number): boolean {
    if (b.numeric.length !== NUMERIC_COLUMNS.length || b.addrs.length !== ADDRESS_COLUMNS.length) return false;
    return (
      NUMERIC_COLUMNS.every((c, i) => b.numeric[i]!.byteLength === rows * COLUMN_TYPES[c].BYTES_PER_ELEMENT) &&
      b.addrs.every((a) => a.byteLength === rows * 16)
    );
  }

  /** The buffers under the batch's columns (whole, as `handOff` gives them). */
  buffers(): ColumnBuffers {
    return {
      numeric: NUMERIC_COLUMNS.map((name) => this.cols[name].buffer as ArrayBuffer),
      addrs: ADDRESS_COLUMNS.map((name) => this[name].buffer as ArrayBuffer),
    };
  }

  /** Rows that can be appended before the arrays grow. */
  get capacity(): number {
    return this.cap;
  }

  /** Makes room for `extra` more rows, doubling the arrays when needed. */
  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.cap) return;
    let cap = this.cap;
    while (cap < need) cap *= 2;
    const cols = FlowBatch.allocNumeric(cap);
    for (const name of NUMERIC_COLUMNS) {
      (cols[name] as Float64Array).set((this.cols[name] as Float64Array).subarray(0, this.length));
    }
    this.cols = cols;
    const grown = FlowBatch.allocAddresses(cap);
    for (const name of ADDRESS_COLUMNS) grown[name].set(this[name].subarray(0, this.length * 16));
    this.setAddresses(grown);
    this.cap = cap;
  }

  /**
   * Appends one zeroed row and returns its index; callers fill the columns.
   * Rows are zeroed so a decoder only writes the fields its template has.
   */
  addRow(): number {
    if (this.length === this.cap) this.reserve(1);
    const i = this.length++;
    for (const name of NUMERIC_COLUMNS) this.cols[name][i] = 0;
    for (const name of ADDRESS_COLUMNS) this[name].fill(0, i * 16, i * 16 + 16);
    return i;
  }

  /** Copies `count` rows starting at `from` to start at `to` (`to` ≤ `from`; overlapping is fine); `length` is the caller's to set. */
  moveRows(from: number, to: number, count: number): void {
    for (const name of NUMERIC_COLUMNS) this.cols[name].copyWithin(to, from, from + count);
    for (const name of ADDRESS_COLUMNS) this[name].copyWithin(to * 16, from * 16, (from + count) * 16);
  }

  /**
   * Appends rows `order[from]`, `order[from + 1]`, … (`count` of them) of `src`, in that order
   * (a contiguous range copies faster with capture/open-hour.ts's appendRows).
   */
  gatherRows(src: FlowBatch, order: Uint32Array, from: number, count: number): void {
    this.reserve(count);
    const at = this.length;
    for (const name of NUMERIC_COLUMNS) {
      const to = this.cols[name];
      const of = src.cols[name];
      for (let k = 0; k < count; k++) to[at + k] = of[order[from + k]!]!;
    }
    const words: readonly (readonly [Int32Array, Int32Array])[] = [
      [this.srcWords, src.srcWords],
      [this.dstWords, src.dstWords],
      [this.nextHopWords, src.nextHopWords],
      [this.exporterWords, src.exporterWords],
    ];
    for (const [to, of] of words) {
      for (let k = 0; k < count; k++) {
        const o = (at + k) * 4;
        const s = order[from + k]! * 4;
        to[o] = of[s]!;
        to[o + 1] = of[s + 1]!;
        to[o + 2] = of[s + 2]!;
        to[o + 3] = of[s + 3]!;
      }
    }
    this.length = at + count;
  }

  /** Drops the last row (a decoder that found a row invalid after starting it). */
  popRow(): void {
    if (this.length > 0) this.length--;
  }

  /** Forgets every row, keeping the arrays. */
  clear(): void {
    this.length = 0;
  }

  /** Stores an IPv4 address (host-order uint32) as IPv4-mapped IPv6 at row i. */
  setV4(column: AddressColumn, i: number, v4: number): void {
    const a = this[column];
    const o = i * 16;
    a.fill(0, o, o + 10);
    a[o + 10] = 0xff;
    a[o + 11] = 0xff;
    a[o + 12] = v4 >>> 24;
    a[o + 13] = (v4 >>> 16) & 0xff;
    a[o + 14] = (v4 >>> 8) & 0xff;
    a[o + 15] = v4 & 0xff;
  }

  /** Copies 16 bytes of an IPv6 address from `src` at `offset` into row i. */
  setV6(column: AddressColumn, i: number, src: Uint8Array, offset: number): void {
    this[column].set(src.subarray(offset, offset + 16), i * 16);
  }

  /** Copies the address of row i in `column` (16 bytes) from another batch row. */
  copyAddress(column: AddressColumn, i: number, from: Uint8Array, fromRow: number): void {
    this[column].set(from.subarray(fromRow * 16, fromRow * 16 + 16), i * 16);
  }
}

/** Formats the 16-byte address at row i as text (dotted quad for IPv4-mapped). */
export function formatAddress(column: Uint8Array, i: number): string {
  const o = i * 16;
  let mapped = column[o + 10] === 0xff && column[o + 11] === 0xff;
  for (let k = 0; k < 10 && mapped; k++) if (column[o + k] !== 0) mapped = false;
  if (mapped) return `${column[o + 12]}.${column[o + 13]}.${column[o + 14]}.${column[o + 15]}`;
  const words: string[] = [];
  for (let k = 0; k < 16; k += 2) words.push(((column[o + k]! << 8) | column[o + k + 1]!).toString(16));
  // Compress the longest run of zero words, as RFC 5952 asks.
  let bestStart = -1;
  let bestLen = 0;
  for (let s = 0; s < 8;) {
    if (words[s] !== '0') {
      s++;
      continue;
    }
    let e = s;
    while (e < 8 && words[e] === '0') e++;
    if (e - s > bestLen && e - s > 1) {
      bestStart = s;
      bestLen = e - s;
    }
    s = e;
  }
  if (bestStart < 0) return words.join(':');
  const head = words.slice(0, bestStart).join(':');
  const tail = words.slice(bestStart + bestLen).join(':');
  return `${head}::${tail}`;
}

/** Counts below this are exact as float64; above it a count column holds the nearest float64 and its rest column the difference. */
export const EXACT_FLOAT_LIMIT = 2 ** 53;

/**
 * The count `hi` × 2^32 + `lo` (two unsigned 32-bit words) times `factor` (a sampling
 * interval, an integer ≥ 1), exactly: returns the nearest float64 and writes the rest (exact
 * count − that float, an integer) to `rest[0]`. The decoders' rare path, taken only when the
 * plain float product reaches 2^53; the values and the factor are bounded, so the BigInt work is too.
 */
export function scaleCount(hi: number, lo: number, factor: number, rest: Float64Array): number {
  const exact = ((BigInt(hi) << 32n) + BigInt(lo)) * BigInt(Math.max(1, Math.floor(factor)));
  const f = Number(exact);
  rest[0] = Number(exact - BigInt(f));
  return f;
}

/** The exact count a column stores as `value` + `rest`: a number up to 2^53 − 1, a bigint above. */
export function exactCount(value: number, rest: number): number | bigint {
  if (rest === 0 && Number.isSafeInteger(value)) return value;
  // Decoders write integers only; anything else (a damaged or foreign file) is the float as it is, truncated.
  if (!Number.isFinite(value) || !Number.isFinite(rest)) return 0;
  const v = BigInt(Math.trunc(value)) + BigInt(Math.trunc(rest));
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}
