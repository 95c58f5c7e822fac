/**
 * Column transforms applied before compression, and their inverses.
 *
 * General-purpose compressors see flow columns as noise unless the values are
 * turned into small, similar bytes first. Each numeric column is stored as
 * one of: a constant; frame-of-reference integers (value − min) in the
 * narrowest width, byte-shuffled (all low bytes, then all next bytes, …);
 * zigzag deltas (received time, which grows with the row number); or values
 * relative to another column (start relative to received, end relative to
 * start: both are small durations). Addresses split into IPv4-mapped rows (4
 * bytes, shuffled) and the rest (16 bytes, shuffled). Anything that does not
 * fit (non-integers, ranges ≥ 2^32) is stored as raw shuffled float64, so the
 * round trip is exact for every value a FlowBatch can hold.
 */

import { addressWords, LITTLE_ENDIAN, MAPPED_WORD } from '../../common/flow-batch.js';

/** Transform identifiers as stored in a column directory entry. */
export const TRANSFORM = { const: 0, int: 1, delta: 2, rel: 3, raw: 4, addr: 5 } as const;

/** Numeric typed arrays a FlowBatch column can be. */
export type NumericArray = Float64Array | Uint32Array | Uint16Array | Uint8Array;

/** One column after its transform, before compression. */
export interface TransformedColumn {
  transform: number;
  /** Bytes per value (int/delta/rel/raw), or the address layout (addr). */
  width: number;
  /** Frame-of-reference base, first value (delta) or IPv4 row count (addr). */
  base: number;
  min: number;
  max: number;
  bytes: Uint8Array;
}

/** Encoded bytes do not match their directory entry. */
export class ColumnDecodeError extends Error {
  override readonly name = 'ColumnDecodeError';
}

const TWO32 = 4294967296;

function widthFor(range: number): number {
  return range < 256 ? 1 : range < 65536 ? 2 : range < TWO32 ? 4 : 0;
}

function getShuffled(src: Uint8Array, n: number, width: number, i: number): number {
  if (width === 1) return src[i]!;
  if (width === 2) return src[i]! | (src[n + i]! << 8);
  return (src[i]! | (src[n + i]! << 8) | (src[2 * n + i]! << 16) | (src[3 * n + i]! << 24)) >>> 0;
}

// The encoder's loops over times and counters read float64 columns; integer column classes
// have loops of their own (encodeIntegers). No rarely taken branch inside a loop whose first
// use would throw the optimised code away. One scratch array (deltas, or values relative to
// another column), reused between calls.
let scratchArray = new Float64Array(0);

function scratch(n: number): Float64Array {
  if (scratchArray.length < n) scratchArray = new Float64Array(n);
  return scratchArray;
}

// Results of rangeOfIntegers and relativeTo (module state instead of an object per call).
let rangeMin = 0;
let rangeMax = 0;

/** Range of a float64 column, and whether every value is a safe integer, in one pass (fractions and NaN leave a non-zero sum). */
function rangeOfIntegers(d: Float64Array, n: number): boolean {
  let min = Infinity;
  let max = -Infinity;
  let frac = 0;
  for (let i = 0; i < n; i++) {
    const v = d[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    frac += v - Math.floor(v);
  }
  rangeMin = min;
  rangeMax = max;
  return frac === 0 && min >= -Number.MAX_SAFE_INTEGER && max <= Number.MAX_SAFE_INTEGER;
}

/** Fills r with d − ref and takes its range, in one pass; true when every difference is a safe integer (as rangeOfIntegers). */
function relativeTo(d: Float64Array, ref: Float64Array, r: Float64Array, n: number): boolean {
  let min = Infinity;
  let max = -Infinity;
  let frac = 0;
  for (let i = 0; i < n; i++) {
    const v = d[i]! - ref[i]!;
    r[i] = v;
    if (v < min) min = v;
    if (v > max) max = v;
    frac += v - Math.floor(v);
  }
  rangeMin = min;
  rangeMax = max;
  return frac === 0 && min >= -Number.MAX_SAFE_INTEGER && max <= Number.MAX_SAFE_INTEGER;
}

function encodeRawFloat(d: Float64Array, n: number, min: number, max: number): TransformedColumn {
  const src = new Uint8Array(d.buffer, d.byteOffset, n * 8);
  const out = new Uint8Array(n * 8);
  for (let i = 0; i < n; i++) for (let k = 0; k < 8; k++) out[k * n + i] = src[i * 8 + k]!;
  return { transform: TRANSFORM.raw, width: 8, base: 0, min, max, bytes: out };
}

/**
 * Frame-of-reference: (d[i] − base) in `width` bytes, shuffled; undefined
 * when the range needs more than 4 bytes. Plain loops per width because
 * this is the writer's hottest code.
 */
function encodeFor(
  d: Float64Array,
  n: number,
  base: number,
  top: number,
  transform: number,
  min: number,
  max: number,
): TransformedColumn | undefined {
  const width = widthFor(top - base);
  if (width === 0) return undefined;
  const out = new Uint8Array(n * width);
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = d[i]! - base;
  } else if (width === 2) {
    for (let i = 0; i < n; i++) {
      const v = d[i]! - base;
      out[i] = v;
      out[n + i] = v >>> 8;
    }
  } else {
    const p2 = 2 * n;
    const p3 = 3 * n;
    for (let i = 0; i < n; i++) {
      const v = d[i]! - base;
      out[i] = v;
      out[n + i] = v >>> 8;
      out[p2 + i] = v >>> 16;
      out[p3 + i] = v >>> 24;
    }
  }
  return { transform, width, base, min, max, bytes: out };
}

