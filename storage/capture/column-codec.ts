/**
 * Column transforms applied before compression, and their inverses: the
 * shared column types and the numeric columns (address columns are in
 * address-codec.ts).
 *
 * General-purpose compressors see flow columns as noise unless the values are
 * turned into small, similar bytes first. Each numeric column is stored as
 * one of: a constant; frame-of-reference integers (value − min) in the
 * narrowest width, byte-shuffled (all low bytes, then all next bytes, …);
 * zigzag deltas (received time, which grows with the row number); or values
 * relative to another column (start relative to received, end relative to
 * start: both are small durations). Anything that does not fit
 * (non-integers, ranges ≥ 2^32) is stored as raw shuffled float64, so the
 * round trip is exact for every value a FlowBatch can hold.
 */

import { COLUMN_TYPES, type NumericColumn } from '../../common/flow-batch.js';

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
    decodeFor(bytes, n, width, base, out);
  } else if (transform === TRANSFORM.delta) {
    if (!(out instanceof Float64Array)) throw new ColumnDecodeError('delta column into an integer column');
    decodeForF64(bytes, n, width, 0, out);
    let v = base;
    for (let i = 0; i < n; i++) {
      const z = out[i]!;
      v += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      out[i] = v;
    }
  } else if (transform === TRANSFORM.rel) {
    if (!ref) throw new ColumnDecodeError('relative column without its reference');
    decodeFor(bytes, n, width, base, out);
    for (let i = 0; i < n; i++) out[i] = out[i]! + ref[i]!;
  } else {
    throw new ColumnDecodeError(`unknown transform ${transform}`);
  }
}

/**
 * Frame-of-reference values (base + shuffled unsigned integers) into out[0 … n): one loop per
 * width and per kind of output array, since this is the readers' hottest code (a width test per
 * value, or one loop meeting four array kinds, costs several times the loop itself).
 */
function decodeFor(src: Uint8Array, n: number, width: number, base: number, out: NumericArray): void {
  if (out instanceof Float64Array) decodeForF64(src, n, width, base, out);
  else if (out instanceof Uint8Array) decodeForU8(src, n, width, base, out);
  else if (out instanceof Uint16Array) decodeForU16(src, n, width, base, out);
  else decodeForU32(src, n, width, base, out);
}

function decodeForF64(src: Uint8Array, n: number, width: number, base: number, out: Float64Array): void {
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = base + src[i]!;
  } else if (width === 2) {
    for (let i = 0; i < n; i++) out[i] = base + (src[i]! | (src[n + i]! << 8));
  } else {
    const p2 = 2 * n;
    const p3 = 3 * n;
    for (let i = 0; i < n; i++) {
      out[i] = base + ((src[i]! | (src[n + i]! << 8) | (src[p2 + i]! << 16) | (src[p3 + i]! << 24)) >>> 0);
    }
  }
}

// The integer columns: base + value stays below 2^32 (the writer took base as the column's
// minimum), so the sum is stored as it is, without float64.
function decodeForU8(src: Uint8Array, n: number, width: number, base: number, out: Uint8Array): void {
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = base + src[i]!;
  } else decodeForAny(src, n, width, base, out);
}

function decodeForU16(src: Uint8Array, n: number, width: number, base: number, out: Uint16Array): void {
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = base + src[i]!;
  } else if (width === 2) {
    for (let i = 0; i < n; i++) out[i] = base + (src[i]! | (src[n + i]! << 8));
  } else decodeForAny(src, n, width, base, out);
}

function decodeForU32(src: Uint8Array, n: number, width: number, base: number, out: Uint32Array): void {
  if (width === 1) {
    for (let i = 0; i < n; i++) out[i] = base + src[i]!;
  } else if (width === 2) {
    for (let i = 0; i < n; i++) out[i] = base + (src[i]! | (src[n + i]! << 8));
  } else decodeForAny(src, n, width, base, out);
}

/** Widths a column class does not use (a u8 column stored in 2 bytes only from a damaged or foreign file): the general loop. */
function decodeForAny(src: Uint8Array, n: number, width: number, base: number, out: NumericArray): void {
  for (let i = 0; i < n; i++) out[i] = base + getShuffled(src, n, width, i);
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

/**
 * A numeric column as stored, when its values are integers a reader can take where they lie:
 * `base` alone (`width` 0, a constant column), or `base` plus the shuffled unsigned integers of
 * `width` bytes in `bytes` (frame-of-reference). Written into the column's array, each value
 * becomes what decodeNumeric writes there; a count of a filter's matches reads the column so,
 * without decoding it (storage/flow-query/filter-compile.ts).
 */
export interface PlainColumn {
  width: 0 | 1 | 2 | 4;
  base: number;
  bytes: Uint8Array;
}

/** The column as a PlainColumn, or undefined when it is stored otherwise (deltas, relative, raw float64) or does not hold what its entry says. */
export function plainColumn(
  col: { transform: number; width: number; base: number },
  bytes: Uint8Array,
  n: number,
): PlainColumn | undefined {
  if (col.transform === TRANSFORM.const) {
    if (bytes.length !== 8) return undefined;
    return { width: 0, base: new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true), bytes };
  }
  const { width, base } = col;
  if (col.transform !== TRANSFORM.int || (width !== 1 && width !== 2 && width !== 4) || bytes.length !== n * width)
    return undefined;
  return { width, base, bytes };
}

/**
 * Value i of a column as stored (a PlainColumn of n rows), as decoding it into the column's
 * array gives it: base + stored value, wrapped to an integer array's width.
 */
export function plainValueAt(c: PlainColumn, n: number, column: NumericColumn): (i: number) => number {
  const kind = COLUMN_TYPES[column];
  const wrap =
    kind === Uint8Array
      ? (v: number) => v & 0xff
      : kind === Uint16Array
        ? (v: number) => v & 0xffff
        : kind === Uint32Array
          ? (v: number) => v >>> 0
          : (v: number) => v;
  const { base, bytes, width } = c;
  return width === 0 ? () => wrap(base) : (i) => wrap(base + getShuffled(bytes, n, width, i));
}
