/**
 * The dimensions a flow query groups by, named as the flow record's fields
 * (`src_ip`, `dst_port`, …), and how each turns a row into key words.
 *
 * A group key is a row of 32-bit words: an address takes four (its 16 bytes,
 * IPv4 mapped, cut to the prefix asked for), every other dimension one. Keys
 * are written a column at a time for the matching rows of a block, so the
 * per-row work is a plain typed-array copy.
 */
import { formatAddress, LITTLE_ENDIAN, type FlowBatch } from '../../common/flow-batch.js';
import type { ColumnName } from '../capture/format.js';
import type { GeoLookup } from '../geo/geo-lookup.js';

/** Every dimension name, as the flow record's fields are named. */
export const DIMENSION_NAMES = [
  'src_ip',
  'dst_ip',
  'src_port',
  'dst_port',
  'proto',
  'exporter',
  'input_if',
  'output_if',
  'tos',
  'tcp_flags',
  'src_as',
  'dst_as',
  'src_country',
  'dst_country',
] as const;

export type DimensionName = (typeof DIMENSION_NAMES)[number];

/** A dimension as asked for: addresses may be cut to a prefix (IPv4 and IPv6 lengths apart). */
export interface Dimension {
  name: DimensionName;
  /** Prefix length kept of an IPv4 address (address dimensions only); 32 when not cut. */
  v4Prefix: number;
  /** Prefix length kept of an IPv6 address; 128 when not cut. */
  v6Prefix: number;
}

/** A group's value in one dimension, as answers show it: address text, country code, or a number. */
export type DimensionValue = string | number;

/** A group's key by dimension name (`{src_ip: '192.0.2.1', dst_port: 443}`), as answers print it. */
export function keyRecord(dims: readonly Dimension[], key: readonly DimensionValue[]): Record<string, DimensionValue> {
  return Object.fromEntries(dims.map((d, i) => [d.name, key[i]!]));
}

/** Why a dimension list cannot be used; `message` names the part that is wrong. */
export class DimensionError extends Error {
  override readonly name = 'DimensionError';
}

/** Most dimensions one query groups by. */
export const MAX_DIMENSIONS = 3;

const ADDRESS_DIMS: ReadonlySet<DimensionName> = new Set(['src_ip', 'dst_ip', 'exporter']);

/** True for the dimensions whose values are addresses. */
export function isAddressDimension(name: DimensionName): boolean {
  return ADDRESS_DIMS.has(name);
}

/**
 * Parses `src_ip/24,dst_port` into dimensions. An address dimension takes
 * `/N` (IPv4 prefix length; IPv6 addresses are then cut to /64) or `/N/M`
 * (IPv4 /N, IPv6 /M). Throws DimensionError.
 */
export function parseDimensions(text: string): Dimension[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw new DimensionError(`'${text}' is not a list of dimensions (known: ${DIMENSION_NAMES.join(', ')})`);
  }
  if (parts.length > MAX_DIMENSIONS) {
    throw new DimensionError(`at most ${MAX_DIMENSIONS} dimensions, got ${parts.length}`);
  }
  const out = parts.map(parseDimension);
  const names = out.map((d) => d.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new DimensionError(`dimension '${twice}' is given twice`);
  return out;
}

function parseDimension(part: string): Dimension {
  const [rawName, v4, v6, ...rest] = part.split('/');
  const name = rawName!.toLowerCase() as DimensionName;
  if (!(DIMENSION_NAMES as readonly string[]).includes(name)) {
    throw new DimensionError(`unknown dimension '${rawName}' (known: ${DIMENSION_NAMES.join(', ')})`);
  }
  if (v4 === undefined) return { name, v4Prefix: 32, v6Prefix: 128 };
  if (!isAddressDimension(name)) throw new DimensionError(`'${part}': only src_ip, dst_ip and exporter take a prefix length`);
  if (rest.length > 0) throw new DimensionError(`'${part}': give at most an IPv4 and an IPv6 prefix length (src_ip/24/64)`);
  const length = (s: string, max: number): number => {
    if (!/^\d{1,3}$/.test(s) || Number(s) > max) throw new DimensionError(`'${part}': prefix length '${s}' is not 0-${max}`);
    return Number(s);
  };
  return { name, v4Prefix: length(v4, 32), v6Prefix: v6 === undefined ? 64 : length(v6, 128) };
}