/** Zigzag deltas of consecutive values (the first is the base); undefined when one needs more than 4 bytes. */
function encodeDelta(d: Float64Array, n: number, min: number, max: number): TransformedColumn | undefined {
  const z = scratch(n);
  z[0] = 0;
  let top = 0; // zigzag values are ≥ 0, and z[0] is 0
  for (let i = 1; i < n; i++) {
    const v = d[i]! - d[i - 1]!;
    const zz = 2 * Math.abs(v) - (v < 0 ? 1 : 0); // zigzag: 2v, or −2v − 1 below zero
    z[i] = zz;
    if (zz > top) top = zz;
  }
  if (top >= TWO32) return undefined;
  const col = encodeFor(z, n, 0, top, TRANSFORM.delta, min, max)!;
  // Row 0 holds no delta (0 either way); the first value is the base.
  col.base = d[0]!;
  return col;
}

/**
 * Transforms one numeric column of `n` rows. `kind` picks the preferred
 * transform; `ref` is the column a `rel` column is relative to.
 */
export function encodeNumeric(
  values: NumericArray,
  n: number,
  kind: 'int' | 'delta' | 'rel',
  ref?: Float64Array,
): TransformedColumn {
  if (n === 0) return constantColumn(0);
  if (!(values instanceof Float64Array)) return encodeIntegers(values, n);
  // Times and counters: checked for integers in the same pass as their range.
  const d = values;
  const integral = rangeOfIntegers(d, n);
  const min = rangeMin;
  const max = rangeMax;
  if (!integral) {
    // NaN and fractions land here (NaN never enters the range); min/max stay meaningful only for finite values.
    return encodeRawFloat(d, n, Number.isNaN(min) ? 0 : min, Number.isNaN(max) ? 0 : max);
  }
  if (min === max) return constantColumn(min);
  if (kind === 'delta') {
    const col = encodeDelta(d, n, min, max);
    if (col) return col;
  }
  if (kind === 'rel' && ref) {
    const r = scratch(n);
    if (relativeTo(d, ref, r, n)) {
      const col = encodeFor(r, n, rangeMin, rangeMax, TRANSFORM.rel, min, max);
      if (col) return col;
    }
  }
  return encodeFor(d, n, min, max, TRANSFORM.int, min, max) ?? encodeRawFloat(d, n, min, max);
}

/** A column whose every value is `value`: the value itself, as a little-endian float64. */
function constantColumn(value: number): TransformedColumn {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value, true);
  return { transform: TRANSFORM.const, width: 0, base: value, min: value, max: value, bytes };
}

/**
 * An integer column class (ports, protocol, interfaces, AS numbers: values
 * below 2^32) as a constant or frame-of-reference integers, read where it
 * lies: converting it to float64 first cost as much as both passes here.
 * Its loops are encodeFor's over the integer classes, kept apart so that
 * each loop sees one kind of array.
 */
function encodeIntegers(d: Uint8Array | Uint16Array | Uint32Array, n: number): TransformedColumn {
  let min = d[0]!;
  let max = min;
  for (let i = 1; i < n; i++) {
    const v = d[i]!;
    if (v < min) min = v;
    else if (v > max) max = v;
  }
  if (min === max) return constantColumn(min);
  const width = widthFor(max - min);
  const out = new Uint8Array(n * width);
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = d[i]! - min;
  } else if (width === 2) {
    for (let i = 0; i < n; i++) {
      const v = d[i]! - min;
      out[i] = v;
      out[n + i] = v >>> 8;
    }
  } else {
    const p2 = 2 * n;
    const p3 = 3 * n;
    for (let i = 0; i < n; i++) {
      const v = d[i]! - min;
      out[i] = v;
      out[n + i] = v >>> 8;
      out[p2 + i] = v >>> 16;
      out[p3 + i] = v >>> 24;
    }
  }
  return { transform: TRANSFORM.int, width, base: min, min, max, bytes: out };
}

