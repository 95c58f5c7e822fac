/**
 * The shipped tables answer what their CSV rows say. Each expected value is read from the
 * packages' text CSV (`start,end,value`) in the test, not written down from memory; the lookups
 * go through the numeric CSVs the loader reads, so this also checks that the two agree.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { countryCode } from '../../../storage/geo/country-code.js';
import type { GeoLookup } from '../../../storage/geo/geo-lookup.js';
import { openGeoLookup } from '../../../storage/geo/open-geo-lookup.js';
import { addressColumn } from './addresses.js';

const require = createRequire(import.meta.url);
const ASN_V4 = require.resolve('@ip-location-db/asn/asn-ipv4.csv');
const ASN_V6 = require.resolve('@ip-location-db/asn/asn-ipv6.csv');
const COUNTRY_V4 = require.resolve('@ip-location-db/geo-whois-asn-country/geo-whois-asn-country-ipv4.csv');
const COUNTRY_V6 = require.resolve('@ip-location-db/geo-whois-asn-country/geo-whois-asn-country-ipv6.csv');

interface CsvRow {
  start: string;
  end: string;
  value: string;
  /** The next row's start, or undefined for the last row. */
  nextStart: string | undefined;
  nextValue: string | undefined;
}

const texts = new Map<string, string>();

/** The row of `file` that starts at `start` (as the CSV writes it), and the start of the one after. */
function row(file: string, start: string): CsvRow {
  let text = texts.get(file);
  if (text === undefined) texts.set(file, (text = readFileSync(file, 'latin1')));
  const at = text.startsWith(`${start},`) ? 0 : text.indexOf(`\n${start},`) + 1;
  if (at <= 0 && !text.startsWith(`${start},`)) throw new Error(`${file} has no row starting at ${start}`);
  const eol = text.indexOf('\n', at);
  const [s, e, v] = text.slice(at, eol).split(',') as [string, string, string];
  const next = text.slice(eol + 1, text.indexOf('\n', eol + 1)).split(',');
  return { start: s, end: e, value: v, nextStart: next[0], nextValue: next[2] };
}

let geo: GeoLookup;

function as(addr: string): number {
  return geo.asOf(addressColumn([addr]), 0);
}
function country(addr: string): string {
  return countryCode(geo.countryOf(addressColumn([addr]), 0));
}

beforeAll(() => {
  const lookup = openGeoLookup({ enabled: true }, '/nonexistent', { cacheDir: false });
  lookup.loadAll();
  geo = lookup;
}, 120_000);

describe('shipped AS table (@ip-location-db/asn)', () => {
  it.each([
    ['8.8.8.0', '8.8.8.8', '15169'], // Google Public DNS
    ['1.1.1.0', '1.1.1.1', '13335'], // Cloudflare
    ['9.9.9.0', '9.9.9.9', '19281'], // Quad9
  ])('the row starting at %s holds %s: AS%s, first and last address included', (start, addr, asn) => {
    const r = row(ASN_V4, start);
    expect(r.value).toBe(asn);
    expect(as(addr)).toBe(Number(asn));
    expect(as(r.start)).toBe(Number(asn));
    expect(as(r.end)).toBe(Number(asn));
  });

  it('one address beyond a row is the next row when it starts there, else unknown', () => {
    // 1.0.0.0-1.0.0.255 is followed by 1.0.4.0: 1.0.1.0 lies in a gap. 8.8.8.0/24 is followed directly or not: the CSV says.
    const first = row(ASN_V4, '1.0.0.0');
    expect(first.nextStart).toBe('1.0.4.0');
    expect(as('1.0.0.255')).toBe(Number(first.value));
    expect(as('1.0.1.0')).toBe(0);
    expect(as('0.255.255.255')).toBe(0);
    const google = row(ASN_V4, '8.8.8.0');
    expect(as('8.8.9.0')).toBe(google.nextStart === '8.8.9.0' ? Number(google.nextValue) : 0);
  });

  it('IPv6: Google and Cloudflare prefixes, their first and last addresses', () => {
    for (const [start, asn] of [
      ['2001:4860:480d::', '15169'],
      ['2606:4700:4700::', '13335'],
    ] as const) {
      const r = row(ASN_V6, start);
      expect(r.value).toBe(asn);
      expect(as(r.start)).toBe(Number(asn));
      expect(as(r.end)).toBe(Number(asn));
    }
    expect(as('2001:4860:4860::8888')).toBe(15169);
    expect(as('2606:4700:4700::1111')).toBe(13335);
    // One below the first address of 2001:4860:480d::: the row before it ends earlier or belongs to another AS.
    expect(as('2001:4860:480c:ffff:ffff:ffff:ffff:ffff')).not.toBe(15169);
  });
});

describe('shipped country table (@ip-location-db/geo-whois-asn-country)', () => {
  it.each([
    ['6.0.0.0', '8.8.8.8', 'US'],
    ['1.1.1.0', '1.1.1.1', 'AU'],
    ['193.96.237.0', '193.99.144.80', 'DE'],
  ])('the row starting at %s holds %s: %s', (start, addr, cc) => {
    const r = row(COUNTRY_V4, start);
    expect(r.value).toBe(cc);
    expect(country(addr)).toBe(cc);
    expect(country(r.start)).toBe(cc);
    expect(country(r.end)).toBe(cc);
  });

  it('a GeoFeed row nested in a whois row wins inside and leaves the rest to the outer row', () => {
    // 3.2.35.0-3.2.35.63 DE, then inside it 3.2.35.40-47 TR, 3.2.35.48-55 GR, 3.2.35.56-63 DE.
    const outer = row(COUNTRY_V4, '3.2.35.0');
    expect(outer).toMatchObject({ end: '3.2.35.63', value: 'DE', nextStart: '3.2.35.40', nextValue: 'TR' });
    expect(row(COUNTRY_V4, '3.2.35.48')).toMatchObject({ end: '3.2.35.55', value: 'GR' });
    expect(['3.2.35.0', '3.2.35.39', '3.2.35.40', '3.2.35.47', '3.2.35.48', '3.2.35.55', '3.2.35.56'].map(country)).toEqual([
      'DE',
      'DE',
      'TR',
      'TR',
      'GR',
      'GR',
      'DE',
    ]);
  });

  it('IPv6: Google Ireland and Cloudflare', () => {
    for (const [start, cc] of [
      ['2a00:1450::', 'IE'],
      ['2606:4700::', 'US'],
    ] as const) {
      const r = row(COUNTRY_V6, start);
      expect(r.value).toBe(cc);
      expect(country(r.start)).toBe(cc);
      expect(country(r.end)).toBe(cc);
    }
    expect(country('2a00:1450:4001::1')).toBe('IE');
  });
});

describe('private and reserved addresses', () => {
  it('have no AS and no country, even where the shipped table names one', () => {
    // The country CSV maps 192.168.0.0/16 to AU and 2001:db8::/32 to JP (data bugs the package's README warns of).
    expect(row(COUNTRY_V4, '192.168.0.0').value).toBe('AU');
    expect(row(COUNTRY_V6, '2001:db8::').value).toBe('JP');
    for (const a of [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '127.0.0.1',
      '169.254.1.1',
      '0.0.0.0',
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '224.0.0.251',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fd00::1',
      'ff02::1',
      '2001:db8::1',
      '3fff::1',
    ]) {
      expect([a, as(a), country(a)]).toEqual([a, 0, '']);
    }
  });
});
