/**
 * GeoLookup over range tables (range-table.ts), each kind's tables loaded on its first lookup:
 * a service whose queries never group by AS or country never reads them.
 */
import type { GeoLookup } from './geo-lookup.js';
import type { GeoKind, GeoTables } from './ip-location-db.js';

/** Answers from the tables `load` gives for each kind, asked once per kind on first use. */
export class TableGeoLookup implements GeoLookup {
  private asn: GeoTables | undefined;
  private country: GeoTables | undefined;

  constructor(private readonly load: (kind: GeoKind) => GeoTables) {}

  asOf(column: Uint8Array, row: number): number {
    return find((this.asn ??= this.load('asn')), column, row);
  }

  countryOf(column: Uint8Array, row: number): number {
    return find((this.country ??= this.load('country')), column, row);
  }

  /** Loads both kinds now (at start-up, to report a bad database before the first query); throws what loading throws. */
  loadAll(): void {
    this.asn ??= this.load('asn');
    this.country ??= this.load('country');
  }

  /** Bytes of the tables loaded so far. */
  get byteLength(): number {
    let n = 0;
    for (const t of [this.asn, this.country]) if (t) n += t.v4.byteLength + t.v6.byteLength;
    return n;
  }
}

function find(t: GeoTables, col: Uint8Array, row: number): number {
  const o = row * 16;
  // IPv4-mapped (::ffff:a.b.c.d) goes to the IPv4 table; any other address is IPv6.
  if (
    col[o + 10] === 0xff &&
    col[o + 11] === 0xff &&
    (col[o]! |
      col[o + 1]! |
      col[o + 2]! |
      col[o + 3]! |
      col[o + 4]! |
      col[o + 5]! |
      col[o + 6]! |
      col[o + 7]! |
      col[o + 8]! |
      col[o + 9]!) ===
      0
  ) {
    return t.v4.find(((col[o + 12]! << 24) | (col[o + 13]! << 16) | (col[o + 14]! << 8) | col[o + 15]!) >>> 0);
  }
  return t.v6.find(word(col, o), word(col, o + 4), word(col, o + 8), word(col, o + 12));
}

function word(col: Uint8Array, o: number): number {
  return ((col[o]! << 24) | (col[o + 1]! << 16) | (col[o + 2]! << 8) | col[o + 3]!) >>> 0;
}
