/**
 * KPI and API rows of the storage benchmark (called by bench/storage.ts on
 * the hour it wrote). Every figure goes through the netflow routes in process
 * (parameter parsing, query service, formatting, JSON), without sockets:
 *
 *   - kpi of the live hour: the writer's open-hour aggregates (rebuilt here
 *     from the hour's file, the same structure the writer keeps current);
 *   - kpi of the hour with neither cache nor aggregates (scan of the file);
 *   - building the hour's KPI cache entry (what runs when an hour is sealed);
 *   - kpi over 24 cached hours (the hour's entry stored under 24 hours, its
 *     file hard-linked under their names);
 *   - flows, newest 200 of the hour.
 * nfdump's side: the three `-s` top lists in one call, on one file and on the
 * 24 links of it, and newest flows of the last minute (`-t … -O tstart`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createNetflowRoutes } from '../api/routes/netflow.js';
import { createRouter } from '../api/router.js';
import { aggregateFiles as captureAggregates } from '../storage/capture/aggregate.js';
import { sealedName, sourceDir } from '../storage/capture/file-names.js';
import { listCaptureFiles } from '../storage/capture/reader.js';
import type { ReverseDns } from '../storage/dns/reverse-dns.js';
import { CaptureNetflowQuery } from '../storage/kpi/capture-netflow-query.js';
import { aggregateFiles, hourEntry } from '../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../storage/kpi/sqlite-kpi-cache.js';
import { fmt, median } from './lib.js';

/** One table row. */
export interface KpiRow {
  label: string;
  netsvc: string;
  nfdump: string;
  ratio: string;
}

/** nfdump's figures for the same hour, measured by the caller. */
export interface NfdumpHour {
  /** The nfcapd file of the hour. */
  file: string;
  /** ms for `-s srcip/bytes -s dstip/bytes -s dstport/flows -n 10` in one call. */
  tops: number;
  /** ms for the newest flows of the last minute. */
  newest: number;
}

const HOUR_MS = 3_600_000;

async function timeAsync(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = performance.now();
    await fn();
    t.push(performance.now() - a);
  }
  return median(t);
}

const minute = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace(/-/g, '/').replace('T', ' ');

const noDns: ReverseDns = { resolve: async (ips) => new Map(ips.map((ip) => [ip, ''])), peek: () => '', close: () => undefined };