/** How a dimension reads a block's rows. */
interface DimensionReader {
  /** Columns it needs decoded. */
  columns: readonly ColumnName[];
  /** Words per key: 4 for an address, 1 otherwise. */
  words: 1 | 4;
  /** Largest value of a one-word key, when small enough to count in a plain array (≤ 65 535). */
  dense?: number;
  /** Writes the key words of rows idx[0 … n) at keys[r * stride + at …]. */
  write(batch: FlowBatch, idx: Uint32Array, n: number, keys: Uint32Array, stride: number, at: number): void;
  /** The value of a key, from its words at keys[at …]. */
  value(keys: Uint32Array, at: number): DimensionValue;
}

// The readers are classes, not object literals made per query: a literal's methods are closures
// made anew by each query, and V8 compiled their row loops again for every query.

class NumericReader implements DimensionReader {
  readonly columns: readonly ColumnName[];
  readonly words = 1;

  constructor(
    private readonly column: ColumnName & keyof FlowBatch['cols'],
    readonly dense?: number,
  ) {
    this.columns = [column];
  }

  write(batch: FlowBatch, idx: Uint32Array, n: number, keys: Uint32Array, stride: number, at: number): void {
    const col = batch.cols[this.column];
    for (let r = 0; r < n; r++) keys[r * stride + at] = col[idx[r]!]!;
  }

  value(keys: Uint32Array, at: number): DimensionValue {
    return keys[at]!;
  }
}

/** The 4 words of a prefix length: how many leading bits of each word are kept. */
function prefixMasks(bits: number): Uint32Array {
  const m = new Uint32Array(4);
  for (let w = 0; w < 4; w++) {
    const keep = Math.max(0, Math.min(32, bits - w * 32));
    m[w] = keep === 0 ? 0 : keep === 32 ? 0xffffffff : (0xffffffff << (32 - keep)) >>> 0;
  }
  return m;
}

/**
 * An address word read through a native-order view (FlowBatch's `srcWords` …), as the big-endian
 * uint32 group keys hold it, so that key order is address order.
 */