/** Inverse of encodeNumeric: fills `out[0..n)`; `ref` must already be decoded for `rel`. */
export function decodeNumeric(
  col: { transform: number; width: number; base: number },
  bytes: Uint8Array,
  n: number,
  out: NumericArray,
  ref?: Float64Array,
): void {
  const { transform, width, base } = col;
  if (transform === TRANSFORM.const) {
    if (bytes.length !== 8) throw new ColumnDecodeError(`constant column holds ${bytes.length} bytes, expected 8`);
    out.fill(new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true), 0, n);
    return;
  }
  if (transform === TRANSFORM.raw) {
    if (width !== 8 || bytes.length !== n * 8) throw new ColumnDecodeError('raw column has the wrong size');
    const tmp = new Uint8Array(n * 8);
    for (let i = 0; i < n; i++) for (let k = 0; k < 8; k++) tmp[i * 8 + k] = bytes[k * n + i]!;
    const f = new Float64Array(tmp.buffer);
    for (let i = 0; i < n; i++) out[i] = f[i]!;
    return;
  }
  if ((width !== 1 && width !== 2 && width !== 4) || bytes.length !== n * width) {
    throw new ColumnDecodeError(`column of ${n} rows × ${width} bytes holds ${bytes.length} bytes`);
  }
  if (transform === TRANSFORM.int) {
    for (let i = 0; i < n; i++) out[i] = base + getShuffled(bytes, n, width, i);
  } else if (transform === TRANSFORM.delta) {
    let v = base;
    for (let i = 0; i < n; i++) {
      const z = getShuffled(bytes, n, width, i);
      v += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      out[i] = v;
    }
  } else if (transform === TRANSFORM.rel) {
    if (!ref) throw new ColumnDecodeError('relative column without its reference');
    for (let i = 0; i < n; i++) out[i] = ref[i]! + base + getShuffled(bytes, n, width, i);
  } else {
    throw new ColumnDecodeError(`unknown transform ${transform}`);
  }
}

const ADDR_MIXED = 1; // a kind byte per row precedes the parts
const ADDR_ALL_V4 = 2;
const ADDR_ALL_V6 = 3;

/** Transforms an address column (16 bytes per row) of `n` rows. */
export function encodeAddresses(col: Uint8Array, n: number): TransformedColumn {
  // Compared as 32-bit words: four compares per row instead of sixteen. On little-endian
  // platforms the loops below also take an address's bytes out of its words (shifts).
  const w = addressWords(col.subarray(0, n * 16));
  const w0 = w[0];
  const w1 = w[1];
  const w2 = w[2];
  const w3 = w[3];
  let same = true;
  for (let k = 4; k < n * 4; k += 4) {
    if (w[k] !== w0 || w[k + 1] !== w1 || w[k + 2] !== w2 || w[k + 3] !== w3) {
      same = false;
      break;
    }
  }
  if (n === 0 || same) {
    return { transform: TRANSFORM.const, width: 0, base: 0, min: 0, max: 0, bytes: col.slice(0, 16) };
  }
  let mapped = 0;
  for (let k = 0; k < n * 4; k += 4) if (w[k] === 0 && w[k + 1] === 0 && w[k + 2] === MAPPED_WORD) mapped++;
  const others = n - mapped;
  const layout = mapped === n ? ADDR_ALL_V4 : mapped === 0 ? ADDR_ALL_V6 : ADDR_MIXED;
  const kinds = layout === ADDR_MIXED ? n : 0;
  const out = new Uint8Array(kinds + mapped * 4 + others * 16);
  const v4 = kinds;
  const v6 = kinds + mapped * 4;
  if (LITTLE_ENDIAN) shuffleAddressWords(w, n, out, kinds > 0, v4, mapped, v6, others);
  else shuffleAddressBytes(w, new Uint8Array(w.buffer, w.byteOffset, n * 16), n, out, kinds > 0, v4, mapped, v6, others);
  return { transform: TRANSFORM.addr, width: layout, base: mapped, min: mapped, max: others, bytes: out };
}

/**
 * The planes of encodeAddresses from native little-endian words: plane b of
 * a part holds byte b of each of its rows; kind bytes (0 = IPv4-mapped) when
 * `withKinds`. A Uint8Array store keeps the low 8 bits of what it is given.
 */
