import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listCaptureFiles, newReadStats } from '../../../storage/capture/reader.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { cachedSeries, cachedTopN, type CacheWindow } from '../../../storage/flow-query/cached-answers.js';
import { parseDimensions } from '../../../storage/flow-query/dimensions.js';
import type { RowFilter } from '../../../storage/flow-query/match-scan.js';
import { series, type StepName } from '../../../storage/flow-query/series.js';
import { topN, type Metric } from '../../../storage/flow-query/top-n.js';
import { KpiBuilder } from '../../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { randomFlows } from '../capture/flows.js';

const HOUR = 3_600_000;
const MIN = 60_000;
const H9 = Date.UTC(2026, 2, 25, 9);
const SOURCE = 'netflow';

const MINUTE_DIMS = ['proto', 'tos', 'exporter', 'input_if', 'output_if'];
const METRICS: Metric[] = ['bytes', 'packets', 'flows'];
const STEPS: StepName[] = ['1m', '5m', '1h'];

describe('series and top-N from the KPI cache', () => {
  let dir: string;
  let cache: SqliteKpiCache;
  let builder: KpiBuilder;
  const dbPath = (): string => join(dir, 'kpi.sqlite');
  const files = () => listCaptureFiles(dir, SOURCE, 'UTC');
  const win = (from: number, to: number): CacheWindow & { stats: ReturnType<typeof newReadStats> } => ({
    files: files(),
    from,
    to,
    stats: newReadStats(),
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-fqc-'));
    let clock = H9;
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 512, timer: false, now: () => clock });
    await writer.start();
    // Three hours, received times not on minute boundaries; a few repeated sources so groups hold several flows,
    // and many destination ports with one or two flows each, so that ties are settled by key.
    const n = 9000;
    const batch = randomFlows(n, { received: H9 + 17, stepMs: (3 * HOUR - 40) / n, seed: 11 });
    for (let i = 0; i < n; i += 3) {
      const from = ((i * 7) % 40) * 16;
      batch.srcAddr.set(batch.srcAddr.subarray(from, from + 16), i * 16);
      batch.cols.ipVersion[i] = batch.cols.ipVersion[(i * 7) % 40]!;
      batch.cols.dstPort[i + 1] = 1000 + ((i * 13) % 4001);
    }
    writer.write(SOURCE, batch);
    clock = H9 + 4 * HOUR;
    await writer.close();
    cache = new SqliteKpiCache(dbPath());
    builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    expect(await builder.sync(SOURCE)).toMatchObject({ built: 3, failed: 0 });
  });
  afterEach(() => {
    cache.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const windows = [
    { name: 'three whole hours', from: H9, to: H9 + 3 * HOUR },
    { name: 'minutes 7 of the first hour to 23 of the third', from: H9 + 7 * MIN, to: H9 + 2 * HOUR + 23 * MIN },
    { name: 'a window wider than the files', from: H9 - 2 * HOUR, to: H9 + 5 * HOUR },
  ];

  for (const w of windows) {
    it(`answers every series exactly as the files do (${w.name})`, async () => {
      let k = 0;
      for (const step of STEPS) {
        for (const dim of ['', ...MINUTE_DIMS]) {
          const metric = METRICS[k++ % 3]!;
          const query = { dims: dim ? parseDimensions(dim) : [], metric, n: 3, step };
          const raw = await series(win(w.from, w.to), query);
          const cached = await cachedSeries(cache, SOURCE, win(w.from, w.to), query);
          expect(cached, `${step} ${dim || 'total'} ${metric}`).toEqual(raw);
          // The steps of every line and `other` add up to the window's total.
          const total = (await topN(win(w.from, w.to), parseDimensions('proto'), metric, 1)).total[metric];
          const sum = [...cached!.lines.flatMap((l) => l.values), ...cached!.other].reduce((a, b) => a + b, 0);
          expect(dim ? sum : cached!.total.reduce((a, b) => a + b, 0)).toBe(total);
          expect(cached!.total.reduce((a, b) => a + b, 0)).toBe(total);
        }
      }
    });

    it(`answers top-N by a minute dimension exactly as the files do (${w.name})`, async () => {
      let k = 0;
      for (const dim of MINUTE_DIMS) {
        for (const n of [1, 3, 100]) {
          const metric = METRICS[k++ % 3]!;
          const raw = await topN(win(w.from, w.to), parseDimensions(dim), metric, n);
          expect(
            await cachedTopN(cache, SOURCE, win(w.from, w.to), { dims: parseDimensions(dim), metric, n }),
            `${dim} ${n}`,
          ).toEqual(raw);
        }
      }
    });
  }

  it('answers top-N by src_ip, dst_ip and dst_port over whole cached hours exactly as the files do', async () => {
    for (const [from, to] of [
      [H9, H9 + 3 * HOUR],
      [H9 + HOUR, H9 + 2 * HOUR],
      [H9 - HOUR, H9 + 4 * HOUR],
    ] as const) {
      for (const dim of ['src_ip', 'dst_ip', 'dst_port']) {
        for (const metric of METRICS) {
          for (const n of [1, 10, 20_000]) {
            const raw = await topN(win(from, to), parseDimensions(dim), metric, n);
            const cached = await cachedTopN(cache, SOURCE, win(from, to), { dims: parseDimensions(dim), metric, n });
            expect(cached, `${dim} ${metric} ${n}`).toEqual(raw);
          }
        }
      }
    }
    // Repeated sources rank above single flows: the top rows are not all ties.
    const top = await cachedTopN(cache, SOURCE, win(H9, H9 + 3 * HOUR), {
      dims: parseDimensions('src_ip'),
      metric: 'flows',
      n: 5,
    });
    expect(top!.rows[0]!.flows).toBeGreaterThan(1);
  });

  it('leaves to the files what the cache cannot answer', async () => {
    const all = win(H9, H9 + 3 * HOUR);
    const q = { metric: 'bytes' as const, n: 5 };
    const filter: RowFilter = { columns: [], block: () => 'all', select: () => 0 };
    expect(await cachedTopN(cache, SOURCE, { ...all, filter }, { ...q, dims: parseDimensions('proto') })).toBeUndefined();
    expect(await cachedSeries(cache, SOURCE, { ...all, filter }, { ...q, dims: [], step: '5m' })).toBeUndefined();
    // Not cut on whole minutes.
    expect(await cachedSeries(cache, SOURCE, win(H9 + 1, H9 + HOUR), { ...q, dims: [], step: '5m' })).toBeUndefined();
    // Dimensions not counted per minute, several dimensions, an address prefix.
    for (const dims of ['src_port', 'proto,tos', 'src_ip/24', 'exporter/24', 'src_as']) {
      expect(await cachedTopN(cache, SOURCE, all, { ...q, dims: parseDimensions(dims) }), dims).toBeUndefined();
    }
    for (const dims of ['src_ip', 'dst_port', 'proto,tos']) {
      expect(await cachedSeries(cache, SOURCE, all, { ...q, dims: parseDimensions(dims), step: '1h' }), dims).toBeUndefined();
    }
    // Rankings of whole hours answer no window that cuts an hour.
    expect(await cachedTopN(cache, SOURCE, win(H9, H9 + 90 * MIN), { ...q, dims: parseDimensions('src_ip') })).toBeUndefined();
    expect(
      await cachedTopN(cache, SOURCE, win(H9 + MIN, H9 + HOUR), { ...q, dims: parseDimensions('dst_port') }),
    ).toBeUndefined();
    // An hour not in the cache: its file is scanned for minute counters, not for rankings.
    cache.drop(SOURCE, H9 + HOUR);
    expect(await cachedTopN(cache, SOURCE, all, { ...q, dims: parseDimensions('src_ip') })).toBeUndefined();
    expect(await cachedTopN(cache, SOURCE, all, { ...q, dims: parseDimensions('dst_port') })).toBeUndefined();
    const stats = newReadStats();
    expect(await cachedSeries(cache, SOURCE, { ...all, stats }, { ...q, dims: parseDimensions('tos'), step: '5m' })).toEqual(
      await series(win(H9, H9 + 3 * HOUR), { ...q, dims: parseDimensions('tos'), step: '5m' }),
    );
    expect(stats.filesOpened).toBe(1);
    // No hour cached: the engine's own scan answers.
    for (const h of [H9, H9 + 2 * HOUR]) cache.drop(SOURCE, h);
    expect(await cachedSeries(cache, SOURCE, all, { ...q, dims: [], step: '5m' })).toBeUndefined();
  });

  it('scans, instead of taking from the cache, an hour whose file changed after it was cached', async () => {
    const q = { dims: parseDimensions('proto'), metric: 'flows' as const, n: 3, step: '5m' as const };
    const stats = newReadStats();
    expect(await cachedSeries(cache, SOURCE, { ...win(H9, H9 + 3 * HOUR), stats }, q)).toBeDefined();
    expect(stats.filesOpened).toBe(0);
    // The middle hour's file gets another size: a scan now finds it damaged and skips it, and so must the answer.
    appendFileSync(files()[1]!.path, Buffer.alloc(1));
    const mixed = await cachedSeries(cache, SOURCE, { ...win(H9, H9 + 3 * HOUR), stats }, q);
    expect(stats.filesOpened + stats.corruptFiles).toBeGreaterThan(0);
    expect(mixed).toEqual(await series(win(H9, H9 + 3 * HOUR), q));
    expect(await cachedTopN(cache, SOURCE, win(H9, H9 + 3 * HOUR), { ...q, dims: parseDimensions('src_ip') })).toBeUndefined();
  });

  it('answers a window ending in the open hour from the cached hours and a scan of the open file', async () => {
    // A fourth hour, still open.
    let clock = H9 + 3 * HOUR;
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 512, timer: false, now: () => clock });
    await writer.start();
    writer.write(SOURCE, randomFlows(2000, { received: H9 + 3 * HOUR + 5, stepMs: 997, seed: 3 }));
    clock = H9 + 3 * HOUR + 40 * MIN;
    writer.flush();
    expect(files().map((f) => f.kind)).toEqual(['sealed', 'sealed', 'sealed', 'current']);
    for (const dim of ['', ...MINUTE_DIMS]) {
      const q = { dims: dim ? parseDimensions(dim) : [], metric: 'bytes' as const, n: 2, step: '5m' as const };
      const stats = newReadStats();
      const cached = await cachedSeries(cache, SOURCE, { ...win(H9 + 30 * MIN, H9 + 4 * HOUR), stats }, q);
      expect(cached, dim).toEqual(await series(win(H9 + 30 * MIN, H9 + 4 * HOUR), q));
      expect(stats.filesOpened).toBe(1);
      if (dim) {
        expect(await cachedTopN(cache, SOURCE, win(H9 + 30 * MIN, H9 + 4 * HOUR), q)).toEqual(
          await topN(win(H9 + 30 * MIN, H9 + 4 * HOUR), q.dims, 'bytes', 2),
        );
      }
    }
    await writer.close();
  });

  it('rebuilds a cache of the previous schema version, minute counters included', async () => {
    cache.close();
    // A version 1 cache: its hours, no minute counters.
    const db = new Database(dbPath());
    db.exec(`DELETE FROM kpi_minute; UPDATE kpi_meta SET value = '1' WHERE key = 'schema'`);
    db.close();
    cache = new SqliteKpiCache(dbPath());
    expect(cache.hours(SOURCE, 0, Number.MAX_SAFE_INTEGER)).toEqual([]);
    const q = { dims: parseDimensions('input_if'), metric: 'bytes' as const, n: 4, step: '1m' as const };
    expect(await cachedSeries(cache, SOURCE, win(H9, H9 + 3 * HOUR), q)).toBeUndefined();
    builder = new KpiBuilder({ cache, dataDir: dir, timezone: 'UTC' });
    expect(await builder.sync(SOURCE)).toMatchObject({ built: 3, failed: 0 });
    expect(await cachedSeries(cache, SOURCE, win(H9, H9 + 3 * HOUR), q)).toEqual(await series(win(H9, H9 + 3 * HOUR), q));
  });
});
