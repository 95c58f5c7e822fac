/**
 * The shipped tables: the CSV range files of the npm packages `@ip-location-db/asn` (origin AS,
 * RouteViews + RIR + DB-IP data) and `@ip-location-db/geo-whois-asn-country` (country, GeoFeed
 * + whois + AS data). Each ships its ranges twice, as text addresses and as numbers (`-num`);
 * the numeric files are read, one row per line:
 *
 *   asn-ipv4-num.csv                        16777216,16777471,13335,"Cloudflare, Inc."
 *   geo-whois-asn-country-ipv6-num.csv      42540488…,42540488…,JP
 *
 * start and end inclusive, rows sorted by start. The country files nest GeoFeed ranges inside
 * wider whois ones; RangeTableBuilder gives the inner row its range and the outer the rest.
 * The bytes are scanned in place (no string per line) and the organisation names skipped.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { countryFromBytes } from './country-code.js';
import { GeoDataError } from './geo-error.js';
import { NOT_GLOBAL_V4, NOT_GLOBAL_V6 } from './special-purpose.js';
import {
  RangeOrderError,
  v6Key,
  V4RangeTableBuilder,
  V6RangeTableBuilder,
  type V4RangeTable,
  type V6RangeTable,
} from './range-table.js';

/** What a table maps addresses to. */
export type GeoKind = 'asn' | 'country';

/** One kind's tables for both address families. */
export interface GeoTables {
  v4: V4RangeTable;
  v6: V6RangeTable;
}

const SHIPPED: Readonly<Record<GeoKind, { pkg: string; v4: string; v6: string }>> = {
  asn: { pkg: '@ip-location-db/asn', v4: 'asn-ipv4-num.csv', v6: 'asn-ipv6-num.csv' },
  country: {
    pkg: '@ip-location-db/geo-whois-asn-country',
    v4: 'geo-whois-asn-country-ipv4-num.csv',
    v6: 'geo-whois-asn-country-ipv6-num.csv',
  },
};

/** Paths of the shipped numeric CSV files of `kind` (resolved through node_modules). */
export function shippedTablePaths(kind: GeoKind): { v4: string; v6: string } {
  const require = createRequire(import.meta.url);
  const s = SHIPPED[kind];
  return { v4: require.resolve(`${s.pkg}/${s.v4}`), v6: require.resolve(`${s.pkg}/${s.v6}`) };
}

/** Loads the shipped tables of `kind`. */
export function loadShippedTables(kind: GeoKind): GeoTables {
  const paths = shippedTablePaths(kind);
  return loadCsvTables(kind, paths.v4, paths.v6);
}

/** Loads `kind`'s tables from numeric CSV files laid out as the shipped ones. */
export function loadCsvTables(kind: GeoKind, v4Path: string, v6Path: string): GeoTables {
  return { v4: parseV4(kind, v4Path, readTable(v4Path)), v6: parseV6(kind, v6Path, readTable(v6Path)) };
}

function readTable(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new GeoDataError('missing', path, `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
}

const COMMA = 0x2c;
const NL = 0x0a;
const CR = 0x0d;

/** The end of the field starting at `p`: the next comma or line end (or the end of `buf`). */
function fieldEnd(buf: Buffer, p: number): number {
  const n = buf.length;
  while (p < n) {
    const c = buf[p]!;
    if (c === COMMA || c === NL) return p;
    p++;
  }
  return p;
}

/**
 * Calls `row(line, startFrom, startTo, endFrom, endTo, valueFrom, valueTo)` for each line
 * `start,end,value[,more…]` of `buf`; a byte loop, because a native `indexOf` per field cost
 * more than the rest of the parse.
 */
function eachRow(
  path: string,
  buf: Buffer,
  row: (line: number, s0: number, s1: number, e0: number, e1: number, v0: number, v1: number) => void,
): void {
  const n = buf.length;
  let line = 1;
  for (let p = 0; p < n; line++) {
    const s1 = fieldEnd(buf, p);
    if (s1 === p && buf[p] === NL) {
      p++; // an empty line
      continue;
    }
    const e1 = buf[s1] === COMMA ? fieldEnd(buf, s1 + 1) : -1;
    const v1 = e1 >= 0 && buf[e1] === COMMA ? fieldEnd(buf, e1 + 1) : -1;
    if (v1 < 0) throw new GeoDataError('corrupt', path, `line ${line}: expected start,end,value`);
    try {
      row(line, p, s1, s1 + 1, e1, e1 + 1, v1 > e1 + 1 && buf[v1 - 1] === CR ? v1 - 1 : v1);
    } catch (err) {
      if (err instanceof RangeOrderError) throw new GeoDataError('corrupt', path, `line ${line}: ${err.message}`, { cause: err });
      throw err;
    }
    // The rest of the line (an organisation name may hold quoted commas).
    let q = v1;
    while (q < n && buf[q] !== NL) q++;
    p = q + 1;
  }
}

/** The decimal number in buf[from, to), or -1 when it is not one (or exceeds 2^53). */
function decimal(buf: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function value(kind: GeoKind, path: string, line: number, buf: Buffer, from: number, to: number): number {
  if (kind === 'country') return to - from === 2 ? countryFromBytes(buf[from]!, buf[from + 1]!) : 0;
  const asn = decimal(buf, from, to);
  if (asn < 0 || asn > 0xffffffff) throw new GeoDataError('corrupt', path, `line ${line}: AS number expected`);
  return asn;
}

function parseV4(kind: GeoKind, path: string, buf: Buffer): V4RangeTable {
  const b = new V4RangeTableBuilder(NOT_GLOBAL_V4);
  eachRow(path, buf, (line, s0, s1, e0, e1, v0, v1) => {
    const start = decimal(buf, s0, s1);
    const end = decimal(buf, e0, e1);
    if (start < 0 || end < 0 || end > 0xffffffff) throw new GeoDataError('corrupt', path, `line ${line}: IPv4 range expected`);
    b.add(start, end, value(kind, path, line, buf, v0, v1));
  });
  return b.build();
}

/**
 * The decimal 128-bit number in buf[from, to) as a `v6Key`, through eight 16-bit limbs
 * (limb × 10 + carry stays below 2^20), or '' when it is none.
 */
function decimal128(buf: Buffer, from: number, to: number, g: Uint32Array): string {
  if (to <= from || to - from > 39) return '';
  g.fill(0);
  for (let i = from; i < to; i++) {
    let carry = buf[i]! - 0x30;
    if (carry < 0 || carry > 9) return '';
    for (let k = 7; k >= 0; k--) {
      const x = g[k]! * 10 + carry;
      carry = x >>> 16;
      g[k] = x & 0xffff;
    }
    if (carry !== 0) return ''; // 2^128 or more
  }
  return v6Key(g);
}

function parseV6(kind: GeoKind, path: string, buf: Buffer): V6RangeTable {
  const b = new V6RangeTableBuilder(NOT_GLOBAL_V6);
  const limbs = new Uint32Array(8);
  eachRow(path, buf, (line, s0, s1, e0, e1, v0, v1) => {
    const start = decimal128(buf, s0, s1, limbs);
    const end = decimal128(buf, e0, e1, limbs);
    if (start === '' || end === '') throw new GeoDataError('corrupt', path, `line ${line}: IPv6 range expected`);
    b.add(start, end, value(kind, path, line, buf, v0, v1));
  });
  return b.build();
}