function shuffleAddressWords(
  w: Int32Array,
  n: number,
  out: Uint8Array,
  withKinds: boolean,
  v4: number,
  mapped: number,
  v6: number,
  others: number,
): void {
  let j4 = v4;
  let j6 = v6;
  const o6 = others;
  for (let i = 0; i < n; i++) {
    const k = i * 4;
    const a = w[k]!;
    const b = w[k + 1]!;
    const c = w[k + 2]!;
    const d = w[k + 3]!;
    if (a === 0 && b === 0 && c === MAPPED_WORD) {
      out[j4] = d;
      out[j4 + mapped] = d >>> 8;
      out[j4 + 2 * mapped] = d >>> 16;
      out[j4 + 3 * mapped] = d >>> 24;
      j4++;
    } else {
      if (withKinds) out[i] = 1;
      out[j6] = a;
      out[j6 + o6] = a >>> 8;
      out[j6 + 2 * o6] = a >>> 16;
      out[j6 + 3 * o6] = a >>> 24;
      out[j6 + 4 * o6] = b;
      out[j6 + 5 * o6] = b >>> 8;
      out[j6 + 6 * o6] = b >>> 16;
      out[j6 + 7 * o6] = b >>> 24;
      out[j6 + 8 * o6] = c;
      out[j6 + 9 * o6] = c >>> 8;
      out[j6 + 10 * o6] = c >>> 16;
      out[j6 + 11 * o6] = c >>> 24;
      out[j6 + 12 * o6] = d;
      out[j6 + 13 * o6] = d >>> 8;
      out[j6 + 14 * o6] = d >>> 16;
      out[j6 + 15 * o6] = d >>> 24;
      j6++;
    }
  }
}

/** shuffleAddressWords byte by byte, for big-endian platforms. */
function shuffleAddressBytes(
  w: Int32Array,
  bytes: Uint8Array,
  n: number,
  out: Uint8Array,
  withKinds: boolean,
  v4: number,
  mapped: number,
  v6: number,
  others: number,
): void {
  let j4 = 0;
  let j6 = 0;
  for (let i = 0; i < n; i++) {
    const k = i * 4;
    const o = i * 16;
    if (w[k] === 0 && w[k + 1] === 0 && w[k + 2] === MAPPED_WORD) {
      for (let b = 0; b < 4; b++) out[v4 + b * mapped + j4] = bytes[o + 12 + b]!;
      j4++;
    } else {
      if (withKinds) out[i] = 1;
      for (let b = 0; b < 16; b++) out[v6 + b * others + j6] = bytes[o + b]!;
      j6++;
    }
  }
}

/** Inverse of encodeAddresses: fills `out[0..n*16)`. */
export function decodeAddresses(
  col: { transform: number; width: number; base: number },
  bytes: Uint8Array,
  n: number,
  out: Uint8Array,
): void {
  if (col.transform === TRANSFORM.const) {
    if (bytes.length !== 16) throw new ColumnDecodeError('constant address column is not 16 bytes');
    for (let i = 0; i < n; i++) out.set(bytes, i * 16);
    return;
  }
  if (col.transform !== TRANSFORM.addr) throw new ColumnDecodeError(`unknown address transform ${col.transform}`);
  const layout = col.width;
  const mapped = col.base;
  const others = n - mapped;
  const kinds = layout === ADDR_MIXED ? n : 0;
  const valid =
    mapped >= 0 &&
    mapped <= n &&
    ((layout === ADDR_ALL_V4 && mapped === n) || (layout === ADDR_ALL_V6 && mapped === 0) || layout === ADDR_MIXED) &&
    bytes.length === kinds + mapped * 4 + others * 16;
  if (!valid) throw new ColumnDecodeError('address column size does not match its layout');
  const v4 = kinds;
  const v6 = kinds + mapped * 4;
  let j4 = 0;
  let j6 = 0;
  for (let i = 0; i < n; i++) {
    const o = i * 16;
    const isV4 = layout === ADDR_ALL_V4 || (layout === ADDR_MIXED && bytes[i] === 0);
    if (isV4) {
      if (j4 >= mapped) throw new ColumnDecodeError('address kinds disagree with the IPv4 row count');
      out.fill(0, o, o + 10);
      out[o + 10] = 0xff;
      out[o + 11] = 0xff;
      for (let k = 0; k < 4; k++) out[o + 12 + k] = bytes[v4 + k * mapped + j4]!;
      j4++;
    } else {
      if (j6 >= others) throw new ColumnDecodeError('address kinds disagree with the IPv6 row count');
      for (let k = 0; k < 16; k++) out[o + k] = bytes[v6 + k * others + j6]!;
      j6++;
    }
  }
}

