import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { countryCode } from '../../../storage/geo/country-code.js';
import { geoSchema } from '../../../storage/geo/geo-config.js';
import { GeoDataError } from '../../../storage/geo/geo-error.js';
import { openGeoLookup } from '../../../storage/geo/open-geo-lookup.js';
import { addressColumn } from './addresses.js';
import { v4InTree, v6Bytes, writeMmdb, type MmdbNetwork } from './mmdb-writer.js';

const v4 = (cidr: string, record: MmdbNetwork['record']): MmdbNetwork => {
  const [a, len] = cidr.split('/') as [string, string];
  return { address: v4InTree(a), prefix: 96 + Number(len), record };
};
const v6 = (cidr: string, record: MmdbNetwork['record']): MmdbNetwork => {
  const [a, len] = cidr.split('/') as [string, string];
  return { address: v6Bytes(a), prefix: Number(len), record };
};

/** As GeoLite2-ASN writes its records. */
const asn = (n: number): MmdbNetwork['record'] => ({ autonomous_system_number: n, autonomous_system_organization: `Test ${n}` });

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netsvc-geo-'));
  writeFileSync(
    join(dir, 'asn.mmdb'),
    writeMmdb(
      [
        v4('8.0.0.0/8', asn(64499)),
        v4('8.8.4.4/32', asn(64503)), // one address: the listing must go on after it
        v4('8.8.8.0/24', asn(64500)), // inside the /8: wins there
        v4('192.168.0.0/16', asn(64502)), // private: never answered
        v6('2001:4860::/32', asn(64501)),
      ],
      'GeoLite2-ASN',
    ),
  );
  writeFileSync(
    join(dir, 'country.mmdb'),
    writeMmdb(
      [
        // GeoLite2-Country's record shape; one with only registered_country; ip-location-db's MMDB shape.
        v4('8.8.8.0/24', {
          continent: { code: 'EU', geoname_id: 6255148 },
          country: { geoname_id: 2921044, iso_code: 'DE', names: { en: 'Germany', fr: 'Allemagne' } },
          registered_country: { geoname_id: 6252001, iso_code: 'US', names: { en: 'United States' } },
        }),
        v4('1.1.1.0/24', { registered_country: { iso_code: 'JP' } }),
        v6('2606:4700::/32', { country_code: 'fr' }),
      ],
      'GeoLite2-Country',
    ),
  );
});

const at = (addrs: string[]) => addressColumn(addrs);

describe('a user MaxMind DB', () => {
  it('replaces the shipped AS table: its networks, their edges, nesting, and nothing else', () => {
    const geo = openGeoLookup(geoSchema.parse({ asnDatabase: 'asn.mmdb' }), dir);
    const addrs = [
      '8.8.8.8',
      '8.8.8.0',
      '8.8.8.255',
      '8.8.9.0',
      '8.8.7.255',
      '8.0.0.0',
      '8.255.255.255',
      '9.0.0.0',
      '7.255.255.255',
    ];
    const col = at(addrs);
    expect(addrs.map((_, i) => geo.asOf(col, i))).toEqual([64500, 64500, 64500, 64499, 64499, 64499, 64499, 0, 0]);
    // 1.1.1.1 is AS13335 in the shipped table; the user's database has no network there.
    const single = at(['8.8.4.3', '8.8.4.4', '8.8.4.5']);
    expect([0, 1, 2].map((i) => geo.asOf(single, i))).toEqual([64499, 64503, 64499]);
    const other = at([
      '1.1.1.1',
      '192.168.1.1',
      '2001:4860::1',
      '2001:4860:ffff:ffff:ffff:ffff:ffff:ffff',
      '2001:4861::',
      '2001:485f::1',
    ]);
    expect([0, 1, 2, 3, 4, 5].map((i) => geo.asOf(other, i))).toEqual([0, 0, 64501, 64501, 0, 0]);
  });

  it('replaces the shipped country table, reading GeoLite2 records and ip-location-db ones', () => {
    const geo = openGeoLookup(geoSchema.parse({ countryDatabase: join(dir, 'country.mmdb') }), '/elsewhere', { cacheDir: false });
    const addrs = ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '9.9.9.9'];
    const col = at(addrs);
    expect(addrs.map((_, i) => countryCode(geo.countryOf(col, i)))).toEqual(['DE', 'JP', 'FR', '']);
  });

  it('leaves the other kind to the shipped table', () => {
    const geo = openGeoLookup(geoSchema.parse({ countryDatabase: 'country.mmdb' }), dir);
    const col = at(['8.8.8.8']);
    expect(geo.asOf(col, 0)).toBe(15169);
    expect(countryCode(geo.countryOf(col, 0))).toBe('DE');
  }, 60_000);

  it('missing: a GeoDataError naming the path, on first use and from loadAll', () => {
    const geo = openGeoLookup(geoSchema.parse({ asnDatabase: 'nope/GeoLite2-ASN.mmdb' }), dir);
    const path = join(dir, 'nope/GeoLite2-ASN.mmdb');
    expect(() => geo.asOf(at(['8.8.8.8']), 0)).toThrow(GeoDataError);
    expect(() => geo.loadAll()).toThrow(path);
    try {
      geo.loadAll();
    } catch (err) {
      expect(err).toMatchObject({ name: 'GeoDataError', code: 'missing', path });
    }
  });

  it('damaged: a GeoDataError naming the path, whether no MMDB at all or cut short', () => {
    const junk = join(dir, 'junk.mmdb');
    writeFileSync(junk, 'this is not a MaxMind database\n'.repeat(100));
    const cut = join(dir, 'cut.mmdb');
    const whole = writeMmdb([v4('8.8.8.0/24', asn(64500))]);
    writeFileSync(cut, whole.subarray(0, whole.length - 40));
    for (const path of [junk, cut]) {
      const geo = openGeoLookup(geoSchema.parse({ asnDatabase: path }), dir);
      let caught: unknown;
      try {
        geo.loadAll();
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(GeoDataError);
      expect(caught).toMatchObject({ code: 'corrupt', path });
      expect((caught as Error).message).toContain(path);
    }
  });

  it('of another kind (a country DB named as the AS database): a GeoDataError saying what is missing', () => {
    const path = join(dir, 'country.mmdb');
    const geo = openGeoLookup(geoSchema.parse({ asnDatabase: path }), dir);
    expect(() => geo.asOf(at(['8.8.8.8']), 0)).toThrow(/country\.mmdb: GeoLite2-Country has no autonomous_system_number/);
  });
});