/** Measures the KPI/API rows on the sealed hour `hourStart` of source `netflow` under `work`. */
export async function kpiRows(work: string, hourStart: number, nf?: NfdumpHour): Promise<KpiRow[]> {
  const rows: KpiRow[] = [];
  const files = listCaptureFiles(work, 'netflow', 'UTC').filter((f) => f.hourStart === hourStart);
  const file = files[0];
  if (!file) throw new Error('no sealed hour to measure');
  const cache = new SqliteKpiCache(join(work, 'kpi-bench.sqlite'));
  let live: ReturnType<typeof captureAggregates> | undefined;
  const query = new CaptureNetflowQuery({
    dataDir: work,
    timezone: 'UTC',
    sources: ['netflow'],
    cache,
    openHour: (_s, h) => (h === hourStart ? live : undefined),
    now: () => hourStart + 25 * HOUR_MS,
  });
  const app = createRouter();
  app.use('*', async (c, next) => {
    c.set('principal', { user: 'bench', entity: 'bench', area: 'netflow' });
    await next();
  });
  app.route('/', createNetflowRoutes({ query, dns: noDns, timezone: 'UTC', sourcesOf: () => ['netflow'] }));
  const get = async (path: string): Promise<unknown> => {
    const res = await app.request(path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const oneHour = `start=${encodeURIComponent(minute(hourStart))}&end=${encodeURIComponent(minute(hourStart + HOUR_MS - 60_000))}`;
  const ratio = (ours: number, theirs: number | undefined): string => (theirs === undefined ? '' : `${fmt(theirs / ours, 1)}×`);

  // The live hour: the writer keeps these aggregates current as blocks reach the file.
  live = captureAggregates(files);
  const liveMs = await timeAsync(5, () => get(`/kpi?${oneHour}`));
  rows.push({
    label: 'API kpi, live hour (open-hour aggregates), ms',
    netsvc: fmt(liveMs, 1),
    nfdump: nf ? `${fmt(nf.tops, 0)} (3 × -s, one call)` : '',
    ratio: nf ? ratio(liveMs, nf.tops) : '',
  });
  live = undefined;

  const scanMs = await timeAsync(1, () => get(`/kpi?${oneHour}`));
  rows.push({
    label: 'API kpi, hour scanned from its file (no cache), ms',
    netsvc: fmt(scanMs, 0),
    nfdump: '',
    ratio: nf ? ratio(scanMs, nf.tops) : '',
  });

  let entry: ReturnType<typeof hourEntry> | undefined;
  const buildMs = await timeAsync(1, async () => {
    entry = hourEntry(file, await aggregateFiles([file]));
    cache.put(entry);
  });
  rows.push({
    label: 'KPI cache entry of a sealed hour (scan + levels + SQLite), ms',
    netsvc: fmt(buildMs, 0),
    nfdump: '',
    ratio: '',
  });
  // Size of one hour in the cache (WAL included), per flow of the hour.
  const dbBytes = ['', '-wal'].reduce(
    (sum, suffix) =>
      sum + (existsSync(join(work, `kpi-bench.sqlite${suffix}`)) ? statSync(join(work, `kpi-bench.sqlite${suffix}`)).size : 0),
    0,
  );
  rows.push({
    label: 'KPI cache, one hour (complete per-key tables), B/flow',
    netsvc: fmt(dbBytes / entry!.flows, 2),
    nfdump: '',
    ratio: '',
  });

  // 24 cached hours: the same hour under 24 hour starts, its file hard-linked under each name.
  const dir = sourceDir(work, 'netflow');
  const first = hourStart - 23 * HOUR_MS;
  for (let k = 1; k < 24; k++) {
    const h = hourStart - k * HOUR_MS;
    const name = sealedName(h, 'UTC');
    linkSync(file.path, join(dir, name));
    cache.put({ ...entry!, hourStart: h, file: name });
  }
  const day = `start=${encodeURIComponent(minute(first))}&end=${encodeURIComponent(minute(hourStart + HOUR_MS - 60_000))}`;
  const dayResult = (await get(`/kpi?${day}`)) as { result: { meta: { source: string } } };
  if (dayResult.result.meta.source !== 'hourly_cache') throw new Error('24 hours were not served from the cache');
  const dayMs = await timeAsync(9, () => get(`/kpi?${day}`));
  let nfDay: number | undefined;
  if (nf) {
    const links = join(work, 'nfcapd-24h');
    mkdirSync(links, { recursive: true });
    for (let k = 0; k < 24; k++) linkSync(nf.file, join(links, `nfcapd.${String(k).padStart(12, '0')}`));
    const t = performance.now();
    spawnSync('nfdump', ['-R', links, '-q', '-n', '10', '-s', 'srcip/bytes', '-s', 'dstip/bytes', '-s', 'dstport/flows'], {
      stdio: 'ignore',
    });
    nfDay = performance.now() - t;
  }
  rows.push({
    label: 'API kpi, 24 cached hours, ms',
    netsvc: fmt(dayMs, 1),
    nfdump: nfDay ? `${fmt(nfDay, 0)} (3 × -s, -R 24 files)` : '',
    ratio: nfDay ? ratio(dayMs, nfDay) : '',
  });

  const flowsMs = await timeAsync(7, () => get(`/flows?${oneHour}&limit=200`));
  rows.push({
    label: 'API flows, newest 200 of the hour, ms',
    netsvc: fmt(flowsMs, 1),
    nfdump: nf ? `${fmt(nf.newest, 0)} (-t last minute -O tstart)` : '',
    ratio: nf ? ratio(flowsMs, nf.newest) : '',
  });
  cache.close();
  return rows;
}