/**
 * Like decodeNumeric, but only for the rows in `idx` (ascending), written to
 * `out[outAt + k]`: a frame-of-reference column is read in place, so picking
 * 200 rows out of a 65 536-row block costs 200 reads, not a full decode.
 * `refOut` holds the reference column gathered for the same rows (`rel`).
 */
export function gatherNumeric(
  col: { transform: number; width: number; base: number },
  bytes: Uint8Array,
  n: number,
  idx: ArrayLike<number>,
  out: NumericArray,
  outAt: number,
  refOut?: ArrayLike<number>,
): void {
  const { transform, width, base } = col;
  const m = idx.length;
  if (transform === TRANSFORM.delta || transform === TRANSFORM.raw || transform === TRANSFORM.const) {
    const full = new Float64Array(transform === TRANSFORM.const ? 0 : n);
    if (transform === TRANSFORM.const) {
      decodeNumeric(col, bytes, m, out.subarray(outAt, outAt + m) as NumericArray);
      return;
    }
    decodeNumeric(col, bytes, n, full);
    for (let k = 0; k < m; k++) out[outAt + k] = full[idx[k]!]!;
    return;
  }
  if ((width !== 1 && width !== 2 && width !== 4) || bytes.length !== n * width) {
    throw new ColumnDecodeError(`column of ${n} rows × ${width} bytes holds ${bytes.length} bytes`);
  }
  for (let k = 0; k < m; k++) {
    const i = idx[k]!;
    if (i < 0 || i >= n) throw new ColumnDecodeError(`row ${i} outside a block of ${n}`);
    const v = base + getShuffled(bytes, n, width, i);
    if (transform === TRANSFORM.int) out[outAt + k] = v;
    else if (transform === TRANSFORM.rel) {
      if (!refOut) throw new ColumnDecodeError('relative column without its reference');
      out[outAt + k] = refOut[outAt + k]! + v;
    } else throw new ColumnDecodeError(`unknown transform ${transform}`);
  }
}

/** Like decodeAddresses, but only for the rows in `idx` (ascending), into rows `outAt + k` of `out`. */
export function gatherAddresses(
  col: { transform: number; width: number; base: number },
  bytes: Uint8Array,
  n: number,
  idx: ArrayLike<number>,
  out: Uint8Array,
  outAt: number,
): void {
  const m = idx.length;
  if (col.transform === TRANSFORM.const) {
    decodeAddresses(col, bytes, m, out.subarray(outAt * 16, (outAt + m) * 16));
    return;
  }
  if (col.transform !== TRANSFORM.addr) throw new ColumnDecodeError(`unknown address transform ${col.transform}`);
  const layout = col.width;
  const mapped = col.base;
  const others = n - mapped;
  const kinds = layout === ADDR_MIXED ? n : 0;
  if (mapped < 0 || mapped > n || bytes.length !== kinds + mapped * 4 + others * 16) {
    throw new ColumnDecodeError('address column size does not match its layout');
  }
  const v4 = kinds;
  const v6 = kinds + mapped * 4;
  let scanned = 0; // rows of the kinds plane counted so far
  let rank4 = 0; // IPv4 rows before `scanned`
  for (let k = 0; k < m; k++) {
    const i = idx[k]!;
    if (i < 0 || i >= n || i < scanned) throw new ColumnDecodeError('rows to gather must be ascending and inside the block');
    let isV4: boolean;
    let j: number;
    if (layout === ADDR_ALL_V4) {
      isV4 = true;
      j = i;
    } else if (layout === ADDR_ALL_V6) {
      isV4 = false;
      j = i;
    } else {
      while (scanned < i) if (bytes[scanned++] === 0) rank4++;
      isV4 = bytes[i] === 0;
      j = isV4 ? rank4 : i - rank4;
    }
    const o = (outAt + k) * 16;
    if (isV4) {
      if (j >= mapped) throw new ColumnDecodeError('address kinds disagree with the IPv4 row count');
      out.fill(0, o, o + 10);
      out[o + 10] = 0xff;
      out[o + 11] = 0xff;
      for (let b = 0; b < 4; b++) out[o + 12 + b] = bytes[v4 + b * mapped + j]!;
    } else {
      if (j >= others) throw new ColumnDecodeError('address kinds disagree with the IPv6 row count');
      for (let b = 0; b < 16; b++) out[o + b] = bytes[v6 + b * others + j]!;
    }
  }
}
