/**
 * Address columns (16 bytes per row) before compression, and their inverses.
 * A column splits into IPv4-mapped rows (4 bytes, shuffled) and the rest
 * (16 bytes, shuffled), with a kind byte per row when both occur; a column of
 * one address is a constant. The shared column types are in column-codec.ts.
 */
import { addressWords, LITTLE_ENDIAN, MAPPED_WORD } from '../../common/flow-batch.js';
import { ColumnDecodeError, TRANSFORM, type TransformedColumn } from './column-codec.js';

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

/** A native 32-bit word of four address bytes, in the order they lie in memory. */
const wordOf: (b0: number, b1: number, b2: number, b3: number) => number = LITTLE_ENDIAN
  ? (b0, b1, b2, b3) => b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)
  : (b0, b1, b2, b3) => (b0 << 24) | (b1 << 16) | (b2 << 8) | b3;

/**
 * A word view to write addresses into `out` through: four stores a row instead of sixteen. A
 * batch's columns start on a word boundary; any other target gets an aligned copy, which
 * wordsWritten copies back. (Not a callback: a closure made per call has its loop compiled again
 * for every block.)
 */
function wordsOver(out: Uint8Array): Int32Array {
  if (out.byteOffset % 4 === 0) return new Int32Array(out.buffer, out.byteOffset, out.byteLength >> 2);
  const aligned = out.slice();
  return new Int32Array(aligned.buffer, 0, aligned.byteLength >> 2);
}

/** Ends a write through wordsOver's view: copied back into `out` when it was a copy. */
function wordsWritten(out: Uint8Array, words: Int32Array): void {
  if (words.buffer !== out.buffer) out.set(new Uint8Array(words.buffer, 0, out.byteLength));
}

/** Where a part of an address column lies, once its size is checked against the layout. */
interface AddressParts {
  layout: number;
  mapped: number;
  others: number;
  /** Offsets of the IPv4 planes and of the other addresses' planes. */
  v4: number;
  v6: number;
}

function addressParts(col: { width: number; base: number }, bytes: Uint8Array, n: number): AddressParts {
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
  return { layout, mapped, others, v4: kinds, v6: kinds + mapped * 4 };
}

/** Writes IPv4 row j of the planes at `v4` (`mapped` rows each) as the IPv4-mapped address at words[o …]. */
function putV4(words: Int32Array, o: number, bytes: Uint8Array, v4: number, mapped: number, j: number): void {
  words[o] = 0;
  words[o + 1] = 0;
  words[o + 2] = MAPPED_WORD;
  words[o + 3] = wordOf(bytes[v4 + j]!, bytes[v4 + mapped + j]!, bytes[v4 + 2 * mapped + j]!, bytes[v4 + 3 * mapped + j]!);
}

/** Writes row j of the 16 planes at `v6` (`others` rows each) at words[o …]. */
function putV6(words: Int32Array, o: number, bytes: Uint8Array, v6: number, others: number, j: number): void {
  for (let q = 0; q < 4; q++) {
    const p = v6 + 4 * q * others + j;
    words[o + q] = wordOf(bytes[p]!, bytes[p + others]!, bytes[p + 2 * others]!, bytes[p + 3 * others]!);
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
  const { layout, mapped, others, v4, v6 } = addressParts(col, bytes, n);
  const words = wordsOver(out);
  if (layout === ADDR_ALL_V4) {
    for (let i = 0; i < n; i++) putV4(words, i * 4, bytes, v4, mapped, i);
  } else {
    let j4 = 0;
    let j6 = 0;
    for (let i = 0; i < n; i++) {
      if (layout === ADDR_MIXED && bytes[i] === 0) {
        if (j4 >= mapped) throw new ColumnDecodeError('address kinds disagree with the IPv4 row count');
        putV4(words, i * 4, bytes, v4, mapped, j4++);
      } else {
        if (j6 >= others) throw new ColumnDecodeError('address kinds disagree with the IPv6 row count');
        putV6(words, i * 4, bytes, v6, others, j6++);
      }
    }
  }
  wordsWritten(out, words);
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
  const { layout, mapped, others, v4, v6 } = addressParts(col, bytes, n);
  const words = wordsOver(out);
  let scanned = 0; // rows of the kinds plane counted so far
  let rank4 = 0; // IPv4 rows before `scanned`
  let last = -1;
  for (let k = 0; k < m; k++) {
    const i = idx[k]!;
    if (i < 0 || i < last || i >= n) throw new ColumnDecodeError('rows to gather must be ascending and inside the block');
    last = i;
    const o = (outAt + k) * 4;
    if (layout === ADDR_ALL_V4) putV4(words, o, bytes, v4, mapped, i);
    else if (layout === ADDR_ALL_V6) putV6(words, o, bytes, v6, others, i);
    else {
      while (scanned < i) if (bytes[scanned++] === 0) rank4++;
      if (bytes[i] === 0) {
        if (rank4 >= mapped) throw new ColumnDecodeError('address kinds disagree with the IPv4 row count');
        putV4(words, o, bytes, v4, mapped, rank4);
      } else {
        if (i - rank4 >= others) throw new ColumnDecodeError('address kinds disagree with the IPv6 row count');
        putV6(words, o, bytes, v6, others, i - rank4);
      }
    }
  }
  wordsWritten(out, words);
}