describe('the table cache', () => {
  it('keeps built tables under <dataDir>/geo, answers from them, and builds anew when the source changes', () => {
    const data = mkdtempSync(join(tmpdir(), 'netsvc-geo-cache-'));
    const db = join(data, 'asn.mmdb');
    const original = writeMmdb([v4('8.8.8.0/24', asn(64500)), v6('2001:4860::/32', asn(64501))]);
    writeFileSync(db, original);
    utimesSync(db, 1e9, 1e9);
    const config = geoSchema.parse({ asnDatabase: 'asn.mmdb' });
    const col = at(['8.8.8.8', '2001:4860::1', '9.9.9.9']);
    const answers = (): number[] => {
      const geo = openGeoLookup(config, data);
      return [0, 1, 2].map((i) => geo.asOf(col, i));
    };
    expect(answers()).toEqual([64500, 64501, 0]);
    const files = readdirSync(join(data, 'geo'));
    expect(files).toEqual([expect.stringMatching(/^asn-[0-9a-f]{16}\.bin$/)]);
    // Same path, size and time, other bytes: only the cache can still answer.
    writeFileSync(db, Buffer.alloc(original.length, 0x20));
    utimesSync(db, 1e9, 1e9);
    expect(answers()).toEqual([64500, 64501, 0]);
    // A new database: built and kept anew, the old file of that kind removed.
    writeFileSync(db, writeMmdb([v4('8.8.8.0/24', asn(64999))]));
    expect(answers()).toEqual([64999, 0, 0]);
    const after = readdirSync(join(data, 'geo'));
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(files[0]);
  });
});

describe('geo configuration', () => {
  it('defaults to enabled with the shipped tables, and refuses unknown keys', () => {
    expect(geoSchema.parse({})).toEqual({ enabled: true });
    expect(() => geoSchema.parse({ asnDb: 'x' })).toThrow();
    expect(() => geoSchema.parse({ asnDatabase: '' })).toThrow();
  });

  it('disabled: every answer 0, no table read (a missing database is not even looked at)', () => {
    const geo = openGeoLookup(geoSchema.parse({ enabled: false, asnDatabase: '/no/such.mmdb' }), dir);
    const col = at(['8.8.8.8', '2606:4700::1']);
    expect([geo.asOf(col, 0), geo.asOf(col, 1), geo.countryOf(col, 0), geo.countryOf(col, 1)]).toEqual([0, 0, 0, 0]);
    expect(() => geo.loadAll()).not.toThrow();
  });
});
