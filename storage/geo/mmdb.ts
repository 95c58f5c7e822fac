/**
 * A user's MaxMind DB (GeoLite2-ASN, GeoLite2-Country, GeoIP2, or another MMDB with the same
 * fields) turned into the range tables the shipped CSVs make, so that one lookup serves both
 * and a lookup costs the same whichever source the table came from.
 *
 * The file is read through mmdb-lib (MaxMind's format, from the maintainers of the `maxmind`
 * package, without that package's file watcher and LRU cache, which a table built once does
 * not need). mmdb-lib has no walk over the tree, so the networks are listed through its public
 * `getWithPrefixLength`: from the first address, ask for the network holding it, record it, go
 * on after its last address. That asks once per leaf of the tree (networks and the gaps between
 * them), and decodes each distinct record once (mmdb-lib's offset cache).
 *
 * Read: all of IPv4, and of IPv6 the global unicast 2000::/3 without 2002::/16 (6to4, which
 * GeoLite2 points at the IPv4 tree: IPv4 is looked up as IPv4). Other IPv6 addresses are private,
 * link-local or reserved and have no AS or country anyway.
 */
import { readFileSync } from 'node:fs';
import { Reader } from 'mmdb-lib';
import { countryNumber } from './country-code.js';
import { GeoDataError } from './geo-error.js';
import { NOT_GLOBAL_V4, NOT_GLOBAL_V6 } from './special-purpose.js';
import type { GeoKind, GeoTables } from './ip-location-db.js';
import {
  EMPTY_V6,
  v6Key,
  V4RangeTableBuilder,
  V6RangeTableBuilder,
  type V4RangeTable,
  type V6RangeTable,
} from './range-table.js';

/** A record of the data section, as mmdb-lib decodes it. */
type MmdbRecord = Record<string, unknown>;

/** The IPv6 stretches listed, as [first, last] 16-bit first groups: 2000::/3 without 2002::/16. */
const V6_SPANS: readonly (readonly [number, number])[] = [
  [0x2000, 0x2001],
  [0x2003, 0x3fff],
];

/** Loads `kind`'s tables from the MaxMind DB at `path`; GeoDataError naming the path when it is missing, damaged or has no such field. */
export function loadMmdbTables(kind: GeoKind, path: string): GeoTables {
  let db: Buffer;
  try {
    db = readFileSync(path);
  } catch (err) {
    throw new GeoDataError('missing', path, `cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { cause: err });
  }
  let reader: Reader<MmdbRecord>;
  try {
    reader = new Reader(db, { cache: new Map<string | number, unknown>() });
  } catch (err) {
    throw new GeoDataError('corrupt', path, `not a MaxMind DB: ${(err as Error).message}`, { cause: err });
  }
  const field = kind === 'asn' ? asnOf : countryOf;
  let found = 0;
  const valueOf = (rec: MmdbRecord | null): number => {
    const v = rec ? field(rec) : 0;
    if (v !== 0) found++;
    return v;
  };
  let tables: GeoTables;
  try {
    tables = {
      v4: listV4(reader, valueOf),
      v6: reader.metadata.ipVersion === 6 ? listV6(reader, valueOf) : EMPTY_V6,
    };
  } catch (err) {
    // mmdb-lib reads pointers and sizes from the file as they are: a damaged tree or data section throws.
    throw new GeoDataError('corrupt', path, `damaged MaxMind DB: ${(err as Error).message}`, { cause: err });
  }
  if (found === 0) {
    const wanted = kind === 'asn' ? 'autonomous_system_number' : 'country.iso_code (or country_code)';
    throw new GeoDataError('unsupported', path, `${reader.metadata.databaseType} has no ${wanted} in any network`);
  }
  return tables;
}

function asnOf(rec: MmdbRecord): number {
  const n = rec.autonomous_system_number;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 0xffffffff ? n : 0;
}

/** GeoIP2/GeoLite2's `country.iso_code`, else `registered_country.iso_code`; ip-location-db's MMDBs say `country_code`. */
function countryOf(rec: MmdbRecord): number {
  for (const code of [isoCode(rec.country), isoCode(rec.registered_country), rec.country_code]) {
    if (typeof code === 'string' && /^[A-Za-z]{2}$/.test(code)) return countryNumber(code);
  }
  return 0;
}

function isoCode(v: unknown): unknown {
  return typeof v === 'object' && v !== null ? (v as { iso_code?: unknown }).iso_code : undefined;
}

function listV4(reader: Reader<MmdbRecord>, valueOf: (rec: MmdbRecord | null) => number): V4RangeTable {
  const b = new V4RangeTableBuilder(NOT_GLOBAL_V4);
  for (let a = 0; a <= 0xffffffff;) {
    const [rec, prefix] = reader.getWithPrefixLength(`${a >>> 24}.${(a >>> 16) & 0xff}.${(a >>> 8) & 0xff}.${a & 0xff}`);
    // The network's last address: every bit after the prefix set (2^32 − 1 for /0).
    // (JS shifts count mod 32, so /0 and /32 are spelled out.)
    const end = prefix <= 0 ? 0xffffffff : prefix >= 32 ? a : (a | (0xffffffff >>> prefix)) >>> 0;
    const v = valueOf(rec);
    if (v !== 0) b.add(a, end, v);
    a = end + 1;
  }
  return b.build();
}

function listV6(reader: Reader<MmdbRecord>, valueOf: (rec: MmdbRecord | null) => number): V6RangeTable {
  const b = new V6RangeTableBuilder(NOT_GLOBAL_V6);
  const g = new Uint32Array(8);
  const end = new Uint32Array(8);
  for (const [first, last] of V6_SPANS) {
    g.fill(0);
    g[0] = first;
    while (g[0]! <= last) {
      const [rec, prefix] = reader.getWithPrefixLength(Array.from(g, (x) => x.toString(16)).join(':'));
      // Every bit after the prefix set, but not past the span (a network may be wider than it).
      for (let k = 0; k < 8; k++) {
        const keep = Math.min(16, Math.max(0, prefix - 16 * k));
        end[k] = (g[k]! | (0xffff >>> keep)) & 0xffff;
      }
      if (end[0]! > last) {
        end.fill(0xffff);
        end[0] = last;
      }
      const v = valueOf(rec);
      if (v !== 0) b.add(v6Key(g), v6Key(end), v);
      // Next: end + 1; past the span's last address the first group exceeds `last`, or wraps to 0 at ffff.
      g.set(end);
      let k = 7;
      for (; k >= 0; k--) {
        if (g[k]! < 0xffff) {
          g[k] = g[k]! + 1;
          break;
        }
        g[k] = 0;
      }
      if (k < 0) break;
    }
  }
  return b.build();
}