export function keyWord(word: number): number {
  if (!LITTLE_ENDIAN) return word >>> 0;
  return (((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24)) >>> 0;
}

class AddressReader implements DimensionReader {
  readonly columns: readonly ColumnName[];
  readonly words = 4;
  private readonly m4: Uint32Array;
  private readonly m6: Uint32Array;
  private readonly cut: boolean;

  constructor(
    private readonly column: 'srcAddr' | 'dstAddr' | 'exporter',
    private readonly dim: Dimension,
  ) {
    this.columns = [column];
    this.m4 = prefixMasks(96 + dim.v4Prefix);
    this.m6 = prefixMasks(dim.v6Prefix);
    this.cut = dim.v4Prefix < 32 || dim.v6Prefix < 128;
  }

  write(batch: FlowBatch, idx: Uint32Array, n: number, keys: Uint32Array, stride: number, at: number): void {
    const column = this.column;
    const w = column === 'srcAddr' ? batch.srcWords : column === 'dstAddr' ? batch.dstWords : batch.exporterWords;
    const { m4, m6, cut } = this;
    for (let r = 0; r < n; r++) {
      const i = idx[r]!;
      const o = r * stride + at;
      const s = i * 4;
      const a = keyWord(w[s]!);
      const b = keyWord(w[s + 1]!);
      const c = keyWord(w[s + 2]!);
      const d = keyWord(w[s + 3]!);
      if (!cut) {
        keys[o] = a;
        keys[o + 1] = b;
        keys[o + 2] = c;
        keys[o + 3] = d;
        continue;
      }
      // The address's own family (an IPv4 exporter may send IPv6 flows): IPv4-mapped is ::ffff:a.b.c.d.
      const m = a === 0 && b === 0 && c === 0xffff ? m4 : m6;
      keys[o] = a & m[0]!;
      keys[o + 1] = b & m[1]!;
      keys[o + 2] = c & m[2]!;
      keys[o + 3] = d & m[3]!;
    }
  }

  value(keys: Uint32Array, at: number): DimensionValue {
    const bytes = new Uint8Array(16);
    const view = new DataView(bytes.buffer);
    for (let k = 0; k < 4; k++) view.setUint32(k * 4, keys[at + k]!);
    const text = formatAddress(bytes, 0);
    const v4 = keys[at] === 0 && keys[at + 1] === 0 && keys[at + 2] === 0xffff;
    const prefix = v4 ? this.dim.v4Prefix : this.dim.v6Prefix;
    return prefix < (v4 ? 32 : 128) ? `${text}/${prefix}` : text;
  }
}

/** The origin AS: the exporter's value, or the lookup's when the exporter sent 0 (as nfdump with a geo database). */
class AsReader implements DimensionReader {
  readonly columns: readonly ColumnName[];
  readonly words = 1;
  private readonly addr: 'srcAddr' | 'dstAddr';

  constructor(
    private readonly column: 'srcAs' | 'dstAs',
    private readonly geo: GeoLookup | undefined,
  ) {
    this.addr = column === 'srcAs' ? 'srcAddr' : 'dstAddr';
    this.columns = geo ? [column, this.addr] : [column];
  }

  write(batch: FlowBatch, idx: Uint32Array, n: number, keys: Uint32Array, stride: number, at: number): void {
    const col = batch.cols[this.column];
    const bytes = batch[this.addr];
    const geo = this.geo;
    for (let r = 0; r < n; r++) {
      const i = idx[r]!;
      const v = col[i]!;
      keys[r * stride + at] = v !== 0 || !geo ? v : geo.asOf(bytes, i);
    }
  }

  value(keys: Uint32Array, at: number): DimensionValue {
    return keys[at]!;
  }
}

/** Two ASCII letters of a country number; '' for 0 (unknown). */
export function countryText(code: number): string {
  return code === 0 ? '' : String.fromCharCode(code >> 8, code & 0xff);
}

class CountryReader implements DimensionReader {
  readonly columns: readonly ColumnName[];
  readonly words = 1;
  readonly dense = 0xffff;

  constructor(
    private readonly column: 'srcAddr' | 'dstAddr',
    private readonly geo: GeoLookup | undefined,
  ) {
    this.columns = [column];
  }

  write(batch: FlowBatch, idx: Uint32Array, n: number, keys: Uint32Array, stride: number, at: number): void {
    const bytes = batch[this.column];
    const geo = this.geo;
    for (let r = 0; r < n; r++) keys[r * stride + at] = geo ? geo.countryOf(bytes, idx[r]!) : 0;
  }

  value(keys: Uint32Array, at: number): DimensionValue {
    return countryText(keys[at]!);
  }
}

/** The reader of one dimension. */
export function dimensionReader(dim: Dimension, geo: GeoLookup | undefined): DimensionReader {
  switch (dim.name) {
    case 'src_ip':
      return new AddressReader('srcAddr', dim);
    case 'dst_ip':
      return new AddressReader('dstAddr', dim);
    case 'exporter':
      return new AddressReader('exporter', dim);
    case 'src_port':
      return new NumericReader('srcPort', 0xffff);
    case 'dst_port':
      return new NumericReader('dstPort', 0xffff);
    case 'proto':
      return new NumericReader('proto', 0xff);
    case 'tos':
      return new NumericReader('tos', 0xff);
    case 'tcp_flags':
      return new NumericReader('tcpFlags', 0xff);
    case 'input_if':
      return new NumericReader('inputIf');
    case 'output_if':
      return new NumericReader('outputIf');
    case 'src_as':
      return new AsReader('srcAs', geo);
    case 'dst_as':
      return new AsReader('dstAs', geo);
    case 'src_country':
      return new CountryReader('srcAddr', geo);
    case 'dst_country':
      return new CountryReader('dstAddr', geo);
  }
}

export type { DimensionReader };
