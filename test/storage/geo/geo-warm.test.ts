/**
 * The start-up warm-up (storage/geo/geo-warm.ts): a worker thread leaves both kinds' built tables in
 * `<dataDir>/geo/`, and the service's own lookup then answers from them without building again.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countryCode } from '../../../storage/geo/country-code.js';
import { warmGeoCache } from '../../../storage/geo/geo-warm.js';
import { openGeoLookup } from '../../../storage/geo/open-geo-lookup.js';
import { addressColumn } from './addresses.js';

// Tests run from source: the worker is the built one (npm test builds first).
const SCRIPT = new URL('../../../dist/storage/geo/geo-warm-worker.js', import.meta.url);

describe('geo warm-up at start', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('builds both kinds in a worker, and the lookup then reads them instead of building', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-geo-warm-'));
    dirs.push(dataDir);
    const result = await warmGeoCache({ enabled: true }, dataDir, SCRIPT);
    expect(result).toMatchObject({ ok: true });
    const built = readdirSync(join(dataDir, 'geo')).sort();
    expect(built.map((f) => f.replace(/-.*/, ''))).toEqual(['asn', 'country']);
    expect(built.every((f) => f.endsWith('.bin'))).toBe(true);

    // Answers as the shipped tables do, from the files the worker left (none is rebuilt or added).
    const geo = openGeoLookup({ enabled: true }, dataDir);
    const col = addressColumn(['8.8.8.8']);
    expect(geo.asOf(col, 0)).toBe(15169);
    expect(countryCode(geo.countryOf(col, 0))).toBe('US');
    expect(readdirSync(join(dataDir, 'geo')).sort()).toEqual(built);
  }, 120_000);

  it('reports a broken user database instead of throwing, and does nothing when geo is off', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-geo-warm-'));
    dirs.push(dataDir);
    const result = await warmGeoCache({ enabled: true, asnDatabase: 'missing.mmdb' }, dataDir, SCRIPT);
    expect(result?.ok).toBe(false);
    expect(result && !result.ok && result.error).toContain('missing.mmdb');
    expect(warmGeoCache({ enabled: false }, dataDir, SCRIPT)).toBeUndefined();
  }, 120_000);
});
