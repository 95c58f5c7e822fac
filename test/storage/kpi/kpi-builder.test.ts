import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CaptureRetention } from '../../../storage/capture/retention.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { KpiBuilder } from '../../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';
import { nfdumpReference, writeFixture } from '../../helpers/netflow-data.js';

const HOUR = 3_600_000;
const H1 = Date.parse('2026-03-25T08:00:00Z');

describe('KpiBuilder keeps the KPI cache in step with the capture files', () => {
  let dir: string;
  let clock: number;
  const fixtures = flowFixtures().filter((f) => f.seed === '1' && f.version !== 5);
  const path = () => join(dir, 'kpi.sqlite');

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-kpib-'));
    clock = H1;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function writeHours(
    onSealed?: (e: { source: string; hourStart: number; hourEnd: number; path: string }) => Promise<unknown>,
  ): Promise<void> {
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', timer: false, now: () => clock });
    if (onSealed) writer.onHourSealed(async (e) => void (await onSealed(e)));
    await writer.start();
    fixtures.forEach((f, i) => writeFixture(writer, 'netflow', f, H1 + i * HOUR + 60_000));
    clock = H1 + (fixtures.length + 1) * HOUR;
    await writer.close();
  }

  it('caches each hour as it is sealed, and the cache survives a restart', async () => {
    let cache = new SqliteKpiCache(path());
    const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    await writeHours((e) => builder.onSealed(e));
    const expected = fixtures.map((f, i) => [
      H1 + i * HOUR,
      nfdumpReference(f).totals.flows,
      nfdumpReference(f).totals.bytes,
      nfdumpReference(f).rst.flows,
    ]);
    const seen = () => cache.hours('netflow', 0, Number.MAX_SAFE_INTEGER).map((h) => [h.hourStart, h.flows, h.bytes, h.rstFlows]);
    expect(seen()).toEqual(expected);
    cache.close();
    cache = new SqliteKpiCache(path());
    expect(seen()).toEqual(expected);
    expect(cache.level('netflow', H1, 'src', 0)!.rows.length).toBeGreaterThan(0);
    expect(cache.protocols('netflow', H1).map((p) => p.proto)).toEqual(
      nfdumpReference(fixtures[0]!)
        .protocols_by_bytes.map((p) => p.number)
        .sort((a, b) => a - b),
    );
    cache.close();
  });

  it('rebuilds hours missing from the cache and those whose file changed, and leaves fresh ones alone', async () => {
    await writeHours();
    const cache = new SqliteKpiCache(path());
    const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    expect(await builder.sync('netflow')).toEqual({ built: fixtures.length, upToDate: 0, dropped: 0, failed: 0 });
    expect(await builder.sync('netflow')).toEqual({ built: 0, upToDate: fixtures.length, dropped: 0, failed: 0 });
    // A stale entry (another file size) is rebuilt.
    const [first] = cache.hours('netflow', H1, H1 + 1);
    cache.put({ ...first!, fileSize: first!.fileSize + 1, flows: 1, protocols: [], levels: { src: [], dst: [], port: [] } });
    expect(await builder.sync('netflow')).toMatchObject({ built: 1 });
    expect(cache.hours('netflow', H1, H1 + 1)[0]!.flows).toBe(nfdumpReference(fixtures[0]!).totals.flows);
    cache.close();
  });

  it('drops the hours retention removes, through its expiry listener and through sync', async () => {
    await writeHours();
    const cache = new SqliteKpiCache(path());
    const builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    await builder.sync('netflow');
    const retention = new CaptureRetention({ dataDir: dir, timezone: 'UTC', maxAgeHours: fixtures.length, now: () => clock });
    retention.onExpired((e) => builder.expire(e.source, e.hourStart));
    const removed = retention.runOnce();
    expect(removed.length).toBeGreaterThan(0);
    const left = cache.hours('netflow', 0, Number.MAX_SAFE_INTEGER).map((h) => h.hourStart);
    for (const r of removed) expect(left).not.toContain(r.hourStart);
    expect(left.length).toBe(fixtures.length - removed.length);
    // A file removed behind netsvc's back is dropped by the next sync.
    unlinkSync(join(dir, 'flows', 'netflow', 'nfcapd.202603251100'));
    expect(await builder.sync('netflow')).toMatchObject({ dropped: 1 });
    cache.close();
  });
});
